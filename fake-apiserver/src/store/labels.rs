//! The store's label index: for the label keys that lists have selected on by equality, which
//! objects of a resource carry each value.
//!
//! A real server's watch cache indexes only the labels a resource is configured with
//! (`IndexLabels`); this one indexes a label key the first time a list selects on it (one read
//! of the resource's objects), and keeps it from then on. A store that nobody lists by label
//! pays nothing for it: neither memory per object nor work per write.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value;

/// How many label keys of one resource are indexed at most. A list by another key reads every
/// object of the resource, as before the index: the bound keeps a client that selects on ever
/// new keys from growing the index without end.
pub(super) const MAX_INDEXED_KEYS: usize = 16;

use super::key::ObjectKey;

/// One resource's label index.
#[derive(Debug, Default)]
pub(super) struct LabelIndex {
    /// The label keys indexed.
    keys: BTreeSet<String>,
    /// `(label key, label value)` → the objects carrying that label, for the indexed keys only.
    entries: BTreeMap<(String, String), BTreeSet<ObjectKey>>,
}

impl LabelIndex {
    /// Whether `key` is indexed.
    pub(super) fn indexes(&self, key: &str) -> bool {
        self.keys.contains(key)
    }

    /// Whether another key may be indexed.
    pub(super) fn has_room(&self) -> bool {
        self.keys.len() < MAX_INDEXED_KEYS
    }

    /// Starts indexing `key`, with `objects` (every object of the resource, as stored bytes).
    pub(super) fn add_key<'a>(
        &mut self,
        key: &str,
        objects: impl IntoIterator<Item = (&'a ObjectKey, &'a [u8])>,
    ) {
        if !self.keys.insert(key.to_string()) {
            return;
        }
        for (object, bytes) in objects {
            if let Some(value) = label_of_bytes(bytes, key) {
                self.entries
                    .entry((key.to_string(), value))
                    .or_default()
                    .insert(object.clone());
            }
        }
    }

    /// The objects carrying `label` (`(key, value)`), in key order; `None` if its key is not
    /// indexed.
    pub(super) fn get(&self, label: (&str, &str)) -> Option<Option<&BTreeSet<ObjectKey>>> {
        if !self.indexes(label.0) {
            return None;
        }
        Some(
            self.entries
                .get(&(label.0.to_string(), label.1.to_string())),
        )
    }

    /// Moves `object` from the indexed labels of `old` to those of `new` (either absent: not
    /// stored before / no longer stored).
    pub(super) fn reindex(
        &mut self,
        object: &(String, String),
        old: Option<&Value>,
        new: Option<&Value>,
    ) {
        let (old, new) = (self.indexed(old), self.indexed(new));
        if old == new {
            return;
        }
        let pair = |(k, v): &(&str, &str)| (k.to_string(), v.to_string());
        super::move_in_index(&mut self.entries, &old, &new, pair, || {
            ObjectKey::new(object.clone())
        });
    }
}

impl LabelIndex {
    /// The string-valued labels of `object` whose keys are indexed.
    fn indexed<'v>(&self, object: Option<&'v Value>) -> Vec<(&'v str, &'v str)> {
        let mut pairs = object.map(label_pairs).unwrap_or_default();
        pairs.retain(|(k, _)| self.keys.contains(*k));
        pairs
    }
}

/// The string-valued labels of an object (`metadata.labels`): no other value can equal a
/// selector's.
fn label_pairs(object: &Value) -> Vec<(&str, &str)> {
    object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// The string value of label `key` of the stored object `bytes`, read without building the
/// object: what [`label_pairs`] of its parse would hold for `key`.
pub(super) fn label_of_bytes(bytes: &[u8], key: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Object {
        #[serde(default)]
        metadata: Option<Metadata>,
    }
    #[derive(Deserialize)]
    struct Metadata {
        #[serde(default)]
        labels: Option<BTreeMap<String, Value>>,
    }
    let object: Object = serde_json::from_slice(bytes).ok()?;
    let mut labels = object.metadata?.labels?;
    match labels.remove(key)? {
        Value::String(value) => Some(value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    /// The byte reader agrees with the parse for every shape `metadata.labels` can take.
    #[rstest]
    #[case(json!({"metadata": {"labels": {"app": "web"}}}), Some("web"))]
    #[case(json!({"metadata": {"labels": {"app": 3}}}), None)]
    #[case(json!({"metadata": {"labels": {"app": null}}}), None)]
    #[case(json!({"metadata": {"labels": {"other": "web"}}}), None)]
    #[case(json!({"metadata": {"labels": null}}), None)]
    #[case(json!({"metadata": {}}), None)]
    #[case(json!({"metadata": null}), None)]
    #[case(json!({"kind": "Pod"}), None)]
    fn the_byte_reader_agrees_with_the_parse(#[case] object: Value, #[case] want: Option<&str>) {
        let parsed = label_pairs(&object)
            .into_iter()
            .find(|(k, _)| *k == "app")
            .map(|(_, v)| v);
        assert_eq!(parsed, want);
        let bytes = serde_json::to_vec(&object).unwrap();
        assert_eq!(label_of_bytes(&bytes, "app").as_deref(), want);
    }

    #[test]
    fn only_indexed_keys_are_kept() {
        let mut index = LabelIndex::default();
        let a = ("ns".to_string(), "a".to_string());
        let object = json!({"metadata": {"labels": {"app": "web", "tier": "1"}}});
        index.reindex(&a, None, Some(&object));
        assert!(index.entries.is_empty(), "no key indexed yet");
        assert_eq!(index.get(("app", "web")), None);
        let bytes = serde_json::to_vec(&object).unwrap();
        index.add_key("app", [(&ObjectKey::new(a.clone()), bytes.as_slice())]);
        assert_eq!(
            index.get(("app", "web")).flatten().map(|s| s.len()),
            Some(1)
        );
        assert_eq!(index.get(("app", "db")), Some(None));
        assert_eq!(index.get(("tier", "1")), None);
        // Writes move the object for the indexed key only.
        let moved = json!({"metadata": {"labels": {"app": "db", "tier": "2"}}});
        index.reindex(&a, Some(&object), Some(&moved));
        assert_eq!(index.get(("app", "web")), Some(None));
        assert_eq!(index.get(("app", "db")).flatten().map(|s| s.len()), Some(1));
        assert_eq!(index.entries.len(), 1);
        index.reindex(&a, Some(&moved), None);
        assert!(index.entries.is_empty());
    }

    #[test]
    fn the_number_of_indexed_keys_is_bounded() {
        let mut index = LabelIndex::default();
        for i in 0..MAX_INDEXED_KEYS {
            assert!(index.has_room());
            index.add_key(&format!("k{i}"), []);
        }
        assert!(!index.has_room());
    }
}
