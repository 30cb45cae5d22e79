//! The object store: one global revision, objects kept as serialized JSON, and a bounded history of
//! events that feeds watches and consistent paged lists.
//!
//! This module knows nothing about Kubernetes semantics beyond `metadata.resourceVersion` (and
//! the owner uids of `metadata.ownerReferences`, which it indexes so that the garbage collector
//! finds an owner's dependents without reading every object, as the real collector's graph
//! does; see [`Store::owned_by`]; and the labels lists select on, which it indexes so that a
//! list by an equality label selector reads only the objects carrying that label, see
//! [`Store::snapshot_labelled`] and [`labels`]): callers
//! compute the next state of an object inside [`Store::mutate`], which runs under the store's lock so
//! that read-check-write is atomic, as an etcd transaction is for a real server.
//!
//! The bottom layer of the server (see the crate documentation): it and its submodules (the
//! container log lines in [`pod_logs`], the fast JSON equality in `value_eq`) import nothing
//! from the rules, the registry or the HTTP layer.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::error::ApiError;

pub mod json;
pub mod json_writer;
pub mod key;
mod labels;
mod parsed;
pub mod pod_logs;
pub(crate) mod value_eq;

use json_writer::MapTexts;
use key::{lookup, KeyParts, ObjectKey};
use labels::LabelIndex;
pub use parsed::Derived;
use parsed::ParsedCache;

/// Default number of events kept for watches and paged lists.
pub const DEFAULT_HISTORY: usize = 100_000;

/// Default bound on the bytes of the objects the kept events carry (256 MiB): with big objects
/// the history is bounded by memory before it reaches [`DEFAULT_HISTORY`] events, as etcd's
/// periodic compaction bounds a real server's.
pub const DEFAULT_HISTORY_BYTES: usize = 256 * 1024 * 1024;

/// Capacity of the live event channel; a watcher that falls this far behind is expired (410).
const LIVE_CHANNEL_CAPACITY: usize = 65_536;

/// What happened to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum EventType {
    /// The object was created.
    Added,
    /// The object changed.
    Modified,
    /// The object is gone.
    Deleted,
}

impl EventType {
    /// The watch event type string.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One write, as recorded in the history and sent to watchers.
#[derive(Debug, Clone)]
pub struct StoreEvent {
    /// The revision this write created.
    pub revision: u64,
    /// What happened.
    pub event_type: EventType,
    /// The resource key, `group/plural` (`/pods` for the core group).
    pub resource: Arc<str>,
    /// Namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// Object name.
    pub name: String,
    /// The object after the write (for a deletion: its last state, with the deletion's revision).
    pub object: Bytes,
    /// The object before the write (none for a creation).
    pub previous: Option<Bytes>,
}

impl StoreEvent {
    /// Parses the object (the store only ever holds valid JSON).
    pub fn object_value(&self) -> Value {
        json::from_slice(&self.object).unwrap_or(Value::Null)
    }
}

/// The key of a resource type in the store: `group/plural`. Made on every request (appended,
/// not `format!`ted: that cost ~0.5k instructions, 2% of a GET).
pub fn resource_key(group: &str, plural: &str) -> String {
    let mut key = String::with_capacity(group.len() + 1 + plural.len());
    key.push_str(group);
    key.push('/');
    key.push_str(plural);
    key
}

/// What a [`Store::mutate`] closure decides.
#[derive(Debug)]
pub enum Mutation {
    /// Write this object (create or update); the store stamps the new resourceVersion.
    Put(Value),
    /// Remove the object; the value is its last state, sent in the DELETED event.
    Delete(Value),
    /// Nothing changes; the value is returned to the caller as is.
    Unchanged(Value),
    /// Remove the object because an update released it (its last finalizer went): the caller
    /// gets this value (with the stored resourceVersion), watchers a DELETED event carrying the
    /// last stored state.
    Finalize(Value),
}

/// What a [`Store::mutate_derived`] closure decides: the write, and what goes with it.
#[derive(Debug)]
pub struct Decision {
    /// The write.
    pub mutation: Mutation,
    /// What the caller derived from a `Put`'s object, kept beside that version's parse.
    pub derived: Option<Derived>,
    /// A `Put`'s object was last put through the same encoding as the store's encoder (see
    /// [`Store::with_encoder`]) and nothing changed it since: the store does not encode it
    /// again. Debug builds encode a copy anyway and check that it reads the same.
    pub encoded: bool,
}

impl Decision {
    /// A write with nothing derived, to be encoded by the store.
    pub fn plain(mutation: Mutation) -> Self {
        Self {
            mutation,
            derived: None,
            encoded: false,
        }
    }
}

/// The result of a [`Store::mutate`].
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The object as stored (or as last seen, for a deletion), with its resourceVersion.
    pub object: Arc<Value>,
    /// The stored bytes of [`Outcome::object`] when it is what the store now holds (a `Put`,
    /// changed or not): a response can send them instead of encoding the object again.
    pub stored: Option<Bytes>,
    /// The event the write produced, if it changed anything.
    pub event: Option<EventType>,
}

impl Outcome {
    /// The object, owned (a copy only when the store's parse cache shares it).
    pub fn into_object(self) -> Value {
        Arc::unwrap_or_clone(self.object)
    }
}

/// The start of a watch: the backlog of events still in the history, and the live receiver.
pub type WatchStart = (Vec<Arc<StoreEvent>>, broadcast::Receiver<Arc<StoreEvent>>);

/// A stored object: its serialized JSON.
pub type StoredObject = Bytes;

type Objects = BTreeMap<ObjectKey, StoredObject>;

struct Inner {
    revision: u64,
    /// resource key → (namespace, name) → object.
    objects: BTreeMap<String, Objects>,
    history: VecDeque<Arc<StoreEvent>>,
    history_limit: usize,
    /// Bytes of the objects the kept events carry, and the bound on them.
    history_bytes: usize,
    history_bytes_limit: usize,
    /// Revisions at or below this are no longer in the history.
    compacted: u64,
    /// Parsed forms of recently written objects.
    parsed: ParsedCache,
    /// Owner uid → the objects whose `metadata.ownerReferences` name it:
    /// `(resource key, (namespace, name))`.
    owned: BTreeMap<String, std::collections::BTreeSet<OwnedKey>>,
    /// Resource key → its label index (only label keys that lists have selected on; see
    /// [`labels`]).
    labelled: BTreeMap<String, LabelIndex>,
    /// Resource key → the object of that resource created last (see [`LastCreated`]).
    last_created: BTreeMap<String, LastCreated>,
}

/// The largest object kept as its resource's [`LastCreated`].
const LAST_CREATED_MAX: usize = 64 * 1024;

/// The version a resource's last create wrote: its bytes, its parse and its maps' texts. A
/// create's object shares maps with the one created before it when both come from alike
/// bodies (a template's pods, a test's objects: see `http::created_bodies`) or from kept
/// documents (a creator's `FieldsV1`), and each such map's text is copied from these bytes
/// instead of being written again. The parse is held so that its maps' identities stay theirs.
/// One per resource, so at most one object a resource is held beyond what the store keeps.
struct LastCreated {
    bytes: Bytes,
    /// Held, not read: the maps the texts name stay alive.
    _parse: Arc<Value>,
    texts: MapTexts,
}

impl LastCreated {
    fn written(&self) -> json_writer::Written<'_> {
        json_writer::Written {
            bytes: &self.bytes,
            texts: &self.texts,
        }
    }
}

/// An object in the owner index: resource key, namespace, name.
type OwnedKey = (String, (String, String));

/// Whether encoded bytes may name owners (hold an `ownerReferences` key), so that the owner
/// index needs their parse.
fn names_owners(bytes: &[u8]) -> bool {
    // Built once: `memmem::find` builds its searcher on every call.
    static KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"ownerReferences\""));
    KEY.find(bytes).is_some()
}

/// The uids named by an object's `metadata.ownerReferences`.
fn owner_uids(object: &Value) -> Vec<&str> {
    object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str))
                .filter(|uid| !uid.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

impl Inner {
    /// Keeps a new object just written as its resource's [`LastCreated`] (one of at most
    /// [`LAST_CREATED_MAX`] bytes: larger objects rarely come in alike runs, and the store
    /// would hold one beyond its objects).
    fn remember_created(
        &mut self,
        resource: &str,
        bytes: &Bytes,
        value: &Arc<Value>,
        texts: &MapTexts,
    ) {
        if bytes.len() > LAST_CREATED_MAX {
            return;
        }
        let created = LastCreated {
            bytes: bytes.clone(),
            _parse: value.clone(),
            texts: texts.clone(),
        };
        match self.last_created.get_mut(resource) {
            Some(last) => *last = created,
            None => {
                self.last_created.insert(resource.to_string(), created);
            }
        }
    }

    /// Moves the object `key` of `resource` in both indexes (owners, labels) from what `old`
    /// holds to what `new` holds (either absent: not stored before / no longer stored).
    fn reindex(
        &mut self,
        resource: &str,
        key: &(String, String),
        old: Option<&Value>,
        new: Option<&Value>,
    ) {
        self.reindex_owners(resource, key, old, new);
        self.reindex_labels(resource, key, old, new);
    }

    /// Moves the object `key` of `resource` in the label index (if any of its keys is indexed)
    /// from the labels of `old` to those of `new`.
    fn reindex_labels(
        &mut self,
        resource: &str,
        key: &(String, String),
        old: Option<&Value>,
        new: Option<&Value>,
    ) {
        if let Some(index) = self.labelled.get_mut(resource) {
            index.reindex(key, old, new);
        }
    }

    /// Moves the object `key` of `resource` in the owner index from the owners of `old` to
    /// those of `new` (either absent: not stored before / no longer stored).
    fn reindex_owners(
        &mut self,
        resource: &str,
        key: &(String, String),
        old: Option<&Value>,
        new: Option<&Value>,
    ) {
        let old = old.map(owner_uids).unwrap_or_default();
        let new = new.map(owner_uids).unwrap_or_default();
        if old == new {
            return;
        }
        let entry = || (resource.to_string(), key.clone());
        move_in_index(&mut self.owned, &old, &new, |uid| uid.to_string(), entry);
    }
}

/// Moves one object (`entry`) in an index from the index keys `old` names to those `new`
/// names: out of the sets of the keys only `old` has (a set left empty goes), into those of
/// the keys only `new` has.
fn move_in_index<T: PartialEq, K: Ord, E: Ord>(
    index: &mut BTreeMap<K, std::collections::BTreeSet<E>>,
    old: &[T],
    new: &[T],
    index_key: impl Fn(&T) -> K,
    entry: impl Fn() -> E,
) {
    for gone in old.iter().filter(|k| !new.contains(k)) {
        let k = index_key(gone);
        if let Some(set) = index.get_mut(&k) {
            set.remove(&entry());
            if set.is_empty() {
                index.remove(&k);
            }
        }
    }
    for added in new.iter().filter(|k| !old.contains(k)) {
        index.entry(index_key(added)).or_default().insert(entry());
    }
}

/// A stored object: its bytes, its parse, and what was derived from that version (if kept).
type Current<'a> = (Bytes, Arc<Value>, Option<Derived>, Option<&'a MapTexts>);

impl Inner {
    /// A copy of the parse cache's value for `bytes`, the stored version of `key`, if it holds
    /// it; otherwise the bytes, to be parsed once the lock is released ([`parsed_or_parse`]).
    fn cached_copy(
        &self,
        resource: &str,
        key: &dyn KeyParts,
        bytes: &StoredObject,
    ) -> Result<Value, StoredObject> {
        match self.parsed.get(resource, key, bytes) {
            Some(cached) => Ok(Value::clone(&cached.value)),
            None => Err(bytes.clone()),
        }
    }

    /// The stored bytes and parsed form of one object (from the cache if it holds this version,
    /// with what was derived from it).
    fn current(&self, resource: &str, key: &dyn KeyParts) -> Result<Option<Current<'_>>, ApiError> {
        let Some(bytes) = self
            .objects
            .get(resource)
            .and_then(|m| m.get(lookup(key).as_key()))
        else {
            return Ok(None);
        };
        if let Some(cached) = self.parsed.get(resource, key, bytes) {
            return Ok(Some((
                bytes.clone(),
                cached.value,
                cached.derived,
                cached.texts,
            )));
        }
        let value = json::from_slice(bytes)
            .map(Arc::new)
            .map_err(|e| ApiError::internal(format!("stored object is corrupt: {e}")))?;
        Ok(Some((bytes.clone(), value, None, None)))
    }
}

/// The value [`Inner::cached_copy`] found, or the parse of the bytes it left (`None` for bytes
/// that are not JSON, which the store never holds).
fn parsed_or_parse(read: Result<Value, StoredObject>) -> Option<Value> {
    match read {
        Ok(value) => Some(value),
        Err(bytes) => json::from_slice(&bytes).ok(),
    }
}

/// One stored version of an object, as [`Store::get_version`] finds it.
#[derive(Debug)]
pub struct StoredVersion {
    /// Its parse.
    pub value: Arc<Value>,
    /// What a writer derived from it, if the store still keeps it.
    pub derived: Option<Derived>,
    /// Its bytes and its maps' texts in them, when the store recorded them (the maps are
    /// `value`'s: kept alive with it, their identities are no other map's).
    pub texts: Option<(Bytes, MapTexts)>,
}

impl StoredVersion {
    /// Its bytes and maps' texts, as a writer or reader sharing them takes them.
    pub fn written(&self) -> Option<json_writer::Written<'_>> {
        self.texts
            .as_ref()
            .map(|(bytes, texts)| json_writer::Written { bytes, texts })
    }
}

/// The store. Cheap to share behind an `Arc`.
pub struct Store {
    inner: Mutex<Inner>,
    /// Created by the first subscriber: its [`LIVE_CHANNEL_CAPACITY`] slots are megabytes that a
    /// server nobody watches (a start, a short test) would otherwise allocate and touch.
    live: OnceLock<broadcast::Sender<Arc<StoreEvent>>>,
    /// What every written object goes through (see [`Store::with_encoder`]).
    encoder: Option<Encoder>,
}

/// Rewrites an object of a resource (given its key) into the form the store keeps.
pub type Encoder = fn(&str, &mut Value);

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("revision", &self.revision())
            .finish()
    }
}

/// A consistent read of one resource type.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The revision the read reflects.
    pub revision: u64,
    /// `((namespace, name), object)` in key order.
    pub items: Vec<((String, String), StoredObject)>,
}

impl Store {
    /// An empty store that keeps `history_limit` events (and at most
    /// [`DEFAULT_HISTORY_BYTES`] of their objects).
    pub fn new(history_limit: usize) -> Self {
        Self::with_limits(history_limit, DEFAULT_HISTORY_BYTES)
    }

    /// An empty store that keeps at most `events` events and `bytes` bytes of their objects
    /// (always at least the newest event).
    pub fn with_limits(events: usize, bytes: usize) -> Self {
        Self {
            inner: Mutex::new(Inner {
                revision: 0,
                objects: BTreeMap::new(),
                history: VecDeque::new(),
                history_limit: events.max(1),
                history_bytes: 0,
                history_bytes_limit: bytes,
                compacted: 0,
                parsed: ParsedCache::default(),
                owned: BTreeMap::new(),
                labelled: BTreeMap::new(),
                last_created: BTreeMap::new(),
            }),
            live: OnceLock::new(),
            encoder: None,
        }
    }

    /// The same store, putting every written object through `encoder` first (given the
    /// resource key and the object), as a storage codec encodes what it stores: the server
    /// installs the built-in kinds' Go encoding here, so that what is stored, answered and
    /// sent to watchers reads as a real server writes it.
    pub fn with_encoder(mut self, encoder: Encoder) -> Self {
        self.encoder = Some(encoder);
        self
    }

    /// Puts an object about to be written through the encoder, if there is one.
    fn encode_for(&self, resource: &str, object: &mut Value) {
        if let Some(encoder) = self.encoder {
            encoder(resource, object);
        }
    }

    /// Debug builds: `object`, which its writer says is encoded already, reads the same once
    /// put through the encoder.
    fn debug_check_encoded(&self, resource: &str, object: &Value) {
        if cfg!(debug_assertions) {
            let mut again = object.clone();
            self.encode_for(resource, &mut again);
            debug_assert!(
                again == *object,
                "a write said to be encoded changes when encoded ({resource}):\n{object}\n{again}"
            );
        }
    }

    /// The live event channel, created on first use.
    fn live(&self) -> &broadcast::Sender<Arc<StoreEvent>> {
        self.live
            .get_or_init(|| broadcast::channel(LIVE_CHANNEL_CAPACITY).0)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the maps half-written (every write is a
        // single insert/remove), so a poisoned lock is still consistent.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current revision.
    pub fn revision(&self) -> u64 {
        self.lock().revision
    }

    /// Waits until the store has reached `revision`, for at most `limit`; whether it has. The
    /// real server's watch cache blocks a read at a revision it has not reached the same way
    /// (`waitUntilFreshAndBlock`) before answering `504` ([`too_large_rv`]).
    pub async fn wait_for_revision(&self, revision: u64, limit: std::time::Duration) -> bool {
        let mut events = self.live().subscribe();
        if self.revision() >= revision {
            return true;
        }
        let deadline = tokio::time::sleep(limit);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                biased;
                event = events.recv() => match event {
                    Ok(event) if event.revision >= revision => return true,
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        if self.revision() >= revision {
                            return true;
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return self.revision() >= revision,
                },
                _ = &mut deadline => return self.revision() >= revision,
            }
        }
    }

    /// The oldest revision a watch may still start from.
    pub fn compacted_revision(&self) -> u64 {
        self.lock().compacted
    }

    /// Forgets every event so far: watches and continue tokens from before now expire (410).
    pub fn compact(&self) {
        let mut inner = self.lock();
        inner.history.clear();
        inner.history_bytes = 0;
        inner.compacted = inner.revision;
    }

    /// One object's serialized JSON.
    pub fn get(&self, resource: &str, namespace: &str, name: &str) -> Option<StoredObject> {
        let inner = self.lock();
        inner
            .objects
            .get(resource)?
            .get(key::Lookup::new(namespace, name).as_key())
            .cloned()
    }

    /// Whether an object is stored under this name.
    pub fn contains(&self, resource: &str, namespace: &str, name: &str) -> bool {
        let inner = self.lock();
        inner
            .objects
            .get(resource)
            .is_some_and(|objects| objects.contains_key(key::Lookup::new(namespace, name).as_key()))
    }

    /// One object, parsed (shared with the store's parse cache when it holds this version).
    pub fn get_parsed(&self, resource: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.get_version(resource, namespace, name)
            .map(|version| version.value)
    }

    /// One object's stored version: its parse, what a writer derived from it and, when the
    /// store recorded them, its bytes and where its maps' texts sit in them (so that a reader
    /// can tell a map's text without writing it: [`json_writer::Written::text_of_map`]).
    ///
    /// A version the parse cache does not hold is parsed and kept there (as an object that
    /// comes in is): what is read again and again without being written, a namespace on every
    /// create in it, a CRD on every create of its resources, the object an update reads before
    /// it writes, is parsed once, not on every read.
    pub fn get_version(
        &self,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Option<StoredVersion> {
        let key = (namespace, name);
        let mut inner = self.lock();
        let inner = &mut *inner;
        let bytes = inner.objects.get(resource)?.get(lookup(&key).as_key())?;
        if let Some(cached) = inner.parsed.get(resource, &key, bytes) {
            return Some(StoredVersion {
                value: cached.value,
                derived: cached.derived,
                texts: cached.texts.map(|texts| (bytes.clone(), texts.clone())),
            });
        }
        let bytes = bytes.clone();
        let value = Arc::new(json::from_slice(&bytes).ok()?);
        let key = (namespace.to_string(), name.to_string());
        let kept = value.clone();
        inner.parsed.insert(resource, key, bytes, kept, None, None);
        Some(StoredVersion {
            value,
            derived: None,
            texts: None,
        })
    }

    /// One object, parsed: a copy of the parse cache's when it holds this version (a copy
    /// costs less than a parse), parsed outside the lock otherwise.
    pub fn get_value(&self, resource: &str, namespace: &str, name: &str) -> Option<Value> {
        let key = (namespace, name);
        let read = {
            let inner = self.lock();
            let bytes = inner.objects.get(resource)?.get(lookup(&key).as_key())?;
            inner.cached_copy(resource, &key, bytes)
        };
        parsed_or_parse(read)
    }

    /// How many objects of one resource type are stored.
    pub fn count(&self, resource: &str) -> usize {
        self.counts([resource])[0]
    }

    /// [`Store::count`] of several resource types, under one lock (at one revision).
    pub fn counts<const N: usize>(&self, resources: [&str; N]) -> [usize; N] {
        let inner = self.lock();
        resources.map(|resource| inner.objects.get(resource).map_or(0, |m| m.len()))
    }

    /// The stored bytes of the objects of one resource type (every namespace) that `keep`
    /// accepts, in the store's key order (name order for a cluster-scoped resource). Only what
    /// is kept is copied, keys never: for a check on every write that looks for a few objects
    /// among many by their text (admission's look for the default PriorityClass on every pod
    /// create).
    pub fn matching(&self, resource: &str, keep: impl Fn(&[u8]) -> bool) -> Vec<StoredObject> {
        let inner = self.lock();
        inner
            .objects
            .get(resource)
            .into_iter()
            .flat_map(|objects| objects.values())
            .filter(|bytes| keep(bytes))
            .cloned()
            .collect()
    }

    /// Every resource key that has objects.
    pub fn resources(&self) -> Vec<String> {
        self.lock()
            .objects
            .iter()
            .filter(|(_, m)| !m.is_empty())
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Atomically reads an object, lets `decide` compute its next state, and writes that.
    ///
    /// `decide` receives the current object (parsed) or `None`. A `Put` whose content equals the
    /// current object (ignoring `metadata.resourceVersion`) is a no-op: no new revision, no
    /// event.
    pub fn mutate<F>(
        &self,
        resource: &str,
        namespace: &str,
        name: &str,
        decide: F,
    ) -> Result<Outcome, ApiError>
    where
        F: FnOnce(Option<&Value>) -> Result<Mutation, ApiError>,
    {
        self.mutate_derived(resource, namespace, name, |current, _| {
            Ok(Decision::plain(decide(current)?))
        })
    }

    /// [`Store::mutate`] for a caller that keeps something derived from each stored version:
    /// `decide` also gets what it derived from the current version (if the store still has it)
    /// and returns, with a `Put`, what it derived from the object it writes, which the store
    /// keeps beside that version's parse (dropped with it), and whether that object is encoded
    /// already ([`Decision::encoded`]).
    pub fn mutate_derived<F>(
        &self,
        resource: &str,
        namespace: &str,
        name: &str,
        decide: F,
    ) -> Result<Outcome, ApiError>
    where
        F: FnOnce(Option<&Value>, Option<&Derived>) -> Result<Decision, ApiError>,
    {
        let mut inner = self.lock();
        let key = (namespace.to_string(), name.to_string());
        let (current_bytes, current, derived, current_texts) =
            match inner.current(resource, &key)? {
                Some((bytes, value, derived, texts)) => (Some(bytes), Some(value), derived, texts),
                None => (None, None, None, None),
            };
        let Decision {
            mutation,
            derived: written_derived,
            encoded,
        } = decide(current.as_deref(), derived.as_ref())?;
        match mutation {
            Mutation::Unchanged(object) => Ok(Outcome {
                object: Arc::new(object),
                stored: None,
                event: None,
            }),
            Mutation::Put(mut object) => {
                if encoded {
                    self.debug_check_encoded(resource, &object);
                } else {
                    self.encode_for(resource, &mut object);
                }
                let revision = inner.revision + 1;
                let new_rv = revision.to_string();
                set_resource_version(&mut object, &new_rv);
                // The maps the object shares with the current version (alive: `current` holds
                // its parse) are copied from its text; a new object's, with the last created.
                let written = match (&current_bytes, current_texts) {
                    (Some(bytes), Some(texts)) => Some(json_writer::Written { bytes, texts }),
                    (None, _) => inner.last_created.get(resource).map(LastCreated::written),
                    _ => None,
                };
                let (bytes, texts) = encode_reusing(
                    &object,
                    current_bytes.as_ref().map_or(0, Bytes::len),
                    written,
                );
                if let (Some(old), Some(stored)) = (&current_bytes, &current) {
                    // Identical to what is stored but for the revision: no new revision, no
                    // event.
                    let old_rv = resource_version_of(stored);
                    if differs_only_in_revision(old, &old_rv, &bytes, &new_rv) {
                        set_resource_version(&mut object, &old_rv);
                        return Ok(Outcome {
                            object: Arc::new(object),
                            stored: Some(old.clone()),
                            event: None,
                        });
                    }
                }
                inner.reindex(resource, &key, current.as_deref(), Some(&object));
                let object = Arc::new(object);
                if current.is_none() {
                    if let Some(texts) = &texts {
                        inner.remember_created(resource, &bytes, &object, texts);
                    }
                }
                inner.parsed.insert(
                    resource,
                    key.clone(),
                    bytes.clone(),
                    object.clone(),
                    written_derived,
                    texts,
                );
                let event_type =
                    self.store_version(&mut inner, resource, key, revision, &bytes, current_bytes);
                Ok(Outcome {
                    object,
                    stored: Some(bytes),
                    event: Some(event_type),
                })
            }
            Mutation::Finalize(mut response) => {
                let Some(last) = current else {
                    return Err(ApiError::internal("delete of an object that is not stored"));
                };
                set_resource_version(&mut response, &resource_version_of(&last));
                inner.reindex(resource, &key, Some(&last), None);
                let last = Arc::unwrap_or_clone(last);
                self.remove(&mut inner, resource, key, last, current_bytes)?;
                Ok(Outcome {
                    object: Arc::new(response),
                    stored: None,
                    event: Some(EventType::Deleted),
                })
            }
            Mutation::Delete(last) => {
                let Some(stored) = &current else {
                    return Err(ApiError::internal("delete of an object that is not stored"));
                };
                inner.reindex(resource, &key, Some(stored), None);
                let last = self.remove(&mut inner, resource, key, last, current_bytes)?;
                Ok(Outcome {
                    object: Arc::new(last),
                    stored: None,
                    event: Some(EventType::Deleted),
                })
            }
        }
    }

    /// Writes bytes that are already encoded as stored (the server's recorded start-up writes,
    /// see `crate::bootstrap`): `make` is given the new resourceVersion and returns the object's
    /// bytes carrying it. Indexes, history and watchers see an ordinary write (an `ADDED` or
    /// `MODIFIED` event); the bytes are parsed only when an index needs them (owner references,
    /// an indexed label key), and not kept parsed.
    pub fn put_encoded(
        &self,
        resource: &str,
        namespace: &str,
        name: &str,
        make: impl FnOnce(&str) -> Bytes,
    ) -> (EventType, Bytes) {
        let mut inner = self.lock();
        let key = (namespace.to_string(), name.to_string());
        let revision = inner.revision + 1;
        let bytes = make(&revision.to_string());
        let previous = inner
            .objects
            .get(resource)
            .and_then(|objects| objects.get(lookup(&key).as_key()))
            .cloned();
        let indexed = inner.labelled.contains_key(resource)
            || names_owners(&bytes)
            || previous.as_deref().is_some_and(names_owners);
        if indexed {
            let parse = |b: &Bytes| json::from_slice(b).ok();
            let old = previous.as_ref().and_then(parse);
            let new = parse(&bytes);
            inner.reindex(resource, &key, old.as_ref(), new.as_ref());
        }
        inner.parsed.remove(resource, &key);
        let event_type = self.store_version(&mut inner, resource, key, revision, &bytes, previous);
        (event_type, bytes)
    }

    /// Makes `bytes` the stored version of `key` at `revision` (the next one) and records the
    /// write's event: `MODIFIED` when there was a `previous` version, else `ADDED`. Indexes and
    /// the parse cache are the caller's.
    fn store_version(
        &self,
        inner: &mut Inner,
        resource: &str,
        key: (String, String),
        revision: u64,
        bytes: &Bytes,
        previous: Option<Bytes>,
    ) -> EventType {
        inner.revision = revision;
        let (namespace, name) = key.clone();
        inner
            .objects
            .entry(resource.to_string())
            .or_default()
            .insert(ObjectKey::new(key), bytes.clone());
        let event_type = if previous.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(
            inner,
            StoreEvent {
                revision,
                event_type,
                resource: Arc::from(resource),
                namespace,
                name,
                object: bytes.clone(),
                previous,
            },
        );
        event_type
    }

    /// Runs `decide` as [`Store::mutate`] would, without writing anything (server-side dry run).
    pub fn preview<F>(
        &self,
        resource: &str,
        namespace: &str,
        name: &str,
        decide: F,
    ) -> Result<Outcome, ApiError>
    where
        F: FnOnce(Option<&Value>) -> Result<Mutation, ApiError>,
    {
        let key = (namespace.to_string(), name.to_string());
        let current = self
            .lock()
            .current(resource, &key)?
            .map(|(_, value, _, _)| value);
        let (object, event) = match decide(current.as_deref())? {
            Mutation::Unchanged(object) => (object, None),
            Mutation::Put(mut object) => {
                self.encode_for(resource, &mut object);
                let event = if current.is_some() {
                    EventType::Modified
                } else {
                    EventType::Added
                };
                (object, Some(event))
            }
            Mutation::Delete(object) | Mutation::Finalize(object) => {
                (object, Some(EventType::Deleted))
            }
        };
        Ok(Outcome {
            object: Arc::new(object),
            stored: None,
            event,
        })
    }

    /// Removes an object at the next revision; watchers get a DELETED event carrying `last`
    /// (stamped with that revision), which is returned.
    fn remove(
        &self,
        inner: &mut Inner,
        resource: &str,
        key: (String, String),
        mut last: Value,
        previous: Option<Bytes>,
    ) -> Result<Value, ApiError> {
        let revision = inner.revision + 1;
        set_resource_version(&mut last, &revision.to_string());
        let bytes = encode(&last, previous.as_ref().map_or(0, Bytes::len));
        inner.revision = revision;
        if let Some(m) = inner.objects.get_mut(resource) {
            m.remove(lookup(&key).as_key());
        }
        inner.parsed.remove(resource, &key);
        let (namespace, name) = key;
        self.record(
            inner,
            StoreEvent {
                revision,
                event_type: EventType::Deleted,
                resource: Arc::from(resource),
                namespace,
                name,
                object: bytes,
                previous,
            },
        );
        Ok(last)
    }

    fn record(&self, inner: &mut Inner, event: StoreEvent) {
        let event = Arc::new(event);
        inner.history_bytes += event.object.len();
        inner.history.push_back(event.clone());
        while inner.history.len() > inner.history_limit
            || (inner.history_bytes > inner.history_bytes_limit && inner.history.len() > 1)
        {
            let Some(dropped) = inner.history.pop_front() else {
                break;
            };
            inner.history_bytes -= dropped.object.len();
            inner.compacted = dropped.revision;
        }
        // Sent under the lock so that every receiver sees events in revision order. Without a
        // channel there is no receiver to send to.
        if let Some(live) = self.live.get() {
            let _ = live.send(event);
        }
    }

    /// The current state of one resource type (optionally one namespace).
    pub fn snapshot(&self, resource: &str, namespace: Option<&str>) -> Snapshot {
        let inner = self.lock();
        Snapshot {
            revision: inner.revision,
            items: collect(inner.objects.get(resource), namespace),
        }
    }

    /// [`Store::snapshot`] parsed: the revision and every object of a resource (optionally one
    /// namespace) in key order, each a copy of the parse cache's where it holds that version
    /// (a copy costs less than a parse), the others parsed outside the lock.
    pub fn snapshot_values(&self, resource: &str, namespace: Option<&str>) -> (u64, Vec<Value>) {
        let (revision, read) = {
            let inner = self.lock();
            let read: Vec<Result<Value, StoredObject>> =
                collect(inner.objects.get(resource), namespace)
                    .iter()
                    .map(|(key, bytes)| inner.cached_copy(resource, key, bytes))
                    .collect();
            (inner.revision, read)
        };
        (
            revision,
            read.into_iter().filter_map(parsed_or_parse).collect(),
        )
    }

    /// [`Store::snapshot`] keeping only the objects labelled `label` (`(key, value)`): the same
    /// revision and the same order, read from the label index instead of every object of the
    /// resource. A real server's watch cache does this for the labels a resource indexes
    /// (`IndexLabels`); a list by an equality selector then costs the objects it can match.
    /// The first such read of a label key indexes it (one read of every object of the
    /// resource); beyond [`labels::MAX_INDEXED_KEYS`] keys per resource, a read of another key
    /// reads every object.
    pub fn snapshot_labelled(
        &self,
        resource: &str,
        namespace: Option<&str>,
        label: (&str, &str),
    ) -> Snapshot {
        let mut guard = self.lock();
        let inner = &mut *guard;
        let revision = inner.revision;
        let Some(objects) = inner.objects.get(resource) else {
            return Snapshot {
                revision,
                items: Vec::new(),
            };
        };
        let index = inner.labelled.entry(resource.to_string()).or_default();
        if !index.indexes(label.0) {
            if !index.has_room() {
                let carries = |bytes: &Bytes| {
                    labels::label_of_bytes(bytes, label.0).as_deref() == Some(label.1)
                };
                let items = collect(Some(objects), namespace)
                    .into_iter()
                    .filter(|(_, bytes)| carries(bytes))
                    .collect();
                return Snapshot { revision, items };
            }
            index.add_key(label.0, objects.iter().map(|(k, b)| (k, b.as_ref())));
        }
        let Some(Some(keys)) = index.get(label) else {
            return Snapshot {
                revision,
                items: Vec::new(),
            };
        };
        let item = |k: &ObjectKey| Some((k.pair().clone(), objects.get(k)?.clone()));
        let items = match namespace {
            Some(ns) => {
                let first = key::Lookup::new(ns, "");
                keys.range::<dyn KeyParts, _>(key::from(&first))
                    .take_while(|k| key::in_namespace(*k, ns))
                    .filter_map(item)
                    .collect()
            }
            None => in_key_order(keys.iter().filter_map(item).collect()),
        };
        Snapshot { revision, items }
    }

    /// The stored objects whose `metadata.ownerReferences` name `uid`, as
    /// `(resource key, (namespace, name), object)` in resource and key order: an index lookup,
    /// not a read of every object.
    pub fn owned_by(&self, uid: &str) -> Vec<(String, (String, String), StoredObject)> {
        let inner = self.lock();
        let Some(keys) = inner.owned.get(uid) else {
            return Vec::new();
        };
        keys.iter()
            .filter_map(|(resource, key)| {
                let bytes = inner.objects.get(resource)?.get(lookup(key).as_key())?;
                Some((resource.clone(), key.clone(), bytes.clone()))
            })
            .collect()
    }

    /// The state of one resource type as it was at `revision`, rebuilt from the history.
    ///
    /// Fails with 410 Expired when that revision has been compacted away.
    pub fn snapshot_at(
        &self,
        resource: &str,
        namespace: Option<&str>,
        revision: u64,
    ) -> Result<Snapshot, ApiError> {
        let inner = self.lock();
        if revision > inner.revision {
            return Err(too_large_rv(revision, inner.revision));
        }
        if revision < inner.compacted {
            // etcd's `ErrCompacted` for a list (storage's `expired`); a paged list's caller
            // turns it into the continue variant.
            return Err(ApiError::expired(
                "The resourceVersion for the provided list is too old.",
            ));
        }
        let mut state: Objects = inner.objects.get(resource).cloned().unwrap_or_default();
        for event in inner.history.iter().rev() {
            if event.revision <= revision {
                break;
            }
            if &*event.resource != resource {
                continue;
            }
            let key = (event.namespace.clone(), event.name.clone());
            match &event.previous {
                Some(prev) => {
                    state.insert(ObjectKey::new(key), prev.clone());
                }
                None => {
                    state.remove(lookup(&key).as_key());
                }
            }
        }
        Ok(Snapshot {
            revision,
            items: collect(Some(&state), namespace),
        })
    }

    /// Starts a watch: the events after `revision` still in the history, and a receiver for
    /// every later one, taken atomically so nothing is missed or repeated.
    pub fn watch_from(&self, revision: u64) -> Result<WatchStart, ApiError> {
        let inner = self.lock();
        if revision < inner.compacted {
            return Err(ApiError::expired(format!(
                "too old resource version: {revision} ({})",
                inner.compacted + 1
            )));
        }
        let backlog = inner
            .history
            .iter()
            .filter(|e| e.revision > revision)
            .cloned()
            .collect();
        Ok((backlog, self.live().subscribe()))
    }

    /// The current state of one resource type and a receiver for every later event, atomically.
    pub fn snapshot_and_subscribe(
        &self,
        resource: &str,
        namespace: Option<&str>,
    ) -> (Snapshot, broadcast::Receiver<Arc<StoreEvent>>) {
        let inner = self.lock();
        let snapshot = Snapshot {
            revision: inner.revision,
            items: collect(inner.objects.get(resource), namespace),
        };
        (snapshot, self.live().subscribe())
    }

    /// A receiver for every event from now on (the harness's view of the event log).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<StoreEvent>> {
        self.live().subscribe()
    }

    /// Every stored object, for saving state.
    pub fn dump(&self) -> (u64, Vec<(String, StoredObject)>) {
        let inner = self.lock();
        let mut out = Vec::new();
        for (resource, objects) in &inner.objects {
            for bytes in objects.values() {
                out.push((resource.clone(), bytes.clone()));
            }
        }
        (inner.revision, out)
    }

    /// Replaces everything with saved state; history starts empty at `revision`.
    pub fn load(&self, revision: u64, objects: Vec<(String, String, String, StoredObject)>) {
        let mut inner = self.lock();
        inner.objects.clear();
        inner.parsed.clear();
        inner.owned.clear();
        inner.labelled.clear();
        for (resource, namespace, name, bytes) in objects {
            let key = (namespace, name);
            if let Ok(object) = json::from_slice(&bytes) {
                inner.reindex(&resource, &key, None, Some(&object));
            }
            inner
                .objects
                .entry(resource)
                .or_default()
                .insert(ObjectKey::new(key), bytes);
        }
        inner.revision = revision.max(inner.revision);
        inner.history.clear();
        inner.history_bytes = 0;
        inner.compacted = inner.revision;
    }
}

/// Encodes an object for storing. `size_hint` is the size of its previous version (0 if none:
/// then the size of the last new object encoded is the guess): a buffer of about that size
/// usually fits at once, and is kept as is when little of it is
/// left unused; otherwise the bytes are copied to an exact-size buffer, since spare capacity
/// would stay allocated for as long as the object is stored.
fn encode(object: &Value, size_hint: usize) -> Bytes {
    encode_reusing(object, size_hint, None).0
}

/// [`encode`], copying the text of the maps the object shares with `written` (see
/// [`json_writer::write_sharing`]), and recording its own maps' texts. Debug builds (every test
/// run) check that the bytes are what writing the whole object gives.
fn encode_reusing(
    object: &Value,
    size_hint: usize,
    written: Option<json_writer::Written<'_>>,
) -> (Bytes, Option<MapTexts>) {
    const SLACK: usize = 64;
    thread_local! {
        /// The size of the last object this thread encoded without a previous version: the
        /// guess for the next such one (creates come in runs of alike objects).
        static LAST_NEW_SIZE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }
    let guess = match size_hint {
        0 => LAST_NEW_SIZE.with(std::cell::Cell::get),
        known => known,
    };
    let mut buffer = Vec::with_capacity(if guess == 0 { 256 } else { guess + SLACK });
    let reusing = written.is_some();
    let texts = json_writer::write_sharing(object, &mut buffer, written);
    if size_hint == 0 {
        LAST_NEW_SIZE.with(|last| last.set(buffer.len()));
    }
    if cfg!(debug_assertions) && reusing {
        let mut whole = Vec::new();
        json_writer::write(object, &mut whole);
        assert!(
            whole == buffer,
            "a copied map text differs from the map written:\n{}\n{}",
            String::from_utf8_lossy(&buffer),
            String::from_utf8_lossy(&whole)
        );
    }
    let bytes = if buffer.capacity() - buffer.len() <= SLACK {
        Bytes::from(buffer)
    } else {
        Bytes::copy_from_slice(&buffer)
    };
    (bytes, Some(texts))
}

/// `504 Timeout` for a read at a revision the store has not reached, as storage's
/// `NewTooLargeResourceVersionError` builds it: `NewTimeoutError`'s `Timeout: ` message, a
/// retry after a second, and the `ResourceVersionTooLarge` cause (what client-go's reflector
/// looks for to fall back to a fresh list).
pub fn too_large_rv(asked: u64, current: u64) -> ApiError {
    let mut err = ApiError::new(
        504,
        "Timeout",
        format!("Timeout: Too large resource version: {asked}, current: {current}"),
    );
    err.retry_after_seconds = Some(1);
    err.causes.push(crate::error::StatusCause {
        reason: "ResourceVersionTooLarge".into(),
        message: "Too large resource version".into(),
        field: String::new(),
    });
    err
}

fn collect(objects: Option<&Objects>, namespace: Option<&str>) -> Vec<((String, String), Bytes)> {
    let Some(objects) = objects else {
        return Vec::new();
    };
    match namespace {
        Some(ns) => {
            let first = key::Lookup::new(ns, "");
            objects
                .range::<dyn KeyParts, _>(key::from(&first))
                .take_while(|(k, _)| key::in_namespace(*k, ns))
                .map(|(k, v)| (k.pair().clone(), v.clone()))
                .collect()
        }
        None => in_key_order(
            objects
                .iter()
                .map(|(k, v)| (k.pair().clone(), v.clone()))
                .collect(),
        ),
    }
}

/// Orders `(namespace, name)` keys as the real server's storage keys `<namespace>/<name>` sort
/// (etcd, and the watch cache's B-tree): across namespaces a list is in that order, in which
/// namespace `a-b` comes before `a` (`-` sorts before `/`). Within one namespace, and for
/// cluster-scoped objects (empty namespace), it is the order of the names.
pub fn key_order(a: &(String, String), b: &(String, String)) -> std::cmp::Ordering {
    fn storage_key((namespace, name): &(String, String)) -> impl Iterator<Item = u8> + '_ {
        let separator: &'static [u8] = if namespace.is_empty() { b"" } else { b"/" };
        namespace
            .bytes()
            .chain(separator.iter().copied())
            .chain(name.bytes())
    }
    if key::in_namespace(a, &b.0) {
        return key::cmp_str(&a.1, &b.1);
    }
    storage_key(a).cmp(storage_key(b))
}

/// Sorts items of several namespaces into [`key_order`]. They come in `(namespace, name)` order,
/// which differs only where one namespace's name is a prefix of another's, so this is mostly a
/// check of a sorted run.
fn in_key_order(mut items: Vec<((String, String), Bytes)>) -> Vec<((String, String), Bytes)> {
    items.sort_by(|a, b| key_order(&a.0, &b.0));
    items
}

/// `metadata.resourceVersion` of an object, or empty.
pub fn resource_version_of(object: &Value) -> String {
    object
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Whether `new` is `old` with only the resourceVersion changed from `old_rv` to `new_rv`, both
/// being encodings of the same object by [`encode`] (so equal content means equal bytes).
///
/// The bytes must then read `prefix "resourceVersion":"<rv>" suffix` with the same prefix and
/// suffix. The prefix is at most the two encodings' common prefix, and it ends with the last
/// `"resourceVersion":"` there (the two revisions are different digit strings, so their common
/// part holds no such key). Since the new object's `metadata.resourceVersion` differs from the
/// old one, a match in any other `resourceVersion` field would leave a second difference and fail
/// the suffix comparison.
fn differs_only_in_revision(old: &[u8], old_rv: &str, new: &[u8], new_rv: &str) -> bool {
    const KEY: &[u8] = br#""resourceVersion":""#;
    if old_rv.is_empty() || old.len() + new_rv.len() != new.len() + old_rv.len() {
        return false;
    }
    let common = common_prefix(old, new);
    let Some(at) = new[..common].windows(KEY.len()).rposition(|w| w == KEY) else {
        return false;
    };
    let value = at + KEY.len();
    let (old_rest, new_rest) = (&old[value..], &new[value..]);
    let quoted = |rest: &[u8], rv: &str| {
        rest.starts_with(rv.as_bytes()) && rest.get(rv.len()) == Some(&b'"')
    };
    quoted(old_rest, old_rv)
        && quoted(new_rest, new_rv)
        && old_rest[old_rv.len()..] == new_rest[new_rv.len()..]
}

/// The length of the longest common prefix of two byte strings.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 64;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + CHUNK <= n && a[i..i + CHUNK] == b[i..i + CHUNK] {
        i += CHUNK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

fn set_resource_version(object: &mut Value, rv: &str) {
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
    }
}

#[cfg(test)]
mod tests {
    /// The Status of a read ahead of the store is storage's `NewTooLargeResourceVersionError`.
    #[test]
    fn a_read_ahead_of_the_store_is_a_timeout_with_the_too_large_cause() {
        let status = too_large_rv(99, 7).to_status();
        assert_eq!(status["code"], 504);
        assert_eq!(status["reason"], "Timeout");
        assert_eq!(
            status["message"],
            "Timeout: Too large resource version: 99, current: 7"
        );
        assert_eq!(
            status["details"],
            serde_json::json!({
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1
            })
        );
    }

    use super::*;
    use serde_json::json;

    fn put(store: &Store, name: &str, data: &str) -> Outcome {
        store
            .mutate("/configmaps", "ns", name, |_| {
                Ok(Mutation::Put(
                    json!({"metadata": {"name": name, "namespace": "ns"}, "data": {"a": data}}),
                ))
            })
            .unwrap()
    }

    #[test]
    fn counts_are_per_resource_and_read_together() {
        let store = Store::new(10);
        put(&store, "a", "1");
        put(&store, "b", "2");
        store
            .mutate("/secrets", "ns", "s", |_| {
                Ok(Mutation::Put(
                    json!({"metadata": {"name": "s", "namespace": "ns"}}),
                ))
            })
            .unwrap();
        assert_eq!(
            store.counts(["/configmaps", "/secrets", "/pods"]),
            [2, 1, 0]
        );
        assert_eq!(store.count("/configmaps"), 2);
        delete(&store, "a");
        assert_eq!(store.counts(["/configmaps", "/secrets"]), [1, 1]);
    }

    #[test]
    fn matching_gives_the_kept_objects_bytes_in_key_order() {
        let store = Store::new(10);
        for (name, data) in [("c", "yes"), ("a", "yes"), ("b", "no")] {
            put(&store, name, data);
        }
        let kept = store.matching("/configmaps", |bytes| {
            String::from_utf8_lossy(bytes).contains("\"yes\"")
        });
        let names: Vec<Value> = kept
            .iter()
            .map(|bytes| json::from_slice(bytes).unwrap()["metadata"]["name"].clone())
            .collect();
        assert_eq!(names, [json!("a"), json!("c")]);
        assert_eq!(kept[0], store.get("/configmaps", "ns", "a").unwrap());
        assert!(store.matching("/secrets", |_| true).is_empty());
        assert!(store.matching("/configmaps", |_| false).is_empty());
    }

    #[test]
    fn every_write_takes_the_next_revision() {
        let store = Store::new(10);
        assert_eq!(resource_version_of(&put(&store, "a", "1").object), "1");
        assert_eq!(resource_version_of(&put(&store, "b", "1").object), "2");
        let again = put(&store, "a", "2");
        assert_eq!(again.event, Some(EventType::Modified));
        assert_eq!(resource_version_of(&again.object), "3");
        assert_eq!(store.revision(), 3);
    }

    #[test]
    fn a_write_that_changes_nothing_keeps_the_revision() {
        let store = Store::new(10);
        put(&store, "a", "1");
        let same = put(&store, "a", "1");
        assert_eq!(same.event, None);
        assert_eq!(resource_version_of(&same.object), "1");
        assert_eq!(store.revision(), 1);
    }

    #[test]
    fn snapshot_at_rebuilds_the_past() {
        let store = Store::new(100);
        put(&store, "a", "1");
        put(&store, "b", "1");
        put(&store, "a", "2");
        store
            .mutate("/configmaps", "ns", "b", |cur| {
                Ok(Mutation::Delete(cur.unwrap().clone()))
            })
            .unwrap();
        let past = store.snapshot_at("/configmaps", Some("ns"), 2).unwrap();
        assert_eq!(past.items.len(), 2);
        let a: Value = serde_json::from_slice(&past.items[0].1).unwrap();
        assert_eq!(a["data"]["a"], "1");
        let now = store.snapshot("/configmaps", Some("ns"));
        assert_eq!(now.items.len(), 1);
    }

    #[test]
    fn old_revisions_expire() {
        let store = Store::new(2);
        for i in 0..5 {
            put(&store, "a", &i.to_string());
        }
        assert_eq!(store.watch_from(1).unwrap_err().code, 410);
        let (backlog, _) = store.watch_from(3).unwrap();
        assert_eq!(
            backlog.iter().map(|e| e.revision).collect::<Vec<_>>(),
            vec![4, 5]
        );
        assert_eq!(
            store.snapshot_at("/configmaps", None, 1).unwrap_err().code,
            410
        );
        assert_eq!(
            store.snapshot_at("/configmaps", None, 9).unwrap_err().code,
            504
        );
    }

    #[rstest::rstest]
    #[case::only_the_revision(
        r#"{"metadata":{"name":"a","resourceVersion":"9"},"x":1}"#,
        "9",
        r#"{"metadata":{"name":"a","resourceVersion":"10"},"x":1}"#,
        "10",
        true
    )]
    #[case::shared_digits(
        r#"{"metadata":{"resourceVersion":"12"},"x":1}"#,
        "12",
        r#"{"metadata":{"resourceVersion":"123"},"x":1}"#,
        "123",
        true
    )]
    #[case::content_too(
        r#"{"metadata":{"resourceVersion":"9"},"x":1}"#,
        "9",
        r#"{"metadata":{"resourceVersion":"10"},"x":2}"#,
        "10",
        false
    )]
    #[case::same_length_change(
        r#"{"metadata":{"resourceVersion":"9"},"x":"ab"}"#,
        "9",
        r#"{"metadata":{"resourceVersion":"10"},"x":"a"}"#,
        "10",
        false
    )]
    #[case::another_field_named_so(
        r#"{"spec":{"resourceVersion":"9"},"metadata":{"resourceVersion":"9"}}"#,
        "9",
        r#"{"spec":{"resourceVersion":"10"},"metadata":{"resourceVersion":"10"}}"#,
        "10",
        false
    )]
    #[case::no_revision_stored(
        r#"{"metadata":{}}"#,
        "",
        r#"{"metadata":{"resourceVersion":"1"}}"#,
        "1",
        false
    )]
    fn a_no_op_write_is_recognised_in_the_bytes(
        #[case] old: &str,
        #[case] old_rv: &str,
        #[case] new: &str,
        #[case] new_rv: &str,
        #[case] same: bool,
    ) {
        assert_eq!(
            differs_only_in_revision(old.as_bytes(), old_rv, new.as_bytes(), new_rv),
            same
        );
    }

    #[test]
    fn common_prefix_spans_chunks() {
        let a = vec![7u8; 200];
        let mut b = a.clone();
        assert_eq!(common_prefix(&a, &b), 200);
        b[130] = 0;
        assert_eq!(common_prefix(&a, &b), 130);
        assert_eq!(common_prefix(&a[..10], &b), 10);
    }

    #[test]
    fn writes_reuse_the_parse_of_what_they_stored() {
        let store = Store::new(10);
        put(&store, "a", "1");
        let (_, parsed, _, texts) = store
            .lock()
            .current("/configmaps", &("ns", "a"))
            .unwrap()
            .map(|(bytes, parsed, derived, texts)| {
                (bytes, parsed, derived, texts.map(|t| t.to_vec()))
            })
            .unwrap();
        // Where its maps' texts were written is kept with the parse.
        assert!(texts.is_some());
        // The cache hands out the very value the write stored.
        assert!(Arc::strong_count(&parsed) >= 2);
        assert_eq!(parsed["data"]["a"], "1");
        put(&store, "a", "2");
        let parsed = store
            .lock()
            .current("/configmaps", &("ns", "a"))
            .unwrap()
            .unwrap()
            .1;
        assert_eq!(parsed["data"]["a"], "2");
        assert_eq!(resource_version_of(&parsed), "2");
        let read = store.get_parsed("/configmaps", "ns", "a").unwrap();
        assert!(
            Arc::ptr_eq(&read, &parsed),
            "a read shares the cached parse"
        );
        store
            .mutate("/configmaps", "ns", "a", |cur| {
                Ok(Mutation::Delete(cur.unwrap().clone()))
            })
            .unwrap();
        assert_eq!(store.lock().parsed.len(), 0);
        assert!(store.get_parsed("/configmaps", "ns", "a").is_none());
    }

    #[test]
    fn a_read_keeps_the_parse_of_an_object_nobody_writes() {
        let store = Store::new(100);
        put(&store, "read", "1");
        // Written once, then crowded out of the cache by objects written after it.
        for i in 0..=parsed::PROBATION {
            put(&store, &format!("other-{i}"), "1");
        }
        let first = store.get_parsed("/configmaps", "ns", "read").unwrap();
        let again = store.get_parsed("/configmaps", "ns", "read").unwrap();
        assert!(
            Arc::ptr_eq(&first, &again),
            "the second read is not parsed again"
        );
        assert_eq!(again["data"]["a"], "1");
        // What the store keeps is the parse of the stored version only: a write replaces it.
        put(&store, "read", "2");
        assert_eq!(
            store.get_parsed("/configmaps", "ns", "read").unwrap()["data"]["a"],
            "2"
        );
    }

    /// An encoder that writes `data.a` in upper case (idempotent, as the real one is).
    fn upper_case(_: &str, object: &mut Value) {
        if let Some(Value::String(a)) = object.pointer_mut("/data/a") {
            *a = a.to_uppercase();
        }
    }

    /// Puts `object` as encoded (nothing derived).
    fn put_encoded_object(store: &Store, object: Value) -> Bytes {
        put_encoded_named(store, "a", object, |_| {})
    }

    /// Puts `object` as `name` marked encoded, after `check` looked at the current version.
    fn put_encoded_named(
        store: &Store,
        name: &str,
        object: Value,
        check: impl FnOnce(Option<&Value>),
    ) -> Bytes {
        store
            .mutate_derived("/configmaps", "ns", name, |current, _| {
                check(current);
                Ok(Decision {
                    mutation: Mutation::Put(object),
                    derived: None,
                    encoded: true,
                })
            })
            .unwrap()
            .stored
            .unwrap()
    }

    /// The texts the cache keeps with the stored version of `a`, and its parse.
    fn cached_texts(store: &Store) -> (Arc<Value>, Vec<json_writer::MapText>) {
        let inner = store.lock();
        let (_, value, _, texts) = inner.current("/configmaps", &("ns", "a")).unwrap().unwrap();
        (value, texts.map(|t| t.to_vec()).unwrap_or_default())
    }

    #[test]
    fn maps_shared_with_the_stored_version_keep_their_text_on_record() {
        let store = Store::new(10);
        let long = "x".repeat(300);
        put_encoded_object(
            &store,
            json!({"metadata": {"name": "a"}, "data": {"k": long, "n": [1, 2]}, "x": 1}),
        );
        // The next version is a changed copy of the stored parse: it shares `data`.
        let (stored, _) = cached_texts(&store);
        let mut next = Value::clone(&stored);
        next["x"] = json!(2);
        let bytes = put_encoded_object(&store, next);
        let (stored, texts) = cached_texts(&store);
        let data = stored["data"].as_object().unwrap();
        let text = texts
            .iter()
            .find(|t| Some(t.id) == data.entries_id())
            .expect("the shared map's text is on record");
        assert_eq!(
            &bytes[text.start..text.end],
            json_writer::to_vec(&stored["data"], 0).as_slice()
        );
        assert_eq!(
            std::str::from_utf8(&bytes).unwrap(),
            format!(
                r#"{{"data":{{"k":"{long}","n":[1,2]}},"metadata":{{"name":"a","resourceVersion":"2"}},"x":2}}"#
            )
        );
        // Short maps are not worth a record (a `null` member's cut is not a map's text).
        assert!(texts
            .iter()
            .filter(|t| t.id != json_writer::NULL_CUT)
            .all(|t| t.end - t.start >= json_writer::MIN_RECORDED));
    }

    /// Creates `object` as `name` (encoded, nothing derived); the stored bytes.
    fn create_encoded(store: &Store, name: &str, object: Value) -> Bytes {
        put_encoded_named(store, name, object, |current| {
            assert!(current.is_none(), "{name} is new")
        })
    }

    /// Deletes `name`.
    fn delete(store: &Store, name: &str) {
        store
            .mutate("/configmaps", "ns", name, |current| {
                Ok(Mutation::Delete(current.unwrap().clone()))
            })
            .unwrap();
    }

    #[test]
    fn a_create_keeps_its_version_for_the_next_one_of_its_resource() {
        let store = Store::new(10);
        let template = json!({"metadata": {"name": "a"}, "data": {"k": "x".repeat(300)}});
        let first = create_encoded(&store, "a", template.clone());
        {
            let inner = store.lock();
            let kept = &inner.last_created["/configmaps"];
            assert_eq!(kept.bytes, first);
            let data = template["data"].as_object().unwrap();
            assert!(
                kept.written().text_of_map(data).is_some(),
                "the shared map is on record"
            );
        }
        // Deleted, it is still what the next create shares maps with; and that create's bytes
        // are the whole object's.
        delete(&store, "a");
        let mut next = template.clone();
        next["metadata"]["name"] = json!("b");
        let second = create_encoded(&store, "b", next.clone());
        set_resource_version(&mut next, "3");
        assert_eq!(second, json_writer::to_vec(&next, 0));
        assert_eq!(store.lock().last_created["/configmaps"].bytes, second);
        // A large object is not kept: the last one small enough stays.
        let large = json!({"metadata": {"name": "c"}, "data": {"k": "x".repeat(LAST_CREATED_MAX)}});
        create_encoded(&store, "c", large);
        assert_eq!(store.lock().last_created["/configmaps"].bytes, second);
        // A create of `a` again is kept; its update is not.
        let created = put_encoded_object(&store, json!({"metadata": {"name": "a"}}));
        put_encoded_object(&store, json!({"metadata": {"name": "a"}, "x": 1}));
        assert_eq!(store.lock().last_created["/configmaps"].bytes, created);
    }

    /// The text a create copies is the last created version's: shown by doctoring that text,
    /// which debug builds' check of every copying write then finds.
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "a copied map text differs")]
    fn a_create_copies_the_maps_it_shares_with_the_last_created_version() {
        let store = Store::new(10);
        let template = json!({"metadata": {"name": "a"}, "data": {"k": "x".repeat(300)}});
        create_encoded(&store, "a", template.clone());
        {
            let mut inner = store.lock();
            let kept = inner.last_created.get_mut("/configmaps").unwrap();
            let doctored = String::from_utf8(kept.bytes.to_vec())
                .unwrap()
                .replace("xxx", "yyy");
            kept.bytes = Bytes::from(doctored);
        }
        let mut next = template.clone();
        next["metadata"]["name"] = json!("b");
        create_encoded(&store, "b", next);
    }

    /// Writes `data.a = value` to a store with [`upper_case`] as its encoder, saying whether it
    /// is encoded already; the stored bytes.
    fn write_claiming(store: &Store, value: &str, encoded: bool) -> Bytes {
        store
            .mutate_derived("/configmaps", "ns", "a", |_, _| {
                Ok(Decision {
                    mutation: Mutation::Put(
                        json!({"metadata": {"name": "a"}, "data": {"a": value}}),
                    ),
                    derived: None,
                    encoded,
                })
            })
            .unwrap()
            .stored
            .unwrap()
    }

    #[test]
    fn a_write_not_said_to_be_encoded_goes_through_the_encoder() {
        let store = Store::new(10).with_encoder(upper_case);
        let stored = write_claiming(&store, "x", false);
        assert_eq!(
            crate::store::json::from_slice(&stored).unwrap()["data"]["a"],
            "X"
        );
    }

    #[test]
    fn a_write_said_to_be_encoded_is_stored_as_it_is() {
        let store = Store::new(10).with_encoder(upper_case);
        let stored = write_claiming(&store, "Y", true);
        assert_eq!(
            crate::store::json::from_slice(&stored).unwrap()["data"]["a"],
            "Y"
        );
    }

    /// A writer that says its object is encoded when it is not is a bug that debug builds (every
    /// test run) catch at the write.
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "a write said to be encoded changes when encoded")]
    fn a_false_claim_of_encoding_fails_in_debug_builds() {
        let store = Store::new(10).with_encoder(upper_case);
        write_claiming(&store, "lower", true);
    }

    #[test]
    fn what_a_write_derived_is_kept_with_the_version_it_wrote() {
        let store = Store::new(10);
        // Writes `value` keeping `derived`; returns what the store kept from the version before.
        let write = |value: &str, derived: Option<u32>| {
            let mut seen = None;
            store
                .mutate_derived("/configmaps", "ns", "a", |_, previous| {
                    seen = previous.and_then(|d| d.clone().downcast::<u32>().ok());
                    let object = json!({"metadata": {"name": "a"}, "data": {"a": value}});
                    Ok(Decision {
                        mutation: Mutation::Put(object),
                        derived: derived.map(|d| Arc::new(d) as Derived),
                        encoded: false,
                    })
                })
                .unwrap();
            seen.map(|d| *d)
        };
        assert_eq!(write("1", Some(1)), None);
        assert_eq!(write("2", Some(2)), Some(1));
        // A write that keeps nothing leaves nothing for the next.
        assert_eq!(write("3", None), Some(2));
        assert_eq!(write("4", Some(4)), None);
        // A plain write replaces the version: what was kept goes with it.
        put(&store, "a", "5");
        assert_eq!(write("6", None), None);
    }

    #[test]
    fn the_history_is_bounded_in_bytes_too() {
        // Every event carries an object of the same size; room for three and a half.
        let size = put(&Store::new(10), "a", "00000000").stored.unwrap().len();
        let store = Store::with_limits(100, size * 7 / 2);
        for i in 0..10 {
            put(&store, "a", &format!("{i:0>8}"));
        }
        let (backlog, _) = store.watch_from(7).unwrap();
        assert_eq!(
            backlog.iter().map(|e| e.revision).collect::<Vec<_>>(),
            vec![8, 9, 10]
        );
        assert_eq!(store.watch_from(6).unwrap_err().code, 410);
        // One event bigger than the bound is still kept: a watch from just before it works.
        let tiny = Store::with_limits(100, 1);
        put(&tiny, "a", "1");
        put(&tiny, "a", "2");
        assert_eq!(tiny.watch_from(1).unwrap().0.len(), 1);
        assert_eq!(tiny.watch_from(0).unwrap_err().code, 410);
    }

    #[test]
    fn namespace_scoping_is_exact() {
        let store = Store::new(10);
        for ns in ["a", "ab", "b"] {
            store
                .mutate("/configmaps", ns, "x", |_| {
                    Ok(Mutation::Put(json!({"metadata": {"name": "x"}})))
                })
                .unwrap();
        }
        assert_eq!(store.snapshot("/configmaps", Some("a")).items.len(), 1);
        assert_eq!(store.snapshot("/configmaps", None).items.len(), 3);
    }

    /// The owner index follows creates, owner changes, deletions (plain and by finalization)
    /// and a load, so that `owned_by` answers as a scan of every object would.
    #[test]
    fn the_owner_index_follows_every_write() {
        let store = Store::new(100);
        let owned = |owners: &[&str]| {
            let refs: Vec<Value> = owners.iter().map(|u| json!({"uid": u})).collect();
            json!({"metadata": {"ownerReferences": refs}})
        };
        let put = |resource: &str, name: &str, owners: &[&str]| {
            store
                .mutate(resource, "ns", name, |_| Ok(Mutation::Put(owned(owners))))
                .unwrap();
        };
        let names = |uid: &str| -> Vec<String> {
            store
                .owned_by(uid)
                .into_iter()
                .map(|(resource, (_, name), _)| format!("{resource} {name}"))
                .collect()
        };
        put("/pods", "b", &["o1"]);
        put("/configmaps", "a", &["o1", "o2"]);
        put("/pods", "a", &["o2"]);
        assert_eq!(names("o1"), ["/configmaps a", "/pods b"]);
        assert_eq!(names("o2"), ["/configmaps a", "/pods a"]);
        // An owner reference dropped and another added.
        put("/configmaps", "a", &["o3"]);
        assert_eq!(names("o1"), ["/pods b"]);
        assert_eq!(names("o3"), ["/configmaps a"]);
        // Deleted; finalized away.
        store
            .mutate("/pods", "ns", "b", |c| {
                Ok(Mutation::Delete(c.unwrap().clone()))
            })
            .unwrap();
        store
            .mutate("/pods", "ns", "a", |c| {
                Ok(Mutation::Finalize(c.unwrap().clone()))
            })
            .unwrap();
        assert!(names("o1").is_empty());
        assert!(names("o2").is_empty());
        // A load indexes what it loads, and only that.
        let bytes = Bytes::from(serde_json::to_vec(&owned(&["o4"])).unwrap());
        store.load(
            50,
            vec![("/secrets".into(), "ns".into(), "s".into(), bytes)],
        );
        assert!(names("o3").is_empty());
        assert_eq!(names("o4"), ["/secrets s"]);
        assert!(store.owned_by("").is_empty());
    }

    #[test]
    fn the_label_index_follows_every_write() {
        let store = Store::new(100);
        let labelled = |labels: Value| json!({"metadata": {"labels": labels}});
        let put = |ns: &str, name: &str, labels: Value| {
            store
                .mutate("/pods", ns, name, |_| Ok(Mutation::Put(labelled(labels))))
                .unwrap();
        };
        let names = |ns: Option<&str>, label: (&str, &str)| -> Vec<String> {
            store
                .snapshot_labelled("/pods", ns, label)
                .items
                .into_iter()
                .map(|((ns, name), _)| format!("{ns}/{name}"))
                .collect()
        };
        put("b", "x", json!({"app": "web", "tier": "1"}));
        put("a", "y", json!({"app": "web"}));
        put("a", "x", json!({"app": "db", "n": 3}));
        assert_eq!(names(None, ("app", "web")), ["a/y", "b/x"]);
        assert_eq!(names(Some("a"), ("app", "web")), ["a/y"]);
        assert_eq!(names(Some("c"), ("app", "web")), Vec::<String>::new());
        // Only string values are indexed (a selector's value is a string).
        assert!(names(None, ("n", "3")).is_empty());
        // Relabelled: out of the old value, into the new one.
        put("b", "x", json!({"app": "db", "tier": "1"}));
        assert_eq!(names(None, ("app", "web")), ["a/y"]);
        assert_eq!(names(None, ("app", "db")), ["a/x", "b/x"]);
        assert_eq!(names(None, ("tier", "1")), ["b/x"]);
        // Deleted; finalized away.
        store
            .mutate("/pods", "a", "y", |c| {
                Ok(Mutation::Delete(c.unwrap().clone()))
            })
            .unwrap();
        store
            .mutate("/pods", "b", "x", |c| {
                Ok(Mutation::Finalize(c.unwrap().clone()))
            })
            .unwrap();
        assert!(names(None, ("app", "web")).is_empty());
        assert_eq!(names(None, ("app", "db")), ["a/x"]);
        assert!(names(None, ("tier", "1")).is_empty());
        // Another resource's labels are its own.
        assert!(store
            .snapshot_labelled("/configmaps", None, ("app", "db"))
            .items
            .is_empty());
        // A load indexes what it loads, and only that.
        let bytes = Bytes::from(serde_json::to_vec(&labelled(json!({"k": "v"}))).unwrap());
        store.load(50, vec![("/pods".into(), "ns".into(), "s".into(), bytes)]);
        assert!(names(None, ("app", "db")).is_empty());
        assert_eq!(names(None, ("k", "v")), ["ns/s"]);
    }

    /// The indexed read is the full read filtered by the label: same revision, same order,
    /// same bytes, for every label value and namespace, after a random run of writes: for a key
    /// indexed before the writes (`x`), one indexed at the first read after them (`y`, when
    /// there is room), and keys read without an index once the bound is reached.
    #[rstest::rstest]
    #[case::room_for_every_key(0)]
    #[case::bound_reached(labels::MAX_INDEXED_KEYS - 1)]
    fn a_labelled_snapshot_is_the_snapshot_filtered(#[case] filler_keys: usize) {
        use rand::{Rng, SeedableRng};
        let store = Store::new(1000);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let values = ["a", "b", "c"];
        let check = |store: &Store| {
            for ns in [None, Some("ns0"), Some("ns1"), Some("ns9")] {
                let all = store.snapshot("/pods", ns);
                for key in ["x", "y", "z"] {
                    for value in values {
                        let indexed = store.snapshot_labelled("/pods", ns, (key, value));
                        let scanned: Vec<_> = all
                            .items
                            .iter()
                            .filter(|(_, bytes)| {
                                let object: Value = serde_json::from_slice(bytes).unwrap();
                                object["metadata"]["labels"][key] == json!(value)
                            })
                            .cloned()
                            .collect();
                        assert_eq!(indexed.revision, all.revision);
                        assert_eq!(indexed.items, scanned, "{ns:?} {key}={value}");
                    }
                }
            }
        };
        let put = |ns: &str, name: &str, object: Value| {
            store
                .mutate("/pods", ns, name, |_| Ok(Mutation::Put(object)))
                .unwrap();
        };
        put("ns0", "first", json!({"metadata": {"labels": {"x": "a"}}}));
        store.snapshot_labelled("/pods", None, ("x", "a"));
        for i in 0..filler_keys {
            store.snapshot_labelled("/pods", None, (&format!("filler{i}"), "a"));
        }
        for round in 0..400 {
            let ns = format!("ns{}", rng.random_range(0..3));
            let name = format!("o{}", rng.random_range(0..20));
            if rng.random_range(0..5) == 0 {
                let _ = store.mutate("/pods", &ns, &name, |c| match c {
                    Some(c) => Ok(Mutation::Delete(c.clone())),
                    None => Ok(Mutation::Unchanged(Value::Null)),
                });
                continue;
            }
            let mut labels = serde_json::Map::new();
            for key in ["x", "y"] {
                if rng.random_range(0..3) > 0 {
                    let value = values[rng.random_range(0..values.len())];
                    labels.insert(key.into(), json!(value));
                }
            }
            let object = json!({"metadata": {"labels": labels}, "n": rng.random_range(0..9)});
            put(&ns, &name, object);
            if round % 100 == 99 {
                check(&store);
            }
        }
    }
}
