//! Kubernetes Events (`events.k8s.io/v1`) with time from the injected clock.
//!
//! This is kube-runtime's `events::Recorder` with one change: kube's recorder reads the wall
//! clock for an event's name (`<object>.<nanoseconds in hex>`), its `eventTime`, its series'
//! `lastObservedTime` and its six-minute dedupe window, which would let real time leak into a
//! deterministic run (and makes a series under a virtual clock depend on how fast the host is).
//! Here all four come from the [`Clock`](crate::clock::Clock) the controller was given. Otherwise
//! the behaviour is kube's: the first occurrence of an event (same type, action, reason,
//! reporter and object) is created; repeats within six minutes of the last one patch its
//! `series` (`count`, `lastObservedTime`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::events::{Event, EventType, Reporter};
use kube::{Client, ResourceExt};

use crate::clock::SharedClock;

/// How long a published event is remembered for a series (kube's and client-go's value).
pub const SERIES_WINDOW: SignedDuration = SignedDuration::from_mins(6);

/// What makes two events the same occurrence of a series.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    warning: bool,
    action: String,
    reason: String,
    regarding: (
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    ),
}

/// Publishes events as kube's `Recorder` does, on the injected clock. Cheap to clone.
#[derive(Clone)]
pub struct EventPublisher {
    client: Client,
    reporter: Reporter,
    clock: SharedClock,
    published: Arc<Mutex<HashMap<Key, K8sEvent>>>,
}

impl EventPublisher {
    /// A publisher writing through `client` as `reporter`.
    pub fn new(client: Client, reporter: Reporter, clock: SharedClock) -> Self {
        Self {
            client,
            reporter,
            clock,
            published: Arc::default(),
        }
    }

    /// Publishes `event` about `regarding`: creates it, or patches the series of the same
    /// event published within the last six minutes.
    pub async fn publish(
        &self,
        event: &Event,
        regarding: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let now = self.clock.now();
        let key = Key {
            warning: matches!(event.type_, EventType::Warning),
            action: event.action.clone(),
            reason: event.reason.clone(),
            regarding: (
                regarding.kind.clone(),
                regarding.namespace.clone(),
                regarding.name.clone(),
                regarding.uid.clone(),
            ),
        };
        let previous = {
            let mut published = self.published.lock().unwrap_or_else(|e| e.into_inner());
            published.retain(|_, e| last_seen(e).is_some_and(|t| t + SERIES_WINDOW > now));
            published.get(&key).cloned()
        };
        let namespace = regarding.namespace.as_deref().unwrap_or("default");
        let events: Api<K8sEvent> = Api::namespaced(self.client.clone(), namespace);
        let written = match previous {
            Some(mut repeat) => {
                let count = repeat.series.as_ref().map_or(2, |s| s.count + 1);
                repeat.series = Some(EventSeries {
                    count,
                    last_observed_time: MicroTime(now),
                });
                events
                    .patch(
                        &repeat.name_any(),
                        &PatchParams::default(),
                        &Patch::Merge(&repeat),
                    )
                    .await?;
                repeat
            }
            None => {
                let first = self.first(event, regarding, now);
                events.create(&PostParams::default(), &first).await?;
                first
            }
        };
        self.published
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, written);
        Ok(())
    }

    /// The Event object of a first occurrence.
    fn first(&self, event: &Event, regarding: &ObjectReference, now: jiff::Timestamp) -> K8sEvent {
        let name = regarding
            .name
            .as_deref()
            .unwrap_or(&self.reporter.controller);
        K8sEvent {
            action: Some(event.action.clone()),
            reason: Some(event.reason.clone()),
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            note: event.note.clone(),
            metadata: ObjectMeta {
                namespace: regarding.namespace.clone(),
                name: Some(format!("{name}.{:x}", now.as_nanosecond())),
                ..Default::default()
            },
            reporting_controller: Some(self.reporter.controller.clone()),
            reporting_instance: Some(
                self.reporter
                    .instance
                    .clone()
                    .unwrap_or_else(|| self.reporter.controller.clone()),
            ),
            type_: Some(
                match event.type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .into(),
            ),
            related: event.secondary.clone(),
            ..Default::default()
        }
    }
}

fn last_seen(event: &K8sEvent) -> Option<jiff::Timestamp> {
    match &event.series {
        Some(series) => Some(series.last_observed_time.0),
        None => event.event_time.as_ref().map(|t| t.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{Clock, ManualClock};

    fn warning(reason: &str) -> Event {
        Event {
            type_: EventType::Warning,
            reason: reason.into(),
            note: Some("it broke".into()),
            action: "Reconcile".into(),
            secondary: None,
        }
    }

    #[tokio::test]
    async fn names_and_times_come_from_the_clock_and_repeats_make_a_series() {
        let server = fake_apiserver::FakeApiServer::new();
        let clock = ManualClock::default();
        let publisher = EventPublisher::new(
            server.client(),
            Reporter {
                controller: "test".into(),
                instance: None,
            },
            Arc::new(clock.clone()),
        );
        let regarding = ObjectReference {
            kind: Some("ConfigMap".into()),
            namespace: Some("default".into()),
            name: Some("cm".into()),
            ..Default::default()
        };
        publisher
            .publish(&warning("Broken"), &regarding)
            .await
            .unwrap();
        let name = format!("cm.{:x}", clock.now().as_nanosecond());
        let stored = server
            .get_object("events.k8s.io/v1", "events", Some("default"), &name)
            .expect("named after the injected clock");
        assert_eq!(stored["reason"], "Broken");

        clock.advance(SignedDuration::from_mins(5));
        publisher
            .publish(&warning("Broken"), &regarding)
            .await
            .unwrap();
        let stored = server
            .get_object("events.k8s.io/v1", "events", Some("default"), &name)
            .unwrap();
        assert_eq!(stored["series"]["count"], 2, "a repeat within the window");

        clock.advance(SignedDuration::from_mins(7));
        publisher
            .publish(&warning("Broken"), &regarding)
            .await
            .unwrap();
        let (_, all) = server.list_objects("events.k8s.io/v1", "events", Some("default"));
        assert_eq!(all.len(), 2, "after the window, a new event");
    }
}
