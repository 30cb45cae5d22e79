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

/// An informer cache fed by hand.
pub struct LaggingCache<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: std::hash::Hash + Eq + Clone + Default,
{
    scope: CacheScope,
    server: FakeApiServer,
    events: broadcast::Receiver<Arc<StoreEvent>>,
    pending: VecDeque<Arc<StoreEvent>>,
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
        let events = server.subscribe();
        let (_, objects) = server.list_objects(
            &scope.api_version,
            &scope.plural,
            scope.namespace.as_deref(),
        );
        let (store, mut writer) = reflector::store::<K>();
        writer.apply_watcher_event(&watcher::Event::Init);
        for object in objects.into_iter().filter(|o| scope.admits(o)) {
            if let Ok(typed) = serde_json::from_value::<K>(object) {
                writer.apply_watcher_event(&watcher::Event::InitApply(typed));
            }
        }
        writer.apply_watcher_event(&watcher::Event::InitDone);
        Self {
            scope,
            server: server.clone(),
            events,
            pending: VecDeque::new(),
            writer,
            store,
        }
    }

    /// The store reconcilers read.
    pub fn store(&self) -> Store<K> {
        self.store.clone()
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

    /// How many events wait to be delivered.
    pub fn pending(&mut self) -> usize {
        self.pull();
        self.pending.len()
    }

    /// Delivers the oldest waiting event into the store; returns what the cache saw.
    pub fn deliver_one(&mut self) -> Option<Delivered<K>> {
        self.pull();
        let event = self.pending.pop_front()?;
        let object = self.server.event_object(&event)?;
        let in_scope = self.scope.admits(&object);
        let was_in_scope = event
            .previous
            .as_ref()
            .and_then(|p| serde_json::from_slice::<Value>(p).ok())
            .is_some_and(|p| self.scope.admits(&p));
        let typed: K = serde_json::from_value(object).ok()?;
        match (event.event_type, in_scope) {
            (EventType::Deleted, _) | (EventType::Modified, false) if was_in_scope => {
                self.writer
                    .apply_watcher_event(&watcher::Event::Delete(typed.clone()));
                Some(Delivered::Deleted(Arc::new(typed)))
            }
            (EventType::Added | EventType::Modified, true) => {
                self.writer
                    .apply_watcher_event(&watcher::Event::Apply(typed.clone()));
                Some(Delivered::Applied(Arc::new(typed)))
            }
            _ => None,
        }
    }
}
