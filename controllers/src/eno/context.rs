//! What the lifecycle reconcile works with: client, caches, configuration, clock, ids, metrics.
//!
//! The caches are kube-runtime reflector [`Store`]s (the pod cache with an index, an
//! [`Indexed`] store). Production fills them from watches ([`super::wiring`]); tests fill them
//! by hand through a `kube::runtime::reflector::store::Writer` (or
//! [`crate::operator::index::IndexedWriter`]) and `apply_watcher_event`, so that they decide
//! when each cache sees each event.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::Client;

use crate::operator::index::Indexed;

use super::metrics::Metrics;
use super::types::{Composition, Synthesizer};
use super::{LABEL_COMPOSITION_NAME, LABEL_COMPOSITION_NAMESPACE};
use crate::clock::SharedClock;
use crate::ids::SharedIds;

/// The controller's configuration (upstream `synthesis.Config`, plus what the in-pod executor
/// needs).
///
/// Upstream's `SliceCreationQPS` is left out: its limiter is never used (spec §5.6).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Namespace synthesizer pods are created in (required).
    pub pod_namespace: String,
    /// ServiceAccount of synthesizer pods; `None` leaves the namespace default.
    pub pod_service_account: Option<String>,
    /// Image holding this binary; an init container copies the executor out of it into the
    /// synthesizer pod (see [`super::pod_template`]).
    pub executor_image: String,
    /// Longest wait between retries of a failing reconcile (production: 5 minutes).
    pub max_error_backoff: Duration,
    /// Reconciles each controller runs at once (0: any number). Defaults to 1, controller-runtime's
    /// `MaxConcurrentReconciles` default, which upstream's synthesis controllers keep: with any
    /// number, `make bench-scale` at 3k Compositions opened thousands of concurrent requests and
    /// the client's connections failed, and at 1k a limit of 1 halved the time, requests and RSS.
    /// The limit is a first-come, first-served queue in front of each controller's reconciles
    /// (not kube's `Controller` concurrency, which holds waiting keys in a randomly ordered set),
    /// so start-up reconciles keep their fixed order (`start_up_reconciles_run_in_a_fixed_order`);
    /// kube's concurrency only bounds how many wait in that queue
    /// ([`super::wiring::dispatch_window`]).
    pub max_concurrent_reconciles: u16,
    /// Test switch, off by default: start the controllers without waiting for every cache to
    /// sync (the start-up bug the harness must catch). Never set in production.
    pub start_before_caches_sync: bool,
    /// Test switch, off by default: never add the composition's cleanup finalizer (step 2;
    /// guard of spec §7.1 removed). Never set in production.
    pub skip_composition_finalizer: bool,
    /// Test switch, off by default: create a synthesis' first pod before its UUID is written
    /// (the UUID is written after the create; guard of spec §3 step 12, §7.3 removed). Never set
    /// in production.
    pub skip_uuid_write_before_first_pod: bool,
    /// Test switch, off by default: any terminating pod blocks the next one (none allowed,
    /// rather than one; guard of spec §7.5 removed). Never set in production.
    pub terminating_pod_blocks_creation: bool,
    /// Test switch, off by default: terminating pods never block the next one (any number
    /// allowed, rather than one; guard of spec §7.5 removed). Never set in production.
    pub terminating_pods_never_block_creation: bool,
    /// Test switch, off by default: create synthesizer pods without their finalizer, so a pod
    /// may go before its attempt is recorded (guard of spec §7.6 removed). Never set in
    /// production.
    pub skip_pod_finalizer: bool,
    /// Test switch, off by default: no backoff between pod attempts (spec §3 step 13 removed).
    /// Never set in production.
    pub skip_pod_creation_backoff: bool,
    /// Test switch, off by default: a deleted composition does not revert to its previous
    /// synthesis (spec §3.1 D1 removed). Never set in production.
    pub skip_deletion_revert: bool,
    /// Test switch, off by default: a deleted composition's status is not faked synthesized
    /// for its new generation (spec §3.1 D2 removed). Never set in production.
    pub skip_deleted_composition_status_update: bool,
    /// Test switch, off by default: a deleted composition's finalizer is removed without
    /// waiting for the reconciler (spec §3.1 D3 removed). Never set in production.
    pub skip_reconciling_check: bool,
}

impl Config {
    /// A configuration with the given pod namespace and executor image, and defaults otherwise.
    pub fn new(pod_namespace: impl Into<String>, executor_image: impl Into<String>) -> Self {
        Self {
            pod_namespace: pod_namespace.into(),
            pod_service_account: None,
            executor_image: executor_image.into(),
            max_error_backoff: Duration::from_secs(300),
            max_concurrent_reconciles: 1,
            start_before_caches_sync: false,
            skip_composition_finalizer: false,
            skip_uuid_write_before_first_pod: false,
            terminating_pod_blocks_creation: false,
            terminating_pods_never_block_creation: false,
            skip_pod_finalizer: false,
            skip_pod_creation_backoff: false,
            skip_deletion_revert: false,
            skip_deleted_composition_status_update: false,
            skip_reconciling_check: false,
        }
    }
}

/// The lifecycle controller's context.
#[derive(Clone)]
pub struct Context {
    /// Writes, and the live pod list of step 14.
    pub client: Client,
    /// Composition cache.
    pub compositions: Store<Composition>,
    /// Pod cache: `pod_namespace`, `app.kubernetes.io/managed-by=eno` only; indexed by
    /// [`pod_composition_index`].
    pub pods: Indexed<Pod>,
    /// Synthesizer cache.
    pub synthesizers: Store<Synthesizer>,
    /// Configuration.
    pub config: Config,
    /// The time source.
    pub clock: SharedClock,
    /// The UUID source.
    pub ids: SharedIds,
    /// Counters.
    pub metrics: Metrics,
}

impl Context {
    /// The cached pods of a composition, oldest first (then by name), so that the order-dependent
    /// scan of `shouldDeletePod` gives the same answer on every run.
    ///
    /// Deliberate change from upstream, whose index holds the composition *name* only, so that
    /// `a/x` and `b/x` saw (and deleted) each other's pods (spec §5.3): this matches both the
    /// name and the namespace label, and the pod's namespace.
    ///
    /// A lookup in the pod cache's index ([`pod_composition_index`], upstream's
    /// `IdxPodsByComposition` as later upstream keys it: `name/namespace`), not a scan of every
    /// cached pod.
    pub fn pods_of(&self, comp: &ObjectRef<Composition>) -> Vec<Arc<Pod>> {
        let namespace = comp.namespace.as_deref().unwrap_or_default();
        let mut pods = self
            .pods
            .by_index(&composition_index_value(&comp.name, namespace));
        pods.retain(|pod| {
            pod.metadata.namespace.as_deref() == Some(self.config.pod_namespace.as_str())
        });
        pods.sort_by(|a, b| {
            let key = |p: &Pod| {
                (
                    p.metadata.creation_timestamp.as_ref().map(|t| t.0),
                    p.metadata.name.clone(),
                )
            };
            key(a).cmp(&key(b))
        });
        pods
    }
}

/// The composition index value of a composition: `name/namespace` (upstream
/// `PodByCompIdxValueFromComp`).
pub fn composition_index_value(name: &str, namespace: &str) -> String {
    format!("{name}/{namespace}")
}

/// The pod cache's index (upstream `IdxPodsByComposition`): a pod is indexed under the
/// composition its labels name, `name/namespace`, when both labels are set and non-empty (a pod
/// without them names no composition; upstream `PodReferencesComposition`).
pub fn pod_composition_index(pod: &Pod) -> Vec<String> {
    match (
        label(pod, LABEL_COMPOSITION_NAME).filter(|v| !v.is_empty()),
        label(pod, LABEL_COMPOSITION_NAMESPACE).filter(|v| !v.is_empty()),
    ) {
        (Some(name), Some(namespace)) => vec![composition_index_value(name, namespace)],
        _ => vec![],
    }
}

/// A pod label's value.
pub fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::ids::SeededIds;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use kube::runtime::reflector;
    use kube::runtime::watcher::Event;

    fn pod(name: &str, namespace: &str, labels: &[(&str, &str)], created: i64) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = Some(name.into());
        pod.metadata.namespace = Some(namespace.into());
        pod.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        pod.metadata.creation_timestamp = Some(Time(
            jiff::Timestamp::from_second(1_700_000_000 + created).unwrap(),
        ));
        pod
    }

    #[tokio::test]
    async fn pods_of_matches_namespace_and_name_oldest_first() {
        let (pods, mut writer) = crate::operator::index::store(pod_composition_index);
        let ours = [
            (LABEL_COMPOSITION_NAME, "x"),
            (LABEL_COMPOSITION_NAMESPACE, "a"),
        ];
        for p in [
            pod("newer", "eno", &ours, 20),
            pod("older", "eno", &ours, 10),
            pod("same-age-b", "eno", &ours, 15),
            pod("same-age-a", "eno", &ours, 15),
            pod(
                "other-namespace-label",
                "eno",
                &[
                    (LABEL_COMPOSITION_NAME, "x"),
                    (LABEL_COMPOSITION_NAMESPACE, "b"),
                ],
                1,
            ),
            pod(
                "name-label-only",
                "eno",
                &[(LABEL_COMPOSITION_NAME, "x")],
                1,
            ),
            pod("wrong-pod-namespace", "default", &ours, 1),
        ] {
            writer.apply_watcher_event(&Event::Apply(p));
        }
        let client = kube::Client::new(unused_api(), "default");
        let (compositions, _w) = reflector::store();
        let (synthesizers, _s) = reflector::store();
        let ctx = Context {
            client,
            compositions,
            pods,
            synthesizers,
            config: Config::new("eno", "img"),
            clock: std::sync::Arc::new(ManualClock::default()),
            ids: std::sync::Arc::new(SeededIds::new(1)),
            metrics: Metrics::default(),
        };
        let names: Vec<String> = ctx
            .pods_of(&ObjectRef::new("x").within("a"))
            .iter()
            .map(|p| p.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["older", "same-age-a", "same-age-b", "newer"]);
    }

    /// A client that is never called (the store lookup needs none).
    fn unused_api() -> axum::Router {
        axum::Router::new()
    }
}
