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

/// Makes `new` share with `old` every map the two hold equal at the same path, and says
/// whether the two are equal. Afterwards a map of `new` equal to `old`'s at its position *is*
/// `old`'s (a clone sharing its entries, see `vendor/README.md`), so whatever later compares
/// `new` with `old`, or looks only at what `new` changed (the decode, the field manager, the
/// no-op test), finds those parts equal without a walk. Nothing in `new` changes but where
/// its maps live: a map is taken over only when equal (same keys, equal values, numbers of the
/// same representation).
pub fn share_equal_parts(new: &mut Value, old: &Value) -> bool {
    match (new, old) {
        (Value::Object(new), Value::Object(old)) => {
            if new.shares_entries(old) {
                return true;
            }
            let mut equal = new.len() == old.len();
            for (key, value) in new.iter_mut() {
                match old.get(key) {
                    // Every member is visited, equal or not: a changed map still takes over
                    // its equal parts.
                    Some(known) => equal &= share_equal_parts(value, known),
                    None => equal = false,
                }
            }
            if equal {
                *new = old.clone();
            }
            equal
        }
        (Value::Array(new), Value::Array(old)) => {
            let mut equal = new.len() == old.len();
            for (value, known) in new.iter_mut().zip(old) {
                equal &= share_equal_parts(value, known);
            }
            equal
        }
        (new, old) => *new == *old,
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

    #[rstest]
    #[case::equal(json!({"a": {"b": [{"c": 1}]}, "d": "x"}), json!({"a": {"b": [{"c": 1}]}, "d": "x"}))]
    #[case::one_leaf_differs(json!({"a": {"b": 1}, "c": {"d": 1}}), json!({"a": {"b": 2}, "c": {"d": 1}}))]
    #[case::extra_key(json!({"a": {"b": 1}, "c": 1}), json!({"a": {"b": 1}}))]
    #[case::missing_key(json!({"a": {"b": 1}}), json!({"a": {"b": 1}, "c": 1}))]
    #[case::number_representation(json!({"a": {"b": 1}}), json!({"a": {"b": 1.0}}))]
    #[case::array_lengths(json!({"a": [{"b": 1}, {"c": 2}]}), json!({"a": [{"b": 1}]}))]
    #[case::null_is_not_missing(json!({"a": {"b": null}}), json!({"a": {}}))]
    #[case::other_kinds(json!({"a": {"b": 1}}), json!({"a": [1]}))]
    fn sharing_equal_parts_changes_nothing_and_shares_every_equal_map(
        #[case] new: Value,
        #[case] old: Value,
    ) {
        let mut shared = new.clone();
        let equal = share_equal_parts(&mut shared, &old);
        assert_eq!(equal, new == old);
        assert_eq!(shared, new, "the content is what it was");
        // Every map left equal to the old one at its position is the old one's.
        fn check(new: &Value, old: &Value) {
            match (new, old) {
                (Value::Object(n), Value::Object(o)) => {
                    assert_eq!(n.shares_entries(o), n == o, "{n:?} / {o:?}");
                    for (k, v) in n {
                        if let Some(w) = o.get(k) {
                            check(v, w);
                        }
                    }
                }
                (Value::Array(n), Value::Array(o)) => {
                    n.iter().zip(o).for_each(|(v, w)| check(v, w));
                }
                _ => {}
            }
        }
        check(&shared, &old);
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
