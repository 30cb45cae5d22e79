//! Production wiring: the lifecycle, status, rollout and slice cleanup controllers in
//! `kube::runtime::Controller`.
//!
//! What is watched and how events map to keys are plain functions here
//! ([`pod_to_composition`], [`pod_watch_config`]) and in the controllers' modules
//! ([`super::rollout::composition_to_synthesizer`],
//! [`super::slice_cleanup::slices_of_composition`]), so the race harness can use the same
//! mappings with its own scheduler and hand-fed stores.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{future, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Client, Resource};
use tracing::{info, warn};

use super::context::{label, Config, Context};
use super::metrics::Metrics;
use super::rollout::{self, RolloutContext};
use super::slice_cleanup::{self, SliceCleanupContext};
use super::status_controller::{self, StatusContext};
use super::types::{Composition, ResourceSlice, Synthesizer};
use super::{lifecycle, Error};
use super::{
    LABEL_COMPOSITION_NAME, LABEL_COMPOSITION_NAMESPACE, LABEL_MANAGED_BY, MANAGED_BY_ENO,
};
use crate::clock::SharedClock;
use crate::ids::SharedIds;
use crate::operator::http::Readiness;
use crate::operator::shutdown::Shutdown;

/// Pod events map to the composition named by the pod's labels, only when both the name and the
/// namespace label are set and non-empty (upstream `PodToCompMapFunc`).
pub fn pod_to_composition(pod: &Pod) -> Option<ObjectRef<Composition>> {
    let name = label(pod, LABEL_COMPOSITION_NAME).filter(|v| !v.is_empty())?;
    let namespace = label(pod, LABEL_COMPOSITION_NAMESPACE).filter(|v| !v.is_empty())?;
    Some(ObjectRef::new(name).within(namespace))
}

/// The pod cache's scope: the pod namespace, `app.kubernetes.io/managed-by=eno`.
pub fn pod_watch_config() -> watcher::Config {
    watcher::Config::default().labels(&format!("{LABEL_MANAGED_BY}={MANAGED_BY_ENO}"))
}

/// Per-object exponential backoff for failed reconciles (controller-runtime's default item rate
/// limiter: 5ms doubling, capped), reset by a success.
#[derive(Debug)]
pub struct ErrorBackoff {
    base: Duration,
    max: Duration,
    failures: Mutex<HashMap<String, u32>>,
}

impl ErrorBackoff {
    /// Backoff from 5ms up to `max`.
    pub fn new(max: Duration) -> Self {
        Self {
            base: Duration::from_millis(5),
            max,
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// Record a failure of `key`; the wait before retrying it.
    pub fn next(&self, key: &str) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let count = failures.entry(key.to_string()).or_insert(0);
        let wait = self
            .base
            .saturating_mul(2u32.saturating_pow((*count).min(31)))
            .min(self.max);
        *count = count.saturating_add(1);
        wait
    }

    /// Forget the failures of `key`.
    pub fn reset(&self, key: &str) {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }
}

/// Everything the Eno controllers need to run.
#[derive(Clone)]
pub struct EnoControllers {
    /// API client.
    pub client: Client,
    /// Configuration.
    pub config: Config,
    /// Time source.
    pub clock: SharedClock,
    /// UUID source.
    pub ids: SharedIds,
    /// Counters (registered by the caller).
    pub metrics: Metrics,
}

fn object_key<K: Resource>(obj: &K) -> String {
    format!(
        "{}/{}",
        obj.meta().namespace.as_deref().unwrap_or_default(),
        obj.meta().name.as_deref().unwrap_or_default()
    )
}

impl EnoControllers {
    /// Run the lifecycle controller, its status controller, the rollout and slice cleanup
    /// controllers and their caches until `shutdown` completes. `readiness` is set once every cache has synced.
    pub async fn run(self, shutdown: Shutdown, readiness: Readiness) {
        self.run_parts(shutdown, readiness, true).await
    }

    /// As [`Self::run`]; without the status controller when `with_status_controller` is false
    /// (then pods keep their finalizer and attempts are not recorded, as in upstream's
    /// lifecycle-only tests).
    pub async fn run_parts(
        self,
        shutdown: Shutdown,
        readiness: Readiness,
        with_status_controller: bool,
    ) {
        let pod_namespace = self.config.pod_namespace.clone();

        let (compositions, comp_writer) = reflector::store::<Composition>();
        let (pods, pod_writer) = reflector::store::<Pod>();
        let (synthesizers, syn_writer) = reflector::store::<Synthesizer>();
        let (status_pods, status_pod_writer) = reflector::store::<Pod>();

        let comp_stream = watcher(
            Api::<Composition>::all(self.client.clone()),
            watcher::Config::default(),
        )
        .default_backoff()
        .reflect(comp_writer)
        .applied_objects();
        let pod_api = Api::<Pod>::namespaced(self.client.clone(), &pod_namespace);
        // Pod deletions matter (they let the next pod be created), hence `touched_objects`.
        let pod_stream = watcher(pod_api.clone(), pod_watch_config())
            .default_backoff()
            .reflect(pod_writer)
            .touched_objects();
        let status_pod_stream = watcher(pod_api, pod_watch_config())
            .default_backoff()
            .reflect(status_pod_writer)
            .applied_objects();
        let syn_stream = watcher(
            Api::<Synthesizer>::all(self.client.clone()),
            watcher::Config::default(),
        )
        .default_backoff()
        .reflect(syn_writer)
        .applied_objects();
        let (slices, slice_writer) = reflector::store::<ResourceSlice>();
        let slice_stream = watcher(
            Api::<ResourceSlice>::all(self.client.clone()),
            watcher::Config::default(),
        )
        .default_backoff()
        .reflect(slice_writer)
        .touched_objects();
        // The rollout and slice cleanup controllers are triggered by composition events too;
        // each has its own watch (the lifecycle controller's stream feeds one consumer).
        let comp_trigger = || {
            watcher(
                Api::<Composition>::all(self.client.clone()),
                watcher::Config::default(),
            )
            .default_backoff()
            .applied_objects()
        };

        let ctx = Arc::new(Context {
            client: self.client.clone(),
            compositions: compositions.clone(),
            pods: pods.clone(),
            synthesizers: synthesizers.clone(),
            config: self.config.clone(),
            clock: self.clock.clone(),
            ids: self.ids.clone(),
            metrics: self.metrics.clone(),
        });
        let status_ctx = Arc::new(StatusContext {
            client: self.client.clone(),
            pods: status_pods.clone(),
            compositions: compositions.clone(),
        });
        let rollout_ctx = Arc::new(RolloutContext {
            client: self.client.clone(),
            synthesizers: synthesizers.clone(),
            compositions: compositions.clone(),
            clock: self.clock.clone(),
        });
        let slice_ctx = Arc::new(SliceCleanupContext {
            client: self.client.clone(),
            slices: slices.clone(),
            compositions: compositions.clone(),
            clock: self.clock.clone(),
        });

        let recorder = Recorder::new(
            self.client.clone(),
            Reporter {
                controller: "eno-controller".into(),
                instance: std::env::var("HOSTNAME").ok(),
            },
        );
        let lifecycle_backoff = Arc::new(ErrorBackoff::new(self.config.max_error_backoff));
        let status_backoff = Arc::new(ErrorBackoff::new(self.config.max_error_backoff));
        let rollout_backoff = Arc::new(ErrorBackoff::new(self.config.max_error_backoff));
        let slice_backoff = Arc::new(ErrorBackoff::new(self.config.max_error_backoff));

        let lifecycle_controller = {
            let on_ok = lifecycle_backoff.clone();
            let on_err = lifecycle_backoff.clone();
            Controller::for_stream(comp_stream, compositions.clone())
                .watches_stream(pod_stream, |pod| pod_to_composition(&pod))
                .graceful_shutdown_on(shutdown.clone())
                .run(
                    move |comp, ctx| {
                        let backoff = on_ok.clone();
                        async move {
                            let key = object_key(comp.as_ref());
                            let result = lifecycle::reconcile(comp, ctx).await;
                            if result.is_ok() {
                                backoff.reset(&key);
                            }
                            result
                        }
                    },
                    move |comp, error, _ctx| {
                        report(&recorder, comp.as_ref(), error);
                        error_policy(
                            &on_err,
                            "podLifecycleController",
                            &object_key(comp.as_ref()),
                            error,
                        )
                    },
                    ctx,
                )
                .for_each(|_| future::ready(()))
        };
        let status_controller = {
            let on_ok = status_backoff.clone();
            let on_err = status_backoff.clone();
            Controller::for_stream(status_pod_stream, status_pods.clone())
                .graceful_shutdown_on(shutdown.clone())
                .run(
                    move |pod, ctx| {
                        let backoff = on_ok.clone();
                        async move {
                            let key = object_key(pod.as_ref());
                            let result = status_controller::reconcile(pod, ctx).await;
                            if result.is_ok() {
                                backoff.reset(&key);
                            }
                            result
                        }
                    },
                    move |pod, error, _ctx| {
                        error_policy(
                            &on_err,
                            "statusController",
                            &object_key(pod.as_ref()),
                            error,
                        )
                    },
                    status_ctx,
                )
                .for_each(|_| future::ready(()))
        };
        let rollout_controller = {
            let on_ok = rollout_backoff.clone();
            let on_err = rollout_backoff.clone();
            Controller::for_stream(syn_stream, synthesizers.clone())
                .watches_stream(comp_trigger(), |comp| {
                    rollout::composition_to_synthesizer(&comp)
                })
                .graceful_shutdown_on(shutdown.clone())
                .run(
                    move |syn, ctx| {
                        let backoff = on_ok.clone();
                        async move {
                            let key = object_key(syn.as_ref());
                            let result = rollout::reconcile(syn, ctx).await;
                            if result.is_ok() {
                                backoff.reset(&key);
                            }
                            result
                        }
                    },
                    move |syn, error, _ctx| {
                        error_policy(
                            &on_err,
                            "rolloutController",
                            &object_key(syn.as_ref()),
                            error,
                        )
                    },
                    rollout_ctx,
                )
                .for_each(|_| future::ready(()))
        };
        let slice_cleanup_controller = {
            let on_ok = slice_backoff.clone();
            let on_err = slice_backoff.clone();
            let slice_cache = slices.clone();
            Controller::for_stream(slice_stream, slices.clone())
                .watches_stream(comp_trigger(), move |comp| {
                    slice_cleanup::slices_of_composition(&comp, &slice_cache)
                })
                .graceful_shutdown_on(shutdown.clone())
                .run(
                    move |slice, ctx| {
                        let backoff = on_ok.clone();
                        async move {
                            let key = object_key(slice.as_ref());
                            let result = slice_cleanup::reconcile(slice, ctx).await;
                            if result.is_ok() {
                                backoff.reset(&key);
                            }
                            result
                        }
                    },
                    move |slice, error, _ctx| {
                        error_policy(
                            &on_err,
                            "resourceSliceCleanupController",
                            &object_key(slice.as_ref()),
                            error,
                        )
                    },
                    slice_ctx,
                )
                .for_each(|_| future::ready(()))
        };
        let ready = async move {
            let synced = futures::try_join!(
                compositions.wait_until_ready(),
                pods.wait_until_ready(),
                synthesizers.wait_until_ready(),
                slices.wait_until_ready(),
                async {
                    match with_status_controller {
                        true => status_pods.wait_until_ready().await,
                        false => Ok(()),
                    }
                },
            );
            if synced.is_ok() {
                info!("eno caches synced");
                readiness.set(true);
            }
            future::pending::<()>().await
        };
        let caches = async {
            tokio::select! {
                _ = ready => {}
                _ = shutdown.clone() => {}
            }
        };
        info!(podNamespace = %pod_namespace, with_status_controller, "starting eno controllers");
        let status_controller = async move {
            if with_status_controller {
                status_controller.await;
            }
        };
        future::join5(
            lifecycle_controller,
            status_controller,
            rollout_controller,
            slice_cleanup_controller,
            caches,
        )
        .await;
        info!("eno controllers stopped");
    }
}

/// Report a failed reconcile as a Warning Event on the composition (`kubectl describe` shows
/// it). Conflicts are routine and not reported. Publishing runs in the background.
fn report(recorder: &Recorder, comp: &Composition, error: &Error) {
    if error.is_conflict() {
        return;
    }
    let reason = match error {
        Error::SynthesizerNotFound { .. } => "SynthesizerNotFound",
        _ => "ReconcileError",
    };
    let event = Event {
        type_: EventType::Warning,
        reason: reason.into(),
        note: Some(error.to_string()),
        action: "Reconcile".into(),
        secondary: None,
    };
    let reference = comp.object_ref(&());
    let recorder = recorder.clone();
    tokio::spawn(async move {
        if let Err(e) = recorder.publish(&event, &reference).await {
            tracing::debug!(error = %e, "could not publish event");
        }
    });
}

fn error_policy(
    backoff: &ErrorBackoff,
    controller: &'static str,
    key: &str,
    error: &Error,
) -> Action {
    let wait = backoff.next(key);
    if error.is_conflict() {
        // Expected: a write raced with another; the cache catches up and we retry.
        tracing::debug!(controller, object = key, %error, "reconcile conflict; retrying");
    } else {
        warn!(controller, object = key, %error, retry_in_ms = wait.as_millis() as u64, "reconcile failed");
    }
    Action::requeue(wait)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use std::collections::BTreeMap;

    fn pod(labels: &[(&str, &str)]) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
        );
        pod
    }

    #[rstest]
    #[case::both_labels(&[(LABEL_COMPOSITION_NAME, "x"), (LABEL_COMPOSITION_NAMESPACE, "a")], Some(("x", "a")))]
    #[case::name_only(&[(LABEL_COMPOSITION_NAME, "x")], None)]
    #[case::namespace_only(&[(LABEL_COMPOSITION_NAMESPACE, "a")], None)]
    #[case::empty_name(&[(LABEL_COMPOSITION_NAME, ""), (LABEL_COMPOSITION_NAMESPACE, "a")], None)]
    #[case::no_labels(&[], None)]
    fn maps_pods_with_both_labels(
        #[case] labels: &[(&str, &str)],
        #[case] expected: Option<(&str, &str)>,
    ) {
        let mapped = pod_to_composition(&pod(labels));
        assert_eq!(
            mapped.map(|r| (r.name.clone(), r.namespace.clone().unwrap_or_default())),
            expected.map(|(n, ns)| (n.to_string(), ns.to_string()))
        );
    }

    #[test]
    fn error_backoff_doubles_caps_and_resets() {
        let backoff = ErrorBackoff::new(Duration::from_millis(30));
        let waits: Vec<u128> = (0..5).map(|_| backoff.next("a").as_millis()).collect();
        assert_eq!(waits, vec![5, 10, 20, 30, 30]);
        assert_eq!(backoff.next("b").as_millis(), 5, "per object");
        backoff.reset("a");
        assert_eq!(backoff.next("a").as_millis(), 5);
        for _ in 0..100 {
            backoff.next("c");
        }
        assert_eq!(backoff.next("c").as_millis(), 30, "no overflow");
    }
}
