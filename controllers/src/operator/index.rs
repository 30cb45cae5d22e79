//! A reflector store with one index, as controller-runtime's informer cache has field indexers
//! (`mgr.GetFieldIndexer().IndexField(...)`, read with `client.MatchingFields{...}`): a lookup
//! by index value costs the objects it returns, not a scan of the whole cache.
//!
//! [`store`] makes an [`Indexed`] reader (a kube [`Store`] plus the index) and an
//! [`IndexedWriter`] that applies watcher events to both; [`reflect_indexed`] is kube's
//! `reflect` for it. Tests and the race harness feed an [`IndexedWriter`] by hand exactly as
//! they fed a [`Writer`].
//!
//! The index maps each value to the objects the index function gave that value, holding the
//! same `Arc`s as the store. The writer applies each event to the store and the index under the
//! index's lock, so a lookup sees the index as it was after some whole event, never between the
//! store's change and the index's (client-go's indexer updates both under one lock too). A lookup
//! therefore returns exactly what a scan of the store with that predicate would, and costs the
//! objects it returns: no store lookup and no allocation per object beyond its `Arc`.

use std::collections::BTreeMap;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::{Arc, RwLock};

use futures::{Stream, StreamExt};
use kube::runtime::reflector::store::Writer;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher;
use kube::Resource;

/// The values an object is indexed under (none: not indexed).
pub type IndexFn<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// An object's place in the index: namespace and name (ordered, unlike [`ObjectRef`]).
type Key = (Option<String>, String);

struct Entries<K> {
    /// Index value → objects indexed under it, by key.
    by_value: BTreeMap<String, BTreeMap<Key, Arc<K>>>,
    /// Object → the values it is indexed under.
    values_of: BTreeMap<Key, Vec<String>>,
}

impl<K> Default for Entries<K> {
    fn default() -> Self {
        Self {
            by_value: BTreeMap::new(),
            values_of: BTreeMap::new(),
        }
    }
}

impl<K> Entries<K> {
    /// Index `obj` under exactly `values` (none: forget it).
    fn set(&mut self, key: Key, obj: Option<Arc<K>>, values: Vec<String>) {
        if let Some(previous) = self.values_of.remove(&key) {
            for value in previous.iter().filter(|v| !values.contains(v)) {
                if let Some(objects) = self.by_value.get_mut(value) {
                    objects.remove(&key);
                    if objects.is_empty() {
                        self.by_value.remove(value);
                    }
                }
            }
        }
        let Some(obj) = obj else {
            return;
        };
        if values.is_empty() {
            return;
        }
        let mut distinct: Vec<String> = Vec::with_capacity(values.len());
        for value in values {
            if !distinct.contains(&value) {
                self.by_value
                    .entry(value.clone())
                    .or_default()
                    .insert(key.clone(), obj.clone());
                distinct.push(value);
            }
        }
        self.values_of.insert(key, distinct);
    }
}

/// A reflector store with an index; derefs to the [`Store`] for everything else.
pub struct Indexed<K: 'static + Resource>
where
    K::DynamicType: Eq + Hash,
{
    store: Store<K>,
    entries: Arc<RwLock<Entries<K>>>,
    index: IndexFn<K>,
}

impl<K: 'static + Resource> Clone for Indexed<K>
where
    K::DynamicType: Eq + Hash,
{
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
            entries: self.entries.clone(),
            index: self.index.clone(),
        }
    }
}

impl<K: 'static + Resource> std::fmt::Debug for Indexed<K>
where
    K::DynamicType: Eq + Hash,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Indexed").finish_non_exhaustive()
    }
}

impl<K> Deref for Indexed<K>
where
    K: 'static + Resource,
    K::DynamicType: Eq + Hash,
{
    type Target = Store<K>;
    fn deref(&self) -> &Store<K> {
        &self.store
    }
}

fn key_of<K: Resource>(obj: &K) -> Key {
    (
        obj.meta().namespace.clone(),
        obj.meta().name.clone().unwrap_or_default(),
    )
}

impl<K> Indexed<K>
where
    K: 'static + Resource + Clone,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    /// The plain store (for kube's `Controller`, which takes one).
    pub fn store(&self) -> Store<K> {
        self.store.clone()
    }

    /// The cached objects indexed under `value`, in namespace/name order (controller-runtime's
    /// `List(..., MatchingFields{index: value})` on the cache).
    pub fn by_index(&self, value: &str) -> Vec<Arc<K>> {
        let entries = self.entries.read().unwrap_or_else(|e| e.into_inner());
        entries
            .by_value
            .get(value)
            .map(|objects| objects.values().cloned().collect())
            .unwrap_or_default()
    }
}

/// Writes watcher events to an [`Indexed`] store and its index.
pub struct IndexedWriter<K: 'static + Resource + Clone>
where
    K::DynamicType: Eq + Hash + Clone,
{
    writer: Writer<K>,
    reader: Indexed<K>,
}

impl<K> IndexedWriter<K>
where
    K: 'static + Resource + Clone,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    /// Applies one watcher event to the store and the index (kube's
    /// [`Writer::apply_watcher_event`]), both under the index's lock.
    pub fn apply_watcher_event(&mut self, event: &watcher::Event<K>) {
        let index = &self.reader.index;
        let store = &self.reader.store;
        let mut entries = self
            .reader
            .entries
            .write()
            .unwrap_or_else(|e| e.into_inner());
        self.writer.apply_watcher_event(event);
        match event {
            watcher::Event::Apply(obj) => {
                // The store's own `Arc` of what it now holds.
                let stored = store.get(&ObjectRef::from_obj(obj));
                entries.set(key_of(obj), stored, index(obj));
            }
            watcher::Event::Delete(obj) => entries.set(key_of(obj), None, Vec::new()),
            // Buffered by the writer until `InitDone`: the store has not changed.
            watcher::Event::Init | watcher::Event::InitApply(_) => {}
            watcher::Event::InitDone => {
                // The store now holds exactly the relisted objects: index those alone.
                let mut fresh = Entries::default();
                for obj in store.state() {
                    let values = index(obj.as_ref());
                    fresh.set(key_of(obj.as_ref()), Some(obj), values);
                }
                *entries = fresh;
            }
        }
    }

    /// A reader of the store this writes.
    pub fn as_reader(&self) -> Indexed<K> {
        self.reader.clone()
    }
}

/// An empty indexed store indexing each object under `index(object)`.
pub fn store<K>(
    index: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
) -> (Indexed<K>, IndexedWriter<K>)
where
    K: 'static + Resource + Clone,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    let (store, writer) = reflector::store::<K>();
    let reader = Indexed {
        store,
        entries: Arc::default(),
        index: Arc::new(index),
    };
    (reader.clone(), IndexedWriter { writer, reader })
}

/// kube's `.reflect(writer)` for an [`IndexedWriter`]: applies each event as it passes.
pub fn reflect_indexed<K, S>(stream: S, mut writer: IndexedWriter<K>) -> impl Stream<Item = S::Item>
where
    K: 'static + Resource + Clone,
    K::DynamicType: Default + Eq + Hash + Clone,
    S: Stream<Item = Result<watcher::Event<K>, watcher::Error>>,
{
    stream.map(move |event| {
        if let Ok(event) = &event {
            writer.apply_watcher_event(event);
        }
        event
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use watcher::Event;

    fn cm(namespace: &str, name: &str, owner: &str) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.namespace = Some(namespace.into());
        cm.metadata.name = Some(name.into());
        cm.metadata.labels = Some([("owner".to_string(), owner.to_string())].into());
        cm
    }

    fn by_owner(cm: &ConfigMap) -> Vec<String> {
        cm.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("owner"))
            .map(|o| vec![o.clone()])
            .unwrap_or_default()
    }

    fn names(found: Vec<Arc<ConfigMap>>) -> Vec<String> {
        found
            .iter()
            .map(|c| {
                format!(
                    "{}/{}",
                    c.metadata.namespace.as_deref().unwrap_or_default(),
                    c.metadata.name.as_deref().unwrap_or_default()
                )
            })
            .collect()
    }

    /// The same answers as a scan of the store, through applies, value changes, deletes and a
    /// relist that drops objects.
    #[test]
    fn lookups_match_a_scan_of_the_store() {
        let (reader, mut writer) = store(by_owner);
        let scan = |value: &str| {
            let mut found = names(reader.state_filter(|c| by_owner(c).iter().any(|v| v == value)));
            found.sort();
            found
        };
        let check = |value: &str| {
            assert_eq!(names(reader.by_index(value)), scan(value), "value {value}");
        };
        writer.apply_watcher_event(&Event::Init);
        writer.apply_watcher_event(&Event::InitApply(cm("b", "x", "o1")));
        writer.apply_watcher_event(&Event::InitApply(cm("a", "x", "o1")));
        // Buffered, not yet in the store: a lookup finds nothing yet.
        assert!(reader.by_index("o1").is_empty());
        writer.apply_watcher_event(&Event::InitDone);
        assert_eq!(names(reader.by_index("o1")), ["a/x", "b/x"]);
        check("o1");

        writer.apply_watcher_event(&Event::Apply(cm("a", "y", "o2")));
        check("o2");
        // The value changes: found under the new one only.
        writer.apply_watcher_event(&Event::Apply(cm("a", "x", "o2")));
        assert_eq!(names(reader.by_index("o2")), ["a/x", "a/y"]);
        assert_eq!(names(reader.by_index("o1")), ["b/x"]);
        writer.apply_watcher_event(&Event::Delete(cm("a", "y", "o2")));
        assert_eq!(names(reader.by_index("o2")), ["a/x"]);
        check("o2");

        // A relist without b/x: gone from the store and the index.
        writer.apply_watcher_event(&Event::Init);
        writer.apply_watcher_event(&Event::InitApply(cm("a", "x", "o2")));
        writer.apply_watcher_event(&Event::InitDone);
        assert!(reader.by_index("o1").is_empty());
        assert_eq!(names(reader.by_index("o2")), ["a/x"]);
        let entries = reader.entries.read().unwrap();
        assert_eq!(entries.by_value.len(), 1, "no empty entries left behind");
        assert_eq!(entries.values_of.len(), 1);
    }

    /// A lookup returns the store's current objects themselves (the same `Arc`s), so a change
    /// that keeps the index value is seen at once, and an object indexed twice under one value
    /// is found once.
    #[test]
    fn lookups_return_the_stores_current_objects() {
        let (reader, mut writer) = store(|cm: &ConfigMap| {
            let mut values = by_owner(cm);
            values.extend(by_owner(cm));
            values
        });
        writer.apply_watcher_event(&Event::Apply(cm("a", "x", "o1")));
        let mut changed = cm("a", "x", "o1");
        changed.data = Some([("k".to_string(), "v2".to_string())].into());
        writer.apply_watcher_event(&Event::Apply(changed.clone()));
        let found = reader.by_index("o1");
        assert_eq!(found.len(), 1);
        assert_eq!(*found[0], changed);
        let stored = reader.get(&ObjectRef::from_obj(&changed)).unwrap();
        assert!(Arc::ptr_eq(&found[0], &stored));
    }

    /// An object indexed under no value is in the store but found by no lookup.
    #[test]
    fn objects_without_a_value_are_not_indexed() {
        let (reader, mut writer) = store(by_owner);
        let mut unowned = cm("a", "z", "");
        unowned.metadata.labels = None;
        writer.apply_watcher_event(&Event::Apply(unowned));
        assert_eq!(reader.state().len(), 1);
        assert!(reader.by_index("").is_empty());
        assert!(reader.entries.read().unwrap().values_of.is_empty());
    }
}
