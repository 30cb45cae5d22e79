//! A bounded cache of parsed stored objects.
//!
//! The store keeps objects as bytes (compact, and what reads send as is), but every write needs
//! the current object parsed. Controllers mostly write objects they wrote a moment ago (create,
//! then status; update after update), so the store keeps the parsed form of the objects written
//! last and a write to one of them skips parsing it again. An entry is only used while the bytes
//! it was made from are the stored bytes, so a stale entry can never be served.
//!
//! Beside the parse an entry may keep what an upper layer derived from the same version of the
//! object ([`Derived`]: the apply layer keeps the decoded field sets of its `managedFields`), so
//! that the next write does not derive it again. The store never looks inside it.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

/// How many parsed objects are kept. A 4.5 KiB pod is ~15 KiB parsed, so this bounds the cache
/// near 15 MiB whatever the store holds.
pub const CAPACITY: usize = 1024;

/// What an upper layer derived from one stored version of an object, kept with its parse.
pub type Derived = Arc<dyn Any + Send + Sync>;

/// One parsed object and the stored bytes it is the parse of.
struct Entry {
    /// Kept so that the allocation (whose address identifies the stored version) stays alive.
    bytes: Bytes,
    value: Arc<Value>,
    derived: Option<Derived>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("bytes", &self.bytes.len())
            .field("derived", &self.derived.is_some())
            .finish()
    }
}

/// resource key → (namespace, name) → parsed object.
#[derive(Debug, Default)]
pub struct ParsedCache {
    entries: BTreeMap<String, BTreeMap<(String, String), Entry>>,
    len: usize,
}

impl ParsedCache {
    /// The parsed form of `bytes`, the stored version of `key`, if it is cached, with what was
    /// derived from it, if anything.
    pub fn get_with_derived(
        &self,
        resource: &str,
        key: &(String, String),
        bytes: &Bytes,
    ) -> Option<(Arc<Value>, Option<Derived>)> {
        let entry = self.entries.get(resource)?.get(key)?;
        same_allocation(&entry.bytes, bytes).then(|| (entry.value.clone(), entry.derived.clone()))
    }

    /// Remembers that `value` is the parse of `bytes`, now stored for `key`, and `derived` what
    /// was derived from it. When the cache is full it starts over: the objects written from then
    /// on are the ones worth keeping.
    pub fn insert(
        &mut self,
        resource: &str,
        key: (String, String),
        bytes: Bytes,
        value: Arc<Value>,
        derived: Option<Derived>,
    ) {
        if self.len >= CAPACITY {
            self.clear();
        }
        let previous = self
            .entries
            .entry(resource.to_string())
            .or_default()
            .insert(
                key,
                Entry {
                    bytes,
                    value,
                    derived,
                },
            );
        if previous.is_none() {
            self.len += 1;
        }
    }

    /// Forgets `key` (the object is gone).
    pub fn remove(&mut self, resource: &str, key: &(String, String)) {
        if let Some(objects) = self.entries.get_mut(resource) {
            if objects.remove(key).is_some() {
                self.len -= 1;
            }
        }
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.len = 0;
    }

    /// How many objects are cached.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }
}

/// Whether two `Bytes` are views of the same stored buffer. The cache holds its `Bytes`, so the
/// allocation cannot be freed and reused for another object while the entry exists.
fn same_allocation(a: &Bytes, b: &Bytes) -> bool {
    a.as_ptr() == b.as_ptr() && a.len() == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    impl ParsedCache {
        fn get(&self, resource: &str, key: &(String, String), bytes: &Bytes) -> Option<Arc<Value>> {
            self.get_with_derived(resource, key, bytes)
                .map(|(value, _)| value)
        }
    }

    fn key(name: &str) -> (String, String) {
        ("ns".to_string(), name.to_string())
    }

    #[test]
    fn an_entry_serves_only_the_bytes_it_was_made_from() {
        let mut cache = ParsedCache::default();
        let stored = Bytes::from_static(br#"{"a":1}"#);
        cache.insert(
            "/cm",
            key("x"),
            stored.clone(),
            Arc::new(json!({"a": 1})),
            Some(Arc::new(7u8)),
        );
        let (_, derived) = cache.get_with_derived("/cm", &key("x"), &stored).unwrap();
        assert_eq!(
            derived.and_then(|d| d.downcast::<u8>().ok()).as_deref(),
            Some(&7)
        );
        assert_eq!(
            cache.get("/cm", &key("x"), &stored).as_deref(),
            Some(&json!({"a": 1}))
        );
        // Equal content in another buffer is another stored version: not served.
        let rewritten = Bytes::copy_from_slice(br#"{"a":1}"#);
        assert!(cache.get("/cm", &key("x"), &rewritten).is_none());
        assert!(cache.get("/cm", &key("y"), &stored).is_none());
        assert!(cache.get("/other", &key("x"), &stored).is_none());
    }

    #[test]
    fn a_full_cache_starts_over_and_removal_forgets() {
        let mut cache = ParsedCache::default();
        for i in 0..CAPACITY {
            let b = Bytes::from(format!("{i}"));
            cache.insert("/cm", key(&i.to_string()), b, Arc::new(json!(i)), None);
        }
        assert_eq!(cache.len(), CAPACITY);
        let b = Bytes::from_static(b"new");
        cache.insert("/cm", key("new"), b.clone(), Arc::new(json!("new")), None);
        assert_eq!(cache.len(), 1);
        assert!(cache.get("/cm", &key("new"), &b).is_some());
        cache.remove("/cm", &key("new"));
        assert_eq!(cache.len(), 0);
        assert!(cache.get("/cm", &key("new"), &b).is_none());
    }
}
