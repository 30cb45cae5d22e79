//! The Eno bench's progress count: how many Compositions are synthesized by a given Synthesizer
//! generation, kept from the server's store events.
//!
//! The bench used to parse every Composition on every progress poll: O(N) per poll and O(N)
//! polls over a run, in the server process's CPU while the controllers compete for it (about a
//! tenth of the machine at 10,000). Here each Composition write is parsed once, for the two
//! fields the count needs, and a poll counts a map of small entries.
//!
//! Events come in revision order. If the subscription lags (the server's live channel dropped
//! events before they were read), every Composition is read once from the store and an entry
//! is only replaced by a newer revision, so a late event never undoes a newer state.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use controllers::eno::types::Composition;
use fake_apiserver::store::{EventType, StoreEvent};
use fake_apiserver::FakeApiServer;
use kube::Resource;
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;

/// The store's key of the Composition resource (`group/plural`).
const COMPOSITIONS: &str = "eno.azure.io/compositions";

/// What the count needs of one Composition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    /// The revision this state was written at.
    revision: u64,
    /// `observedSynthesizerGeneration` (0 when absent) if the current synthesis is synthesized.
    synthesized_by: Option<i64>,
}

/// The part of a stored Composition the count reads; everything else is skipped unparsed.
#[derive(Debug, Default, Deserialize)]
struct Doc {
    #[serde(default)]
    metadata: Meta,
    #[serde(default)]
    status: Option<Status>,
}

#[derive(Debug, Default, Deserialize)]
struct Meta {
    #[serde(default, rename = "resourceVersion")]
    resource_version: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Status {
    #[serde(default, rename = "currentSynthesis")]
    current_synthesis: Option<Current>,
}

#[derive(Debug, Default, Deserialize)]
struct Current {
    #[serde(default)]
    synthesized: Option<serde::de::IgnoredAny>,
    #[serde(default, rename = "observedSynthesizerGeneration")]
    observed_synthesizer_generation: Option<i64>,
}

impl Doc {
    /// Whether (and by which generation) the current synthesis is synthesized; `None` for an
    /// object that does not parse as such.
    fn synthesized_by(&self) -> Option<i64> {
        let current = self.status.as_ref()?.current_synthesis.as_ref()?;
        current
            .synthesized
            .as_ref()
            .map(|_| current.observed_synthesizer_generation.unwrap_or(0))
    }
}

/// Every Composition's latest known state, by namespace and name.
#[derive(Debug, Default)]
struct State {
    by_key: BTreeMap<(String, String), Seen>,
}

impl State {
    /// Records `seen` for the object unless a newer state is already known.
    fn record(&mut self, namespace: &str, name: &str, seen: Seen) {
        let key = (namespace.to_string(), name.to_string());
        match self.by_key.get_mut(&key) {
            Some(known) if known.revision >= seen.revision => {}
            Some(known) => *known = seen,
            None => {
                self.by_key.insert(key, seen);
            }
        }
    }

    /// Applies one store event (others than Compositions' are ignored).
    fn apply(&mut self, event: &StoreEvent) {
        if &*event.resource != COMPOSITIONS {
            return;
        }
        if event.event_type == EventType::Deleted {
            let key = (event.namespace.clone(), event.name.clone());
            if self
                .by_key
                .get(&key)
                .is_some_and(|known| known.revision < event.revision)
            {
                self.by_key.remove(&key);
            }
            return;
        }
        let doc: Doc = serde_json::from_slice(&event.object).unwrap_or_default();
        let seen = Seen {
            revision: event.revision,
            synthesized_by: doc.synthesized_by(),
        };
        self.record(&event.namespace, &event.name, seen);
    }

    /// Reads every Composition from the server (after a lag).
    fn rescan(&mut self, server: &FakeApiServer) {
        let api_version = Composition::api_version(&());
        let (_, items) = server.list_objects(&api_version, "compositions", None);
        for item in items {
            let Ok(doc) = serde_json::from_value::<Doc>(item.clone()) else {
                continue;
            };
            let revision = doc
                .metadata
                .resource_version
                .as_deref()
                .and_then(|rv| rv.parse().ok())
                .unwrap_or(0);
            let namespace = item["metadata"]["namespace"].as_str().unwrap_or_default();
            let name = item["metadata"]["name"].as_str().unwrap_or_default();
            let seen = Seen {
                revision,
                synthesized_by: doc.synthesized_by(),
            };
            self.record(namespace, name, seen);
        }
    }

    /// How many are synthesized by `generation` or a newer one.
    fn synthesized_for(&self, generation: i64) -> usize {
        self.by_key
            .values()
            .filter(|seen| seen.synthesized_by.is_some_and(|g| g >= generation))
            .count()
    }
}

/// The count, fed by a task that follows the server's writes until dropped.
pub struct Syntheses {
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Syntheses {
    /// Follows `server`'s writes from now on (subscribe before the Compositions are created).
    pub fn follow(server: &FakeApiServer) -> Self {
        let state = Arc::new(Mutex::new(State::default()));
        let mut events = server.subscribe();
        let task = {
            let state = state.clone();
            let server = server.clone();
            tokio::spawn(async move {
                loop {
                    match events.recv().await {
                        Ok(event) => lock(&state).apply(&event),
                        Err(RecvError::Lagged(_)) => lock(&state).rescan(&server),
                        Err(RecvError::Closed) => return,
                    }
                }
            })
        };
        Self { state, task }
    }

    /// How many Compositions are synthesized by `generation` or a newer one.
    pub fn synthesized_for(&self, generation: i64) -> usize {
        lock(&self.state).synthesized_for(generation)
    }
}

impl Drop for Syntheses {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(revision: u64, event_type: EventType, name: &str, object: &str) -> StoreEvent {
        StoreEvent {
            revision,
            event_type,
            resource: COMPOSITIONS.into(),
            namespace: "ns".into(),
            name: name.into(),
            object: object.as_bytes().to_vec().into(),
            previous: None,
        }
    }

    const PENDING: &str = r#"{"metadata":{"name":"a"},"status":{"currentSynthesis":{"uuid":"u"}}}"#;
    const DONE_1: &str = r#"{"metadata":{"name":"a"},"status":{"currentSynthesis":{"synthesized":"2024-01-01T00:00:00Z","observedSynthesizerGeneration":1}}}"#;
    const DONE_2: &str = r#"{"metadata":{"name":"a"},"status":{"currentSynthesis":{"synthesized":"2024-01-01T00:00:00Z","observedSynthesizerGeneration":2}}}"#;
    const DONE_NO_GEN: &str =
        r#"{"metadata":{"name":"a"},"status":{"currentSynthesis":{"synthesized":"x"}}}"#;

    #[test]
    fn counts_what_the_latest_write_says() {
        let mut state = State::default();
        state.apply(&event(1, EventType::Added, "a", PENDING));
        state.apply(&event(2, EventType::Added, "b", PENDING));
        assert_eq!(state.synthesized_for(1), 0);
        state.apply(&event(3, EventType::Modified, "a", DONE_1));
        assert_eq!(state.synthesized_for(1), 1);
        assert_eq!(state.synthesized_for(2), 0);
        state.apply(&event(4, EventType::Modified, "b", DONE_2));
        assert_eq!(state.synthesized_for(1), 2);
        assert_eq!(state.synthesized_for(2), 1);
        // A new synthesis started: no longer synthesized.
        state.apply(&event(5, EventType::Modified, "b", PENDING));
        assert_eq!(state.synthesized_for(1), 1);
        // Other resources do not count.
        let mut pod = event(6, EventType::Added, "p", DONE_2);
        pod.resource = "/pods".into();
        state.apply(&pod);
        assert_eq!(state.synthesized_for(1), 1);
        state.apply(&event(7, EventType::Deleted, "a", DONE_1));
        assert_eq!(state.synthesized_for(1), 0);
    }

    #[test]
    fn a_missing_generation_counts_as_zero_as_the_poll_did() {
        let mut state = State::default();
        state.apply(&event(1, EventType::Added, "a", DONE_NO_GEN));
        assert_eq!(state.synthesized_for(0), 1);
        assert_eq!(state.synthesized_for(1), 0);
    }

    #[test]
    fn an_older_state_never_replaces_a_newer_one() {
        let mut state = State::default();
        state.apply(&event(5, EventType::Modified, "a", DONE_1));
        state.apply(&event(4, EventType::Modified, "a", PENDING));
        assert_eq!(state.synthesized_for(1), 1);
        state.apply(&event(3, EventType::Deleted, "a", PENDING));
        assert_eq!(state.synthesized_for(1), 1);
    }

    #[tokio::test]
    async fn follows_a_server_and_rescans_it() {
        let server = FakeApiServer::new();
        let client = server.client();
        controllers::eno::demo::install_crds(&client).await.unwrap();
        controllers::eno::demo::ensure_namespace(&client, "ns")
            .await
            .unwrap();
        let syntheses = Syntheses::follow(&server);
        let api: kube::Api<controllers::eno::types::Composition> =
            kube::Api::namespaced(client, "ns");
        let comp = controllers::eno::demo::demo_composition("c", "ns", "syn");
        api.create(&Default::default(), &comp).await.unwrap();
        let mut status = api.get("c").await.unwrap();
        let current = status
            .status
            .get_or_insert_with(Default::default)
            .current_synthesis
            .get_or_insert_with(Default::default);
        current.synthesized = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            jiff::Timestamp::UNIX_EPOCH,
        ));
        current.observed_synthesizer_generation = 3;
        api.replace_status("c", &Default::default(), &status)
            .await
            .unwrap();
        let mut seen = 0;
        for _ in 0..200 {
            seen = syntheses.synthesized_for(3);
            if seen == 1 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert_eq!(seen, 1);
        // A rescan reads the same from the store.
        let mut fresh = State::default();
        fresh.rescan(&server);
        assert_eq!(fresh.synthesized_for(3), 1);
        assert_eq!(fresh.synthesized_for(4), 0);
    }
}
