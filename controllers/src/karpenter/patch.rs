//! Patch bodies: the JSON merge patch `client.MergeFrom(stored)` computes, and the strategic merge
//! patch Registration and Initialization send to Nodes.

use serde_json::{Map, Value};

/// The RFC 7386 merge patch that turns `old` into `new` (`CreateMergePatch`): changed keys,
/// removed keys as `null`, arrays replaced whole. `None` when they are equal.
pub fn merge_diff(old: &Value, new: &Value) -> Option<Value> {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            let mut patch = Map::new();
            for (k, nv) in n {
                match o.get(k) {
                    Some(ov) => {
                        if let Some(d) = merge_diff(ov, nv) {
                            patch.insert(k.clone(), d);
                        }
                    }
                    None => {
                        patch.insert(k.clone(), nv.clone());
                    }
                }
            }
            for k in o.keys() {
                if !n.contains_key(k) {
                    patch.insert(k.clone(), Value::Null);
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        _ if old == new => None,
        _ => Some(new.clone()),
    }
}

/// Adds `metadata.resourceVersion` to a merge patch: the optimistic lock of controller-runtime's
/// `MergeFromWithOptimisticLock` (upstream 71f7aef). The server then refuses the patch with a 409
/// if the object changed since `resource_version`, instead of letting the patch's whole lists
/// (finalizers, conditions) overwrite what another writer added meanwhile (spec §6.2, §8.6).
pub fn with_optimistic_lock(mut patch: Value, resource_version: &str) -> Value {
    if let Value::Object(m) = &mut patch {
        let metadata = m
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = metadata {
            meta.insert(
                "resourceVersion".into(),
                Value::String(resource_version.into()),
            );
        }
    }
    patch
}

/// Keeps only `fields` of a JSON object (e.g. `metadata` and `spec` for the main resource,
/// `status` for the status subresource).
pub fn pick(v: &Value, fields: &[&str]) -> Value {
    let mut out = Map::new();
    if let Value::Object(m) = v {
        for f in fields {
            if let Some(x) = m.get(*f) {
                out.insert((*f).to_string(), x.clone());
            }
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::equal(json!({"a": 1}), json!({"a": 1}), None)]
    #[case::changed(json!({"a": 1, "b": 2}), json!({"a": 1, "b": 3}), Some(json!({"b": 3})))]
    #[case::added_nested(json!({"m": {"l": {"x": "1"}}}), json!({"m": {"l": {"x": "1", "y": "2"}}}), Some(json!({"m": {"l": {"y": "2"}}})))]
    #[case::removed(json!({"a": 1, "b": 2}), json!({"a": 1}), Some(json!({"b": null})))]
    #[case::array_replaced(json!({"f": ["a"]}), json!({"f": ["a", "b"]}), Some(json!({"f": ["a", "b"]})))]
    fn diffs(#[case] old: Value, #[case] new: Value, #[case] want: Option<Value>) {
        assert_eq!(merge_diff(&old, &new), want);
    }

    #[rstest]
    #[case::metadata(json!({"metadata": {"finalizers": ["f"]}}), json!({"metadata": {"finalizers": ["f"], "resourceVersion": "7"}}))]
    #[case::status_only(json!({"status": {"x": 1}}), json!({"status": {"x": 1}, "metadata": {"resourceVersion": "7"}}))]
    fn locks(#[case] patch: Value, #[case] want: Value) {
        assert_eq!(with_optimistic_lock(patch, "7"), want);
    }

    #[test]
    fn picks_fields() {
        let v = json!({"metadata": {"name": "a"}, "spec": {}, "status": {"x": 1}});
        assert_eq!(pick(&v, &["status"]), json!({"status": {"x": 1}}));
    }
}
