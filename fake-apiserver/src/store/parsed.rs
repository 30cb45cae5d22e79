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
//!
//! The cache is segmented as a 2Q cache is: an object that comes in (created, or read or
//! written while not cached) waits in a small probation segment; written again while cached,
//! or soon after it left probation (its key is remembered a while), it moves to the main
//! segment. Freeing an entry's tree costs a cache miss per node once it has gone cold, as much
//! as parsing the object again: a run that creates thousands of objects and never writes them
//! again frees each parse a moment after making it (measured: 15% of the server's CREATE of a
//! pod went to freeing the parse of a pod created 1024 creates earlier), while objects written
//! over and over stay parsed as long as before.

use std::any::Any;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

/// How many objects written more than once are kept parsed. A 4.5 KiB pod is ~15 KiB parsed,
/// so this bounds the main segment near 15 MiB whatever the store holds; it also bounds how many
/// keys that left probation are remembered.
pub const CAPACITY: usize = 1024;

/// How many objects that came in and were not written again since are kept parsed. Few: the
/// tree of an object that leaves is freed while it is still in the CPU's caches (16 creates of
/// the pod allocate ~2 MiB; measured, the server's CREATE of the pod +22% against 128, where
/// the freed tree had gone cold). An object written again later than that is parsed once more
/// and, its key remembered, goes to the main segment.
pub const PROBATION: usize = 16;

/// What an upper layer derived from one stored version of an object, kept with its parse.
pub type Derived = Arc<dyn Any + Send + Sync>;

use super::json_writer::MapTexts;
use super::key::{lookup, KeyParts, ObjectKey};

/// What [`ParsedCache::get`] finds for a stored version.
#[derive(Debug)]
pub struct Cached<'a> {
    /// Its parse.
    pub value: Arc<Value>,
    /// What was derived from it, if anything.
    pub derived: Option<Derived>,
    /// Where its maps' texts sit in its bytes, if the store recorded it (a later write
    /// sharing those maps copies their text, see `json_writer::write_sharing`).
    pub texts: Option<&'a MapTexts>,
}

/// One parsed object and the stored bytes it is the parse of.
struct Entry {
    /// When it was inserted (a count of insertions): tells its record in the eviction order
    /// from older records of the same key.
    stamp: u64,
    /// The segment it is in: the main one (`true`) or probation.
    main: bool,
    /// Kept so that the allocation (whose address identifies the stored version) stays alive.
    bytes: Bytes,
    value: Arc<Value>,
    derived: Option<Derived>,
    /// Its maps' texts in `bytes` (their identities are those of `value`'s maps, which the
    /// entry keeps alive).
    texts: Option<MapTexts>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("bytes", &self.bytes.len())
            .field("main", &self.main)
            .field("derived", &self.derived.is_some())
            .finish()
    }
}

/// An insertion: (stamp, resource, (namespace, name)).
type Record = (u64, String, (String, String));

/// resource → (namespace, name) → what is kept for it.
type ByKey<T> = BTreeMap<String, BTreeMap<ObjectKey, T>>;

/// The insertions into one segment, oldest first, and how many of its entries are there. A
/// record whose entry has another stamp was overtaken by a later insertion of the same key (or
/// the entry went).
#[derive(Debug, Default)]
struct Segment {
    order: VecDeque<Record>,
    len: usize,
}

impl Segment {
    fn push(&mut self, record: Record) {
        self.order.push_back(record);
        self.len += 1;
    }

    /// Takes the oldest record that is still `live`, the entry's removal left to the caller.
    fn pop_oldest(&mut self, live: impl Fn(&Record) -> bool) -> Option<Record> {
        while let Some(record) = self.order.pop_front() {
            if live(&record) {
                self.len -= 1;
                return Some(record);
            }
        }
        None
    }

    /// Drops overtaken records before they pile up.
    fn compact(&mut self, live: impl Fn(&Record) -> bool) {
        if self.order.len() > 2 * CAPACITY.max(self.len) {
            self.order.retain(live);
        }
    }
}

/// Takes out of `by_key` what the oldest live record of `segment` inserted (`stamp_of` reads a
/// kept value's stamp), with its record.
fn evict_oldest_of<T>(
    segment: &mut Segment,
    by_key: &mut ByKey<T>,
    stamp_of: impl Fn(&T) -> u64,
) -> Option<(Record, T)> {
    let record = segment.pop_oldest(|record| holds(by_key, record, &stamp_of))?;
    let (_, resource, key) = &record;
    let kept = by_key.get_mut(resource)?.remove(lookup(key).as_key())?;
    Some((record, kept))
}

/// Whether `record` is the insertion that made what `by_key` holds now (`stamp_of` reads it).
fn holds<T>(by_key: &ByKey<T>, record: &Record, stamp_of: impl Fn(&T) -> u64) -> bool {
    let (stamp, resource, key) = record;
    by_key
        .get(resource)
        .and_then(|objects| objects.get(lookup(key).as_key()))
        .is_some_and(|kept| stamp_of(kept) == *stamp)
}

/// The parsed objects, their segments, and the keys that left probation lately.
#[derive(Debug, Default)]
pub struct ParsedCache {
    entries: ByKey<Entry>,
    probation: Segment,
    main: Segment,
    /// Keys that left probation, by fingerprint, with the stamp of their record in
    /// `left_order`: written again while remembered, an object goes to the main segment.
    left: BTreeMap<u64, u64>,
    left_order: LeftOrder,
    stamps: u64,
}

/// The fingerprint a key is remembered by once it left probation: a hash of the resource, the
/// namespace and the name (foldhash mixes each string's length into the hash, so two splits of
/// the same bytes hash apart). Two keys with one fingerprint only send an object to the main
/// segment early; what a read finds is decided by the entries, which are keyed by the key
/// itself. Remembering fingerprints instead of keys spares every create copying three strings
/// into the memory and two string-keyed tree walks. Hashed with foldhash's fixed seed: the same
/// keys get the same fingerprints in every run, at a tenth of SipHash's cost (two a create).
fn fingerprint(resource: &str, key: &dyn KeyParts) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let (namespace, name) = key.parts();
    let mut hasher = foldhash::fast::FixedState::default().build_hasher();
    resource.hash(&mut hasher);
    namespace.hash(&mut hasher);
    name.hash(&mut hasher);
    hasher.finish()
}

/// The fingerprints remembered, oldest first, with their stamps: a record whose fingerprint now
/// has another stamp (remembered again, or forgotten) is overtaken.
#[derive(Debug, Default)]
struct LeftOrder {
    order: VecDeque<(u64, u64)>,
    len: usize,
}

impl ParsedCache {
    /// The parsed form of `bytes`, the stored version of `key`, if it is cached, with what was
    /// derived from it and where its maps' texts sit in `bytes`, if known.
    pub fn get(&self, resource: &str, key: &dyn KeyParts, bytes: &Bytes) -> Option<Cached<'_>> {
        self.get_entry(resource, key, bytes).map(|entry| Cached {
            value: entry.value.clone(),
            derived: entry.derived.clone(),
            texts: entry.texts.as_ref(),
        })
    }

    fn get_entry(&self, resource: &str, key: &dyn KeyParts, bytes: &Bytes) -> Option<&Entry> {
        let entry = self.entries.get(resource)?.get(lookup(key).as_key())?;
        same_allocation(&entry.bytes, bytes).then_some(entry)
    }

    /// Remembers that `value` is the parse of `bytes`, now stored for `key`, `derived` what
    /// was derived from it and `texts` where its maps' texts sit in `bytes`. An object
    /// already cached, or that left probation lately, goes to the main segment, any other to
    /// probation. When a segment is full the entry inserted into it longest ago goes (one per
    /// insertion, so that no write pays for dropping the whole cache at once).
    pub fn insert(
        &mut self,
        resource: &str,
        key: (String, String),
        bytes: Bytes,
        value: Arc<Value>,
        derived: Option<Derived>,
        texts: Option<MapTexts>,
    ) {
        self.stamps += 1;
        let stamp = self.stamps;
        // The resource's name is copied only for its first entry.
        if !self.entries.contains_key(resource) {
            self.entries.insert(resource.to_string(), BTreeMap::new());
        }
        let Some(objects) = self.entries.get_mut(resource) else {
            return;
        };
        let previous = objects.get(lookup(&key).as_key()).map(|e| e.main);
        let main =
            previous.is_some() || forget_left(&mut self.left, &mut self.left_order, resource, &key);
        let record = (stamp, resource.to_string(), key.clone());
        let replaced = objects.insert(
            ObjectKey::new(key),
            Entry {
                stamp,
                main,
                bytes,
                value,
                derived,
                texts,
            },
        );
        if let Some(was_main) = previous {
            self.segment(was_main).len -= 1;
        }
        self.segment(main).push(record);
        // The version replaced was read a moment ago by the write that replaces it.
        drop(replaced);
        while self.probation.len > PROBATION {
            let Some((record, _)) =
                evict_oldest_of(&mut self.probation, &mut self.entries, |e| e.stamp)
            else {
                break;
            };
            self.remember_left(record);
        }
        while self.main.len > CAPACITY {
            if evict_oldest_of(&mut self.main, &mut self.entries, |e| e.stamp).is_none() {
                break;
            }
        }
        let entries = &self.entries;
        let live = |record: &Record| holds(entries, record, |e| e.stamp);
        self.probation.compact(live);
        self.main.compact(live);
    }

    /// The main segment (`true`) or probation.
    fn segment(&mut self, main: bool) -> &mut Segment {
        if main {
            &mut self.main
        } else {
            &mut self.probation
        }
    }

    /// Remembers the key of an object that left probation, forgetting the one remembered
    /// longest ago beyond [`CAPACITY`].
    fn remember_left(&mut self, (_, resource, key): Record) {
        self.stamps += 1;
        let stamp = self.stamps;
        let print = fingerprint(&resource, &key);
        if self.left.insert(print, stamp).is_some() {
            self.left_order.len -= 1;
        }
        self.left_order.order.push_back((stamp, print));
        self.left_order.len += 1;
        let left = &mut self.left;
        let live =
            |left: &BTreeMap<u64, u64>, (stamp, print): &(u64, u64)| left.get(print) == Some(stamp);
        while self.left_order.len > CAPACITY {
            let Some(oldest) = self.left_order.order.pop_front() else {
                break;
            };
            if live(left, &oldest) {
                left.remove(&oldest.1);
                self.left_order.len -= 1;
            }
        }
        if self.left_order.order.len() > 2 * CAPACITY.max(self.left_order.len) {
            self.left_order.order.retain(|record| live(left, record));
        }
    }

    /// Forgets `key` (the object is gone).
    pub fn remove(&mut self, resource: &str, key: &(String, String)) {
        if let Some(entry) = self
            .entries
            .get_mut(resource)
            .and_then(|o| o.remove(lookup(key).as_key()))
        {
            self.segment(entry.main).len -= 1;
        }
        forget_left(&mut self.left, &mut self.left_order, resource, key);
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        *self = ParsedCache::default();
    }

    /// How many objects are cached.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.probation.len + self.main.len
    }
}

/// Forgets that `key` left probation lately; says whether it was remembered.
fn forget_left(
    left: &mut BTreeMap<u64, u64>,
    order: &mut LeftOrder,
    resource: &str,
    key: &dyn KeyParts,
) -> bool {
    let forgotten = left.remove(&fingerprint(resource, key)).is_some();
    if forgotten {
        order.len -= 1;
    }
    forgotten
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
            Some(Arc::new([super::super::json_writer::MapText {
                id: 1,
                start: 0,
                end: 7,
            }])),
        );
        let cached = cache.get("/cm", &key("x"), &stored).unwrap();
        assert_eq!(
            cached
                .derived
                .and_then(|d| d.downcast::<u8>().ok())
                .as_deref(),
            Some(&7)
        );
        assert_eq!(cached.texts.map(|t| (t[0].start, t[0].end)), Some((0, 7)));
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

    /// Inserts version `version` of object `name`; the bytes that identify it.
    fn put(cache: &mut ParsedCache, name: &str, version: usize) -> Bytes {
        let b = Bytes::from(format!("{name}@{version}"));
        cache.insert(
            "/cm",
            key(name),
            b.clone(),
            Arc::new(json!(version)),
            None,
            None,
        );
        b
    }

    fn cached(cache: &ParsedCache, name: &str, bytes: &Bytes) -> bool {
        cache.value("/cm", &key(name), bytes).is_some()
    }

    fn remembered(cache: &ParsedCache) -> usize {
        cache.left.len()
    }

    #[test]
    fn objects_written_once_leave_after_probation() {
        let mut cache = ParsedCache::default();
        let stored: Vec<Bytes> = (0..=PROBATION)
            .map(|i| put(&mut cache, &i.to_string(), 0))
            .collect();
        assert_eq!(cache.len(), PROBATION);
        assert!(!cached(&cache, "0", &stored[0]));
        assert!((1..=PROBATION).all(|i| cached(&cache, &i.to_string(), &stored[i])));
        assert_eq!((cache.probation.len, cache.main.len), (PROBATION, 0));
        assert_eq!(remembered(&cache), 1);
    }

    #[test]
    fn an_object_written_again_moves_to_main_and_outlives_probation() {
        let mut cache = ParsedCache::default();
        put(&mut cache, "hot", 0);
        let hot = put(&mut cache, "hot", 1);
        assert_eq!((cache.probation.len, cache.main.len), (0, 1));
        for i in 0..10 * PROBATION {
            put(&mut cache, &i.to_string(), 0);
        }
        assert!(cached(&cache, "hot", &hot));
        assert_eq!((cache.probation.len, cache.main.len), (PROBATION, 1));
    }

    #[test]
    fn an_object_written_soon_after_it_left_probation_goes_to_main() {
        let mut cache = ParsedCache::default();
        let first = put(&mut cache, "a", 0);
        for i in 0..PROBATION {
            put(&mut cache, &i.to_string(), 0);
        }
        assert!(!cached(&cache, "a", &first));
        let again = put(&mut cache, "a", 1);
        assert_eq!(cache.main.len, 1);
        for i in PROBATION..10 * PROBATION {
            put(&mut cache, &i.to_string(), 0);
        }
        assert!(cached(&cache, "a", &again));
        // Forgotten once it went to main: the key is remembered only while it may come back.
        assert!(!cache.left.contains_key(&fingerprint("/cm", &key("a"))));
    }

    #[test]
    fn the_main_segment_forgets_its_oldest_insertion() {
        let mut cache = ParsedCache::default();
        let mut stored = Vec::new();
        for i in 0..=CAPACITY {
            put(&mut cache, &i.to_string(), 0);
            stored.push(put(&mut cache, &i.to_string(), 1));
        }
        assert_eq!((cache.probation.len, cache.main.len), (0, CAPACITY));
        assert!(!cached(&cache, "0", &stored[0]));
        assert!(cached(&cache, "1", &stored[1]));
        // Object 1 is written again: now the newest, so object 2 goes next.
        let one = put(&mut cache, "1", 2);
        for i in 0..2 {
            let name = format!("new{i}");
            put(&mut cache, &name, 0);
            put(&mut cache, &name, 1);
        }
        assert!(cached(&cache, "1", &one));
        assert!(!cached(&cache, "2", &stored[2]));
        assert!(cached(&cache, "4", &stored[4]));
        assert_eq!(cache.main.len, CAPACITY);
    }

    #[test]
    fn removal_forgets_the_object_and_its_key() {
        let mut cache = ParsedCache::default();
        let once = put(&mut cache, "once", 0);
        put(&mut cache, "twice", 0);
        let twice = put(&mut cache, "twice", 1);
        let gone = put(&mut cache, "gone", 0);
        for i in 0..PROBATION {
            put(&mut cache, &i.to_string(), 0);
        }
        assert!(!cached(&cache, "once", &once) && !cached(&cache, "gone", &gone));
        assert_eq!(remembered(&cache), 2);
        cache.remove("/cm", &key("twice"));
        cache.remove("/cm", &key("gone"));
        cache.remove("/cm", &key("0"));
        assert!(!cached(&cache, "twice", &twice));
        assert_eq!((cache.probation.len, cache.main.len), (PROBATION - 1, 0));
        assert_eq!(cache.len(), PROBATION - 1);
        assert_eq!(remembered(&cache), 1);
        // Created again after its deletion, an object starts in probation.
        put(&mut cache, "gone", 1);
        assert_eq!(cache.main.len, 0);
        cache.clear();
        assert_eq!((cache.len(), remembered(&cache)), (0, 0));
    }

    #[test]
    fn rewriting_one_object_keeps_the_order_bounded() {
        let mut cache = ParsedCache::default();
        for i in 0..10 * CAPACITY {
            put(&mut cache, "same", i);
        }
        assert_eq!(cache.len(), 1);
        assert!(cache.main.order.len() <= 2 * CAPACITY + 1);
        assert!(cache.probation.order.len() <= 1);
    }

    #[test]
    fn the_keys_that_left_probation_are_bounded() {
        let mut cache = ParsedCache::default();
        for i in 0..5 * CAPACITY {
            put(&mut cache, &i.to_string(), 0);
        }
        assert_eq!(cache.len(), PROBATION);
        assert_eq!(remembered(&cache), CAPACITY);
        assert_eq!(cache.left_order.len, CAPACITY);
        assert!(cache.left_order.order.len() <= 2 * CAPACITY);
        // The most recent keys are the ones remembered.
        let newest_left = 5 * CAPACITY - PROBATION - 1;
        let remembered_key = |i: usize| {
            cache
                .left
                .contains_key(&fingerprint("/cm", &key(&i.to_string())))
        };
        assert!(remembered_key(newest_left));
        assert!(!remembered_key(newest_left - CAPACITY));
    }
}
