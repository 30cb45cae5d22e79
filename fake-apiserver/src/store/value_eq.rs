//! Equality of JSON objects, fast for the common case.
//!
//! Every write compares the object with what is stored (did anything change? did the spec?).
//! A `serde_json::Map` lists its keys in order (see `vendor/README.md`: the vendored map compares
//! keys and strings without a `memcmp` call when they are short), so two maps are compared by
//! walking both side by side; a comparison of some of the keys ([`maps_equal_where`]) does the
//! same on the keys it keeps, and falls back to lookups when the walks part, so that its answer
//! never depends on the order a map lists its keys in.

use serde_json::{Map, Value};

/// `a == b` (kept as the one name the write path compares values by).
pub fn equal(a: &Value, b: &Value) -> bool {
    a == b
}

/// Whether two maps agree on every key `keep` selects (key order does not matter).
pub fn maps_equal_where(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    keep: impl Fn(&str) -> bool,
) -> bool {
    let mut left = a.iter().filter(|(k, _)| keep(k));
    let mut right = b.iter().filter(|(k, _)| keep(k));
    loop {
        match (left.next(), right.next()) {
            (None, None) => return true,
            (Some((ka, va)), Some((kb, vb))) if ka == kb => {
                if !equal(va, vb) {
                    return false;
                }
            }
            // A different count, or another order: compare by lookup.
            _ => return maps_equal_by_lookup(a, b, &keep),
        }
    }
}

fn maps_equal_by_lookup(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    keep: &impl Fn(&str) -> bool,
) -> bool {
    let selected = |m: &Map<String, Value>| m.keys().filter(|k| keep(k)).count();
    selected(a) == selected(b)
        && a.iter()
            .filter(|(k, _)| keep(k))
            .all(|(k, v)| b.get(k).is_some_and(|w| equal(v, w)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::same_order(json!({"a": 1, "b": [1, {"c": 2}]}), json!({"a": 1, "b": [1, {"c": 2}]}))]
    #[case::other_order(json!({"a": 1, "b": {"x": 1, "y": 2}}), json!({"b": {"y": 2, "x": 1}, "a": 1}))]
    #[case::value_differs(json!({"a": 1, "b": 2}), json!({"a": 1, "b": 3}))]
    #[case::deep_difference(json!({"a": [{"b": 1}]}), json!({"a": [{"b": 2}]}))]
    #[case::extra_key(json!({"a": 1}), json!({"a": 1, "b": 2}))]
    #[case::other_order_and_differs(json!({"a": 1, "b": 2}), json!({"b": 2, "a": 9}))]
    #[case::array_order_matters(json!([1, 2]), json!([2, 1]))]
    #[case::null_is_not_missing(json!({"a": null}), json!({}))]
    #[case::scalars(json!("x"), json!("x"))]
    fn agrees_with_serde_json(#[case] a: Value, #[case] b: Value) {
        assert_eq!(equal(&a, &b), a == b);
        assert_eq!(equal(&b, &a), a == b);
    }

    #[test]
    fn keys_left_out_do_not_count() {
        let a = json!({"spec": 1, "status": 1, "metadata": {}});
        let b = json!({"metadata": {}, "spec": 1, "status": 2});
        let (a, b) = (a.as_object().unwrap(), b.as_object().unwrap());
        assert!(maps_equal_where(a, b, |k| k != "status"));
        assert!(!maps_equal_where(a, b, |_| true));
    }
}
