//! A kubelet stand-in for kwok-style Nodes: it plays what kwok, the kubelet and the node agents
//! do on a real cluster, so the lifecycle runs end to end against the fake API server.
//!
//! For every Node annotated `kwok.x-k8s.io/node: fake` (and never another Node) it:
//! - sets the `Ready=True` condition and phase `Running` (status subresource), like kwok;
//! - once the Node is owned by a NodeClaim (Registration added the reference), removes that
//!   NodeClaim's startup taints, like the daemonset whose readiness they gate;
//! - refreshes the Ready condition every heartbeat (kwok's and the kubelet's status updates);
//! - removes the known ephemeral taints (`not-ready`, `unreachable`, `uninitialized`), like the
//!   node lifecycle controller and the cloud controller manager.
//!
//! Taints are rewritten with a merge patch carrying the resourceVersion (409 retries).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::{reflector, watcher, WatchStreamExt};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use crate::clock::SharedClock;

use crate::operator::shutdown::Shutdown;

use super::cloudprovider::kwok::KWOK_NODE_ANNOTATION;
use super::error::{is_conflict, is_not_found, Error};
use super::taints;
use super::types::NodeClaim;
use super::wiring::{forceful_after, InFlight, SHUTDOWN_GRACE};

/// Nodes the stand-in works on at once. kwok is one process with a bounded number of node
/// workers (`nodePlayStageParallelism`, 4 in its release configuration, raised for scale
/// setups); an unbounded stand-in sends a request per Node at once when thousands appear
/// together, a burst of connections no real agent makes (`make bench-scale`, once the client
/// kept no more than 25 idle connections: at 3000 NodeClaims, requests failed on fresh
/// connections and 15 NodeClaims were never Ready). Keep the heartbeat such that the Nodes'
/// heartbeats fit in this many workers: kube's controller runs the held-back items of a
/// saturated queue in no particular order (a hash set), so some Nodes can wait indefinitely.
pub const PARALLELISM: u16 = 32;

/// What the stand-in needs.
pub struct KubeletContext {
    /// Client for Node and NodeClaim reads and writes.
    pub client: Client,
    /// Timestamps of the conditions it writes.
    pub clock: SharedClock,
    /// How often each Node's status is refreshed (kwok's and the kubelet's heartbeat).
    pub heartbeat: Duration,
    /// Trim watched Nodes before they enter the stand-in's cache (as Karpenter's own,
    /// [`super::trim::node`]; on by default). Off only to measure what the trimming saves.
    pub trim_cache: bool,
    /// Nodes reconciled at once ([`PARALLELISM`] by default).
    pub parallelism: u16,
    beats: Mutex<HashMap<String, (u64, tokio::time::Instant)>>,
}

impl KubeletContext {
    /// A stand-in heartbeating every `heartbeat`.
    pub fn new(client: Client, clock: SharedClock, heartbeat: Duration) -> Self {
        Self {
            client,
            clock,
            heartbeat,
            trim_cache: true,
            parallelism: PARALLELISM,
            beats: Mutex::default(),
        }
    }

    /// The heartbeat number to post for `node` now, or `None` when the last one is recent.
    fn due(&self, node: &str) -> Option<u64> {
        let now = tokio::time::Instant::now();
        let mut beats = self.beats.lock().unwrap_or_else(|e| e.into_inner());
        let entry = beats.entry(node.to_string()).or_insert((0, now));
        if entry.0 > 0 && now.duration_since(entry.1) < self.heartbeat {
            return None;
        }
        *entry = (entry.0 + 1, now);
        Some(entry.0)
    }

    /// Forget `node`'s heartbeats (it is going away), so the map does not grow with every Node
    /// ever seen.
    fn forget(&self, node: &str) {
        self.beats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(node);
    }
}

impl std::fmt::Debug for KubeletContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeletContext").finish_non_exhaustive()
    }
}

/// Whether the stand-in manages `node`.
pub fn is_kwok_node(node: &Node) -> bool {
    node.annotations()
        .get(KWOK_NODE_ANNOTATION)
        .is_some_and(|v| v == "fake")
}

fn is_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// One pass over a Node.
pub async fn reconcile(mut node: Arc<Node>, ctx: Arc<KubeletContext>) -> Result<Action, Error> {
    if !is_kwok_node(&node) {
        return Ok(Action::await_change());
    }
    if node.metadata.deletion_timestamp.is_some() {
        ctx.forget(&node.name_any());
        return Ok(Action::await_change());
    }
    let api: Api<Node> = Api::all(ctx.client.clone());
    let name = node.name_any();
    // Ready, and refreshed every heartbeat: like kwok, the stand-in keeps updating Node status,
    // which is what eventually maps a Node to its NodeClaim when the Node appeared before the
    // NodeClaim cache had the provider id (spec §8.4).
    let beat = ctx.due(&name);
    if !is_ready(&node) || beat.is_some() {
        let now = Time(ctx.clock.now());
        let transition = node
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "Ready" && c.status == "True"))
            .and_then(|c| c.last_transition_time.clone())
            .unwrap_or_else(|| now.clone());
        let body = json!({"status": {
            "phase": "Running",
            "conditions": [{
                "type": "Ready", "status": "True", "reason": "KubeletReady",
                "message": format!("kubelet stand-in is posting ready status (heartbeat {})", beat.unwrap_or(0)),
                "lastHeartbeatTime": now, "lastTransitionTime": transition,
            }],
        }});
        // The taint patch below is rv-checked: it must carry the resourceVersion this write
        // produced, not the cached one (which this write just made stale: a 409 every pass,
        // and a requeue-and-patch-status loop while the cache lags; found by `make
        // bench-scale`, ~340 node patches per NodeClaim at 1k).
        let patched = api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .map_err(|e| Error::api("posting node ready status", e))?;
        let mut patched = patched;
        crate::operator::trim::strip_managed_fields(&mut patched);
        node = Arc::new(patched);
    }
    let current = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default();
    // Nothing to remove: no read of the owning NodeClaim (one GET per Node every heartbeat,
    // a third of all requests at 5000 NodeClaims, found by `make bench-scale`).
    if current.is_empty() {
        return Ok(Action::requeue(ctx.heartbeat));
    }
    // Startup taints of the owning NodeClaim, once it owns the Node.
    let mut removable = taints::known_ephemeral_taints();
    let owner = node
        .owner_references()
        .iter()
        .find(|o| o.kind == "NodeClaim")
        .map(|o| o.name.clone());
    if let Some(owner) = owner {
        match Api::<NodeClaim>::all(ctx.client.clone()).get(&owner).await {
            Ok(nc) => removable.extend(nc.spec.startup_taints),
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(Error::api("reading the owning nodeclaim", e)),
        }
    }
    let kept: Vec<_> = current
        .iter()
        .filter(|t| !removable.iter().any(|r| taints::matches(r, t)))
        .cloned()
        .collect();
    if kept.len() != current.len() {
        let body = json!({"metadata": {"resourceVersion": node.resource_version()}, "spec": {"taints": kept}});
        match api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&body))
            .await
        {
            Ok(_) => {}
            Err(e) if is_conflict(&e) => return Ok(Action::requeue(Duration::from_millis(50))),
            Err(e) if is_not_found(&e) => return Ok(Action::await_change()),
            Err(e) => return Err(Error::api("removing startup taints", e)),
        }
        tracing::info!(node = %name, removed = current.len() - kept.len(), "kubelet stand-in removed taints");
    }
    Ok(Action::requeue(ctx.heartbeat))
}

fn error_policy(node: Arc<Node>, error: &Error, _ctx: Arc<KubeletContext>) -> Action {
    tracing::warn!(node = %node.name_any(), error = %error, "kubelet stand-in error");
    Action::requeue(Duration::from_millis(200))
}

/// Runs the stand-in until `shutdown` resolves.
pub async fn run(ctx: Arc<KubeletContext>, watcher_config: watcher::Config, shutdown: Shutdown) {
    let in_flight = InFlight::default();
    let cut = forceful_after(shutdown.clone(), in_flight.clone(), SHUTDOWN_GRACE);
    // As `Controller::new` builds it (the controller backs off its trigger stream's errors), but
    // with the Nodes trimmed before they enter the cache.
    let (store, writer) = reflector::store();
    let trim = ctx.trim_cache;
    let nodes = watcher(Api::<Node>::all(ctx.client.clone()), watcher_config)
        .modify(move |node| {
            if trim {
                super::trim::node(node)
            }
        })
        .reflect(writer)
        .applied_objects();
    Controller::for_stream(nodes, store)
        .with_config(kube::runtime::controller::Config::default().concurrency(ctx.parallelism))
        .graceful_shutdown_on(shutdown)
        .run(in_flight.wrap(reconcile), error_policy, ctx)
        .take_until(cut)
        .for_each(|_| futures::future::ready(()))
        .await;
}
