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
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

/// How many parsed objects are kept. A 4.5 KiB pod is ~15 KiB parsed, so this bounds the cache
/// near 15 MiB whatever the store holds.
pub const CAPACITY: usize = 1024;

/// What an upper layer derived from one stored version of an object, kept with its parse.
pub type Derived = Arc<dyn Any + Send + Sync>;

/// Where the value of each top-level member of a stored object sits in its bytes (start and
/// end, in the order of its parsed map), as the store recorded when it wrote them: a later
/// write that leaves a member as it was copies that text instead of writing it again.
pub type MemberSpans = Box<[(usize, usize)]>;

/// What [`ParsedCache::get`] finds for a stored version.
#[derive(Debug)]
pub struct Cached<'a> {
    /// Its parse.
    pub value: Arc<Value>,
    /// What was derived from it, if anything.
    pub derived: Option<Derived>,
    /// Where its members' values sit in its bytes, if the store recorded it.
    pub spans: Option<&'a [(usize, usize)]>,
}

/// One parsed object and the stored bytes it is the parse of.
struct Entry {
    /// When it was inserted (a count of insertions): tells its record in the eviction order
    /// from older records of the same key.
    stamp: u64,
    /// Kept so that the allocation (whose address identifies the stored version) stays alive.
    bytes: Bytes,
    value: Arc<Value>,
    derived: Option<Derived>,
    spans: Option<MemberSpans>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("bytes", &self.bytes.len())
            .field("derived", &self.derived.is_some())
            .finish()
    }
}

/// resource key → (namespace, name) → parsed object, and the order they were inserted in.
#[derive(Debug, Default)]
pub struct ParsedCache {
    entries: BTreeMap<String, BTreeMap<(String, String), Entry>>,
    len: usize,
    /// Insertions, oldest first: (stamp, resource, key). A record whose entry has another stamp
    /// was overtaken by a later insertion of the same key (or the entry went).
    order: VecDeque<(u64, String, (String, String))>,
    stamps: u64,
}

impl ParsedCache {
    /// The parsed form of `bytes`, the stored version of `key`, if it is cached, with what was
    /// derived from it and where its members' values sit in `bytes`, if known.
    pub fn get(&self, resource: &str, key: &(String, String), bytes: &Bytes) -> Option<Cached<'_>> {
        self.get_entry(resource, key, bytes).map(|entry| Cached {
            value: entry.value.clone(),
            derived: entry.derived.clone(),
            spans: entry.spans.as_deref(),
        })
    }

    fn get_entry(&self, resource: &str, key: &(String, String), bytes: &Bytes) -> Option<&Entry> {
        let entry = self.entries.get(resource)?.get(key)?;
        same_allocation(&entry.bytes, bytes).then_some(entry)
    }

    /// Remembers that `value` is the parse of `bytes`, now stored for `key`, `derived` what
    /// was derived from it and `spans` where its members' values sit in `bytes`. When the cache is full the entry inserted longest ago goes (one per
    /// insertion, so that no write pays for dropping the whole cache at once).
    pub fn insert(
        &mut self,
        resource: &str,
        key: (String, String),
        bytes: Bytes,
        value: Arc<Value>,
        derived: Option<Derived>,
        spans: Option<MemberSpans>,
    ) {
        self.stamps += 1;
        let stamp = self.stamps;
        self.order
            .push_back((stamp, resource.to_string(), key.clone()));
        let previous = self
            .entries
            .entry(resource.to_string())
            .or_default()
            .insert(
                key,
                Entry {
                    stamp,
                    bytes,
                    value,
                    derived,
                    spans,
                },
            );
        if previous.is_none() {
            self.len += 1;
        }
        while self.len > CAPACITY {
            self.evict_oldest();
        }
        // Records overtaken by rewrites of the same keys are dropped before they pile up.
        if self.order.len() > 2 * CAPACITY.max(self.len) {
            let entries = &self.entries;
            self.order.retain(|(stamp, resource, key)| {
                entries
                    .get(resource)
                    .and_then(|objects| objects.get(key))
                    .is_some_and(|e| e.stamp == *stamp)
            });
        }
    }

    /// Removes the entry inserted longest ago that is still cached.
    fn evict_oldest(&mut self) {
        while let Some((stamp, resource, key)) = self.order.pop_front() {
            let Some(objects) = self.entries.get_mut(&resource) else {
                continue;
            };
            if objects.get(&key).is_some_and(|e| e.stamp == stamp) {
                objects.remove(&key);
                self.len -= 1;
                return;
            }
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
        self.order.clear();
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
        fn value(
            &self,
            resource: &str,
            key: &(String, String),
            bytes: &Bytes,
        ) -> Option<Arc<Value>> {
            self.get(resource, key, bytes).map(|cached| cached.value)
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
            Some(Box::new([(5, 6)])),
        );
        let cached = cache.get("/cm", &key("x"), &stored).unwrap();
        assert_eq!(
            cached
                .derived
                .and_then(|d| d.downcast::<u8>().ok())
                .as_deref(),
            Some(&7)
        );
        assert_eq!(cached.spans, Some(&[(5, 6)][..]));
        assert_eq!(
            cache.value("/cm", &key("x"), &stored).as_deref(),
            Some(&json!({"a": 1}))
        );
        // Equal content in another buffer is another stored version: not served.
        let rewritten = Bytes::copy_from_slice(br#"{"a":1}"#);
        assert!(cache.value("/cm", &key("x"), &rewritten).is_none());
        assert!(cache.value("/cm", &key("y"), &stored).is_none());
        assert!(cache.value("/other", &key("x"), &stored).is_none());
    }

    #[test]
    fn a_full_cache_forgets_the_oldest_insertion_and_removal_forgets() {
        let mut cache = ParsedCache::default();
        let mut stored = Vec::new();
        for i in 0..CAPACITY {
            let b = Bytes::from(format!("{i}"));
            cache.insert(
                "/cm",
                key(&i.to_string()),
                b.clone(),
                Arc::new(json!(i)),
                None,
                None,
            );
            stored.push(b);
        }
        assert_eq!(cache.len(), CAPACITY);
        // Object 0 is written again: it is now the newest, so object 1 is the oldest.
        let zero = Bytes::from_static(b"zero again");
        cache.insert(
            "/cm",
            key("0"),
            zero.clone(),
            Arc::new(json!(0)),
            None,
            None,
        );
        assert_eq!(cache.len(), CAPACITY);
        let b = Bytes::from_static(b"new");
        cache.insert(
            "/cm",
            key("new"),
            b.clone(),
            Arc::new(json!("new")),
            None,
            None,
        );
        assert_eq!(cache.len(), CAPACITY);
        assert!(cache.value("/cm", &key("new"), &b).is_some());
        assert!(cache.value("/cm", &key("0"), &zero).is_some());
        assert!(cache.value("/cm", &key("1"), &stored[1]).is_none());
        assert!(cache.value("/cm", &key("2"), &stored[2]).is_some());
        cache.remove("/cm", &key("new"));
        assert_eq!(cache.len(), CAPACITY - 1);
        assert!(cache.value("/cm", &key("new"), &b).is_none());
    }

    #[test]
    fn rewriting_one_object_keeps_the_order_bounded() {
        let mut cache = ParsedCache::default();
        for i in 0..10 * CAPACITY {
            let b = Bytes::from(format!("{i}"));
            cache.insert("/cm", key("same"), b, Arc::new(json!(i)), None, None);
        }
        assert_eq!(cache.len(), 1);
        assert!(cache.order.len() <= 2 * CAPACITY + 1);
    }
}
