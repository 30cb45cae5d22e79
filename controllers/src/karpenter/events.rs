//! Kubernetes events for launch failures, deduplicated like karpenter's `events.Recorder`.
//!
//! Upstream publishes `InsufficientCapacityError` and `NodeClassNotReady` warnings on the NodeClaim,
//! deduplicated by (reason, NodeClaim UID) for two minutes. Here the window runs on the injected
//! clock, every published event is also kept in memory (tests read it), and writing the core/v1
//! Event is best effort: a failure is logged, never returned.

use std::collections::HashMap;
use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client, Resource, ResourceExt};

use crate::clock::SharedClock;
use crate::ids::SharedIds;

use super::types::NodeClaim;

/// Upstream's dedupe window.
pub const DEDUPE_WINDOW: SignedDuration = SignedDuration::from_mins(2);
/// Namespace events about cluster-scoped objects go to.
const EVENT_NAMESPACE: &str = "default";
/// Upstream truncates error messages in events and conditions to 300 bytes.
const MAX_MESSAGE: usize = 300;

/// One published event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedEvent {
    /// `Warning` or `Normal`.
    pub type_: String,
    /// e.g. `InsufficientCapacityError`.
    pub reason: String,
    /// Human-readable message.
    pub message: String,
    /// Name of the NodeClaim.
    pub object: String,
}

/// `truncateMessage`: at most 300 bytes (cut on a character boundary) followed by `...`.
pub fn truncate_message(msg: &str) -> String {
    if msg.len() < MAX_MESSAGE {
        return msg.to_string();
    }
    let mut end = MAX_MESSAGE;
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &msg[..end])
}

/// Publishes events, deduplicated per (reason, uid).
pub struct EventRecorder {
    client: Option<Client>,
    clock: SharedClock,
    ids: SharedIds,
    component: String,
    seen: Mutex<HashMap<(String, String), Timestamp>>,
    published: Mutex<Vec<PublishedEvent>>,
}

impl std::fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRecorder")
            .field("component", &self.component)
            .finish()
    }
}

impl EventRecorder {
    /// A recorder writing Events through `client` (or only in memory when `None`).
    pub fn new(
        client: Option<Client>,
        clock: SharedClock,
        ids: SharedIds,
        component: &str,
    ) -> Self {
        Self {
            client,
            clock,
            ids,
            component: component.into(),
            seen: Mutex::default(),
            published: Mutex::default(),
        }
    }

    /// `InsufficientCapacityErrorEvent`.
    pub async fn insufficient_capacity(&self, nc: &NodeClaim, err: &str) {
        let msg = format!(
            "NodeClaim {} event: {}",
            nc.name_any(),
            truncate_message(err)
        );
        self.warn(nc, "InsufficientCapacityError", msg).await;
    }

    /// `NodeClassNotReadyEvent`.
    pub async fn node_class_not_ready(&self, nc: &NodeClaim, err: &str) {
        let msg = format!(
            "NodeClaim {} event: {}",
            nc.name_any(),
            truncate_message(err)
        );
        self.warn(nc, "NodeClassNotReady", msg).await;
    }

    /// Every event published so far (after deduplication).
    pub fn published(&self) -> Vec<PublishedEvent> {
        self.published
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    async fn warn(&self, nc: &NodeClaim, reason: &str, message: String) {
        let uid = nc.uid().unwrap_or_default();
        let now = self.clock.now();
        {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            seen.retain(|_, until| *until > now);
            let key = (reason.to_string(), uid.clone());
            if seen.contains_key(&key) {
                return;
            }
            seen.insert(key, now.saturating_add(DEDUPE_WINDOW).unwrap_or(now));
        }
        self.published
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(PublishedEvent {
                type_: "Warning".into(),
                reason: reason.into(),
                message: message.clone(),
                object: nc.name_any(),
            });
        let Some(client) = &self.client else { return };
        let event = Event {
            metadata: ObjectMeta {
                name: Some(format!("{}.{}", nc.name_any(), self.ids.uuid().simple())),
                namespace: Some(EVENT_NAMESPACE.into()),
                ..Default::default()
            },
            involved_object: ObjectReference {
                api_version: Some(NodeClaim::api_version(&()).into_owned()),
                kind: Some(NodeClaim::kind(&()).into_owned()),
                name: Some(nc.name_any()),
                uid: Some(uid),
                resource_version: nc.resource_version(),
                ..Default::default()
            },
            reason: Some(reason.into()),
            message: Some(message),
            type_: Some("Warning".into()),
            count: Some(1),
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            source: Some(EventSource {
                component: Some(self.component.clone()),
                host: None,
            }),
            reporting_component: Some(self.component.clone()),
            ..Default::default()
        };
        if let Err(e) = Api::<Event>::namespaced(client.clone(), EVENT_NAMESPACE)
            .create(&PostParams::default(), &event)
            .await
        {
            tracing::warn!(error = %e, reason, nodeclaim = %nc.name_any(), "failed to write event");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::ids::SeededIds;
    use rstest::rstest;
    use std::sync::Arc;

    #[rstest]
    #[case::short("abc", "abc")]
    #[case::long(&"x".repeat(400), &format!("{}...", "x".repeat(300)))]
    #[case::multibyte_boundary(&format!("{}é", "x".repeat(299)), &format!("{}...", "x".repeat(299)))]
    fn truncates(#[case] msg: &str, #[case] want: &str) {
        assert_eq!(truncate_message(msg), want);
    }

    #[tokio::test]
    async fn dedupes_by_reason_and_uid_within_the_window() {
        let clock = ManualClock::default();
        let rec = EventRecorder::new(
            None,
            Arc::new(clock.clone()),
            Arc::new(SeededIds::new(1)),
            "karpenter",
        );
        let mut nc = NodeClaim::new("a", Default::default());
        nc.metadata.uid = Some("u1".into());
        rec.insufficient_capacity(&nc, "no capacity").await;
        rec.insufficient_capacity(&nc, "no capacity").await;
        rec.node_class_not_ready(&nc, "not ready").await;
        assert_eq!(rec.published().len(), 2);
        clock.advance(DEDUPE_WINDOW);
        rec.insufficient_capacity(&nc, "no capacity").await;
        assert_eq!(rec.published().len(), 3);
        assert_eq!(rec.published()[0].message, "NodeClaim a event: no capacity");
    }
}
