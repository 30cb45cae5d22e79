//! A controller's informer cache whose lag the harness decides: events from the fake API server's
//! log wait in a queue until the scheduler delivers them, one at a time, into a kube-runtime
//! reflector store, the same `Store` type production reconcilers read.

use std::collections::VecDeque;
use std::sync::Arc;

use fake_apiserver::store::{EventType, StoreEvent};
use fake_apiserver::FakeApiServer;
use kube::runtime::reflector::{self, store::Writer, Store};
use kube::runtime::watcher;
use kube::Resource;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::broadcast;

/// Which events a cache receives: one resource, optionally one namespace and a label filter.
#[derive(Debug, Clone)]
pub struct CacheScope {
    /// `apiVersion` of the resource, e.g. `v1`.
    pub api_version: String,
    /// Resource plural, e.g. `pods`.
    pub plural: String,
    /// Store key of the resource, `group/plural` (`/pods` for core).
    pub resource: String,
    /// Only this namespace, if set.
    pub namespace: Option<String>,
    /// Only objects carrying all of these labels.
    pub labels: Vec<(String, String)>,
}

impl CacheScope {
    /// Every object of a resource (`api_version` as in `apps/v1`, `plural` as in `deployments`).
    pub fn all(api_version: &str, plural: &str) -> Self {
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        Self {
            api_version: api_version.to_string(),
            plural: plural.to_string(),
            resource: format!("{group}/{plural}"),
            namespace: None,
            labels: Vec::new(),
        }
    }

    /// Only objects in `namespace`.
    pub fn in_namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.to_string());
        self
    }

    /// Only objects carrying the label `key=value`.
    pub fn with_label(mut self, key: &str, value: &str) -> Self {
        self.labels.push((key.to_string(), value.to_string()));
        self
    }

    fn admits(&self, object: &Value) -> bool {
        let labels = &object["metadata"]["labels"];
        self.labels
            .iter()
            .all(|(k, v)| labels[k.as_str()].as_str() == Some(v.as_str()))
    }
}

/// One delivered change, as the cache saw it (for the watch mappings).
#[derive(Debug, Clone)]
pub enum Delivered<K> {
    /// The object was added or changed (now visible in the cache).
    Applied(Arc<K>),
    /// The object left the cache.
    Deleted(Arc<K>),
}

/// The watch events one informer would receive, held until the scheduler releases them.
///
/// Use it directly to feed a controller's own watch dispatcher (as Karpenter's), or through a
/// [`LaggingCache`] that applies the events to a reflector store.
pub struct EventFeed<K> {
    scope: CacheScope,
    server: FakeApiServer,
    events: broadcast::Receiver<Arc<StoreEvent>>,
    pending: VecDeque<Arc<StoreEvent>>,
    initial: Option<Vec<watcher::Event<K>>>,
}

impl<K> EventFeed<K>
where
    K: Resource + Clone + DeserializeOwned + 'static,
{
    /// A feed of `scope` from now on; [`EventFeed::initial`] gives the initial list.
    pub fn new(server: &FakeApiServer, scope: CacheScope) -> Self {
        let events = server.subscribe();
        let (_, objects) = server.list_objects(
            &scope.api_version,
            &scope.plural,
            scope.namespace.as_deref(),
        );
        let mut initial = vec![watcher::Event::Init];
        for object in objects.into_iter().filter(|o| scope.admits(o)) {
            if let Ok(typed) = serde_json::from_value::<K>(object) {
                initial.push(watcher::Event::InitApply(typed));
            }
        }
        initial.push(watcher::Event::InitDone);
        Self {
            scope,
            server: server.clone(),
            events,
            pending: VecDeque::new(),
            initial: Some(initial),
        }
    }

    /// The initial list as watch events (`Init`, `InitApply`…, `InitDone`), once.
    pub fn initial(&mut self) -> Vec<watcher::Event<K>> {
        self.initial.take().unwrap_or_default()
    }

    /// The watch dropped and could not resume (its resourceVersion expired): the informer lists
    /// again. Events still waiting are never seen — what changed meanwhile arrives as the new
    /// list, and an object deleted meanwhile simply is not in it (no Delete event). Returns the
    /// new list as watch events.
    pub fn relist(&mut self) -> Vec<watcher::Event<K>> {
        let server = self.server.clone();
        *self = Self::new(&server, self.scope.clone());
        self.initial()
    }

    /// Moves newly logged events of this scope into the queue.
    fn pull(&mut self) {
        loop {
            match self.events.try_recv() {
                Ok(event) => {
                    if *event.resource != *self.scope.resource {
                        continue;
                    }
                    if self
                        .scope
                        .namespace
                        .as_deref()
                        .is_some_and(|ns| ns != event.namespace)
                    {
                        continue;
                    }
                    if self.relevant(&event) {
                        self.pending.push_back(event);
                    }
                }
                Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                Err(_) => break,
            }
        }
    }

    /// Whether the object, before or after the event, is in the label scope.
    fn relevant(&self, event: &StoreEvent) -> bool {
        let parse = |b: &[u8]| serde_json::from_slice::<Value>(b).ok();
        parse(&event.object).is_some_and(|o| self.scope.admits(&o))
            || event
                .previous
                .as_deref()
                .and_then(parse)
                .is_some_and(|o| self.scope.admits(&o))
    }

    /// How many events wait to be released.
    pub fn pending(&mut self) -> usize {
        self.pull();
        self.pending.len()
    }

    /// Releases the oldest waiting event, as the watch event the informer would see.
    pub fn next_event(&mut self) -> Option<watcher::Event<K>> {
        self.pull();
        while let Some(event) = self.pending.pop_front() {
            let Some(object) = self.server.event_object(&event) else {
                continue;
            };
            let in_scope = self.scope.admits(&object);
            let Ok(typed) = serde_json::from_value::<K>(object) else {
                continue;
            };
            let watch_event = match (event.event_type, in_scope) {
                (EventType::Deleted, _) | (EventType::Modified, false) => {
                    watcher::Event::Delete(typed)
                }
                (EventType::Added | EventType::Modified, true) => watcher::Event::Apply(typed),
                (EventType::Added, false) => continue,
            };
            return Some(watch_event);
        }
        None
    }
}

/// An informer cache fed by hand: an [`EventFeed`] applied to a reflector store.
pub struct LaggingCache<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: std::hash::Hash + Eq + Clone + Default,
{
    feed: EventFeed<K>,
    writer: Writer<K>,
    store: Store<K>,
}

impl<K> LaggingCache<K>
where
    K: Resource + Clone + DeserializeOwned + 'static,
    K::DynamicType: std::hash::Hash + Eq + Clone + Default,
{
    /// A cache in sync with the server now (its initial list is applied at once); every later
    /// write in its scope waits in its queue until delivered.
    pub fn new(server: &FakeApiServer, scope: CacheScope) -> Self {
        let mut feed = EventFeed::new(server, scope);
        let (store, mut writer) = reflector::store::<K>();
        for event in feed.initial() {
            writer.apply_watcher_event(&event);
        }
        Self {
            feed,
            writer,
            store,
        }
    }

    /// The store reconcilers read.
    pub fn store(&self) -> Store<K> {
        self.store.clone()
    }

    /// How many events wait to be delivered.
    pub fn pending(&mut self) -> usize {
        self.feed.pending()
    }

    /// Lists again after a dropped watch ([`EventFeed::relist`]); the store is replaced by the new
    /// list. Returns the listed objects (what a controller's watch would trigger on).
    pub fn relist(&mut self) -> Vec<Arc<K>> {
        let mut listed = Vec::new();
        for event in self.feed.relist() {
            self.writer.apply_watcher_event(&event);
            if let watcher::Event::InitApply(object) = event {
                listed.push(Arc::new(object));
            }
        }
        listed
    }

    /// Delivers the oldest waiting event into the store; returns what the cache saw.
    pub fn deliver_one(&mut self) -> Option<Delivered<K>> {
        let event = self.feed.next_event()?;
        self.writer.apply_watcher_event(&event);
        match event {
            watcher::Event::Apply(o) => Some(Delivered::Applied(Arc::new(o))),
            watcher::Event::Delete(o) => Some(Delivered::Deleted(Arc::new(o))),
            _ => None,
        }
    }
}

/// Keeps informer lag realistic: virtual time may not move more than `max_lag` past the moment a
/// cache fell behind until it has caught up. Without it, a schedule could leave a cache stale for
/// hours of virtual time, which no real informer does.
#[derive(Debug, Clone)]
pub struct LagBound {
    max_lag: jiff::SignedDuration,
    behind_since: std::collections::BTreeMap<&'static str, jiff::Timestamp>,
}

impl LagBound {
    /// Caches may lag at most `max_lag` behind the server.
    pub fn new(max_lag: jiff::SignedDuration) -> Self {
        Self {
            max_lag,
            behind_since: Default::default(),
        }
    }

    /// Records whether the cache `name` has events waiting, at `now`.
    pub fn observe(&mut self, name: &'static str, pending: usize, now: jiff::Timestamp) {
        if pending == 0 {
            self.behind_since.remove(name);
        } else {
            self.behind_since.entry(name).or_insert(now);
        }
    }

    /// The furthest virtual time may move to: `target`, or earlier if a cache would lag too long.
    pub fn cap(&self, target: jiff::Timestamp) -> jiff::Timestamp {
        self.behind_since
            .values()
            .filter_map(|since| since.checked_add(self.max_lag).ok())
            .fold(target, |t, limit| t.min(limit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_waits_for_lagging_caches() {
        let t0 = jiff::Timestamp::UNIX_EPOCH;
        let later = t0
            .checked_add(jiff::SignedDuration::from_secs(900))
            .unwrap();
        let mut bound = LagBound::new(jiff::SignedDuration::from_secs(1));
        assert_eq!(bound.cap(later), later);
        bound.observe("pods", 2, t0);
        assert_eq!(
            bound.cap(later),
            t0.checked_add(jiff::SignedDuration::from_secs(1)).unwrap()
        );
        bound.observe("pods", 0, t0);
        assert_eq!(bound.cap(later), later);
    }

    #[tokio::test]
    async fn a_relist_replaces_the_store_and_skips_what_was_pending() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let server = FakeApiServer::new();
        let cm = |name: &str| {
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "default"}})
        };
        server.apply_manifest(cm("gone")).unwrap();
        let mut cache: LaggingCache<ConfigMap> =
            LaggingCache::new(&server, CacheScope::all("v1", "configmaps"));
        server.apply_manifest(cm("new")).unwrap();
        kube::Api::<ConfigMap>::namespaced(server.client(), "default")
            .delete("gone", &Default::default())
            .await
            .unwrap();
        assert_eq!(cache.pending(), 2);
        let names = |store: &Store<ConfigMap>| {
            let mut n: Vec<String> = store
                .state()
                .iter()
                .map(|c| c.metadata.name.clone().unwrap_or_default())
                .collect();
            n.sort();
            n
        };
        assert_eq!(names(&cache.store()), ["gone"]);
        let listed = cache.relist();
        assert_eq!(listed.len(), 1);
        assert_eq!(names(&cache.store()), ["new"]);
        assert_eq!(cache.pending(), 0);
    }
}
