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

use futures::{future, FutureExt, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::events::{Event, EventType, Reporter};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Client, Resource};
use tracing::{info, warn};

use super::context::{label, pod_composition_index, Config, Context};
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
use crate::operator::events::EventPublisher;
use crate::operator::http::Readiness;
use crate::operator::index::{self, reflect_indexed};
use crate::operator::shutdown::Shutdown;
use crate::operator::trim::strip_managed_fields;

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

/// The caches the Eno controllers read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cache {
    Compositions,
    Pods,
    Synthesizers,
    Slices,
}

/// Which caches have synced; fires a oneshot once all have ("every cache synced": the
/// controllers start and the process is ready).
///
/// A cache counts as synced once its reflect stream yields its first `InitDone` (the store has
/// applied the full list by then). `Store::wait_until_ready` is not used here: each
/// `Controller` waits on its own store that way, and that wait wakes only the last of several
/// concurrent waiters.
#[derive(Clone)]
struct CachesSynced(Arc<Mutex<Pending>>);

struct Pending {
    caches: Vec<Cache>,
    done: Option<futures::channel::oneshot::Sender<()>>,
}

impl Pending {
    /// Fire once no cache is left to sync.
    fn fire_if_done(&mut self) {
        if self.caches.is_empty() {
            if let Some(done) = self.done.take() {
                let _ = done.send(());
            }
        }
    }
}

impl CachesSynced {
    /// Tracks `caches`; the receiver completes once each of them has synced.
    fn new(caches: Vec<Cache>) -> (Self, futures::channel::oneshot::Receiver<()>) {
        let (tx, rx) = futures::channel::oneshot::channel::<()>();
        let mut pending = Pending {
            caches,
            done: Some(tx),
        };
        pending.fire_if_done();
        (Self(Arc::new(Mutex::new(pending))), rx)
    }

    /// Record that `cache` has synced (repeats are no-ops).
    fn mark(&self, cache: Cache) {
        let mut pending = self.0.lock().unwrap_or_else(|e| e.into_inner());
        pending.caches.retain(|c| *c != cache);
        pending.fire_if_done();
    }

    /// A stream inspector marking `cache` synced at its first `InitDone`.
    fn on_init_done<K>(
        &self,
        cache: Cache,
    ) -> impl FnMut(&Result<watcher::Event<K>, watcher::Error>) + Send + 'static {
        let this = self.clone();
        move |event| {
            if let Ok(watcher::Event::InitDone) = event {
                this.mark(cache);
            }
        }
    }
}

/// Which objects of a shared watch one consumer is fed (kube's `applied_objects` or
/// `touched_objects`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Feed {
    /// Added and modified objects.
    Applied,
    /// Added, modified and deleted objects.
    Touched,
}

/// A trigger queue of one consumer of a shared watch.
type Trigger<K> = futures::channel::mpsc::UnboundedReceiver<Result<K, watcher::Error>>;

/// One watch shared by several consumers, as controller-runtime's manager shares one informer
/// per kind among its controllers: polls `stream` (so the reflector behind it keeps its store
/// current) and queues each object for every consumer in `feeds`, in event order, for
/// consumers that may start later. Each event is decoded once however many consumers it has.
///
/// A watch error goes to the first consumer only (`watcher::Error` cannot be copied); kube's
/// `Controller` passes trigger errors to its output and carries on, and the watcher's backoff
/// retries the watch for all of them.
fn share<K: Clone + Send + 'static, const N: usize>(
    stream: impl futures::Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
    feeds: [Feed; N],
) -> (future::BoxFuture<'static, ()>, [Trigger<K>; N]) {
    let mut senders = Vec::with_capacity(N);
    let receivers = feeds.map(|feed| {
        let (tx, rx) = futures::channel::mpsc::unbounded();
        senders.push((feed, tx));
        rx
    });
    let pump = stream
        .for_each(move |event| {
            let (object, deleted) = match event {
                Ok(watcher::Event::Apply(obj) | watcher::Event::InitApply(obj)) => (obj, false),
                Ok(watcher::Event::Delete(obj)) => (obj, true),
                Ok(watcher::Event::Init | watcher::Event::InitDone) => return future::ready(()),
                Err(error) => {
                    if let Some((_, tx)) = senders.first() {
                        let _ = tx.unbounded_send(Err(error));
                    }
                    return future::ready(());
                }
            };
            let fed = |feed: &Feed| !deleted || *feed == Feed::Touched;
            // Every fed consumer but the last gets a copy; the last gets the object itself.
            if let Some(last) = senders.iter().rposition(|(feed, _)| fed(feed)) {
                for (_, tx) in senders[..last].iter().filter(|(feed, _)| fed(feed)) {
                    let _ = tx.unbounded_send(Ok(object.clone()));
                }
                let _ = senders[last].1.unbounded_send(Ok(object));
            }
            future::ready(())
        })
        .boxed();
    (pump, receivers)
}

impl EnoControllers {
    /// Run the lifecycle controller, its status controller, the rollout and slice cleanup
    /// controllers and their caches until `shutdown` completes. The controllers start, and
    /// `readiness` is set, once every cache has synced.
    pub async fn run(self, shutdown: Shutdown, readiness: Readiness) {
        self.run_parts(shutdown, readiness, true).await
    }

    /// As [`Self::run`]; without the status controller when `with_status_controller` is false
    /// (then pods keep their finalizer and attempts are not recorded, as in upstream's
    /// lifecycle-only tests).
    ///
    /// As controller-runtime (upstream's runtime) does, no reconcile of any controller runs
    /// before every cache any of them reads has synced: the watches fill the stores from the
    /// start, their events are queued, and the controllers are built on those queues only then.
    /// Built after the sync, each controller finds its own store ready on its first poll, so
    /// the queued keys go to its scheduler in order rather than through kube's held-key set,
    /// whose order is that of a randomly seeded hash.
    ///
    /// [`Config::start_before_caches_sync`] (a test switch) starts the controllers at once
    /// instead; readiness still waits for every cache.
    pub async fn run_parts(
        self,
        shutdown: Shutdown,
        readiness: Readiness,
        with_status_controller: bool,
    ) {
        let pod_namespace = self.config.pod_namespace.clone();

        // Every cache read by any controller. As controller-runtime's manager does, each kind
        // has one watch and one cache, shared by every controller that reads or is triggered
        // by it.
        let (synced, all_synced) = CachesSynced::new(vec![
            Cache::Compositions,
            Cache::Pods,
            Cache::Synthesizers,
            Cache::Slices,
        ]);

        let (compositions, comp_writer) = index::store(rollout::composition_synthesizer_index);
        let (pods, pod_writer) = index::store(pod_composition_index);
        let (synthesizers, syn_writer) = reflector::store::<Synthesizer>();
        let (slices, slice_writer) = index::store(slice_cleanup::slice_composition_index);

        // Compositions trigger the lifecycle controller (their own), the rollout controller
        // (their Synthesizer) and the slice cleanup controller (their slices).
        let comp_stream = reflect_indexed(
            watcher(
                Api::<Composition>::all(self.client.clone()),
                watcher::Config::default(),
            )
            .default_backoff()
            .modify(strip_managed_fields),
            comp_writer,
        )
        .inspect(synced.on_init_done(Cache::Compositions));
        let (comp_pump, [comp_events, rollout_comp_events, slice_comp_events]) =
            share(comp_stream, [Feed::Applied; 3]);

        // Pods trigger the lifecycle controller, deletions included (they let the next pod be
        // created), and the status controller (their own) when it runs.
        let pod_stream = reflect_indexed(
            watcher(
                Api::<Pod>::namespaced(self.client.clone(), &pod_namespace),
                pod_watch_config(),
            )
            .default_backoff()
            .modify(strip_managed_fields),
            pod_writer,
        )
        .inspect(synced.on_init_done(Cache::Pods));
        let (pod_pump, pod_events, status_pod_events) = if with_status_controller {
            let (pump, [lifecycle, status]) = share(pod_stream, [Feed::Touched, Feed::Applied]);
            (pump, lifecycle, Some(status))
        } else {
            let (pump, [lifecycle]) = share(pod_stream, [Feed::Touched]);
            (pump, lifecycle, None)
        };

        let syn_stream = watcher(
            Api::<Synthesizer>::all(self.client.clone()),
            watcher::Config::default(),
        )
        .default_backoff()
        .modify(strip_managed_fields)
        .reflect(syn_writer)
        .inspect(synced.on_init_done(Cache::Synthesizers));
        let (syn_pump, [syn_events]) = share(syn_stream, [Feed::Applied]);

        let slice_stream = reflect_indexed(
            watcher(
                Api::<ResourceSlice>::all(self.client.clone()),
                watcher::Config::default(),
            )
            .default_backoff()
            .modify(strip_managed_fields),
            slice_writer,
        )
        .inspect(synced.on_init_done(Cache::Slices));
        let (slice_pump, [slice_events]) = share(slice_stream, [Feed::Touched]);

        // The watches run from the start until stopping; ending them (dropping the senders)
        // ends the controllers' triggers.
        let watches = {
            let shutdown = shutdown.clone();
            async move {
                let pumps = future::join4(comp_pump, pod_pump, syn_pump, slice_pump);
                tokio::select! {
                    biased;
                    _ = shutdown => {}
                    _ = pumps => {}
                }
            }
        };

        let ctx = Arc::new(Context {
            client: self.client.clone(),
            compositions: compositions.store(),
            pods: pods.clone(),
            synthesizers: synthesizers.clone(),
            config: self.config.clone(),
            clock: self.clock.clone(),
            ids: self.ids.clone(),
            metrics: self.metrics.clone(),
        });
        let status_pods = pods.store();
        let status_ctx = Arc::new(StatusContext {
            client: self.client.clone(),
            pods: status_pods.clone(),
            compositions: compositions.store(),
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
            compositions: compositions.store(),
            clock: self.clock.clone(),
        });

        let recorder = EventPublisher::new(
            self.client.clone(),
            Reporter {
                controller: "eno-controller".into(),
                instance: std::env::var("HOSTNAME").ok(),
            },
            self.clock.clone(),
        );
        let lifecycle_backoff = Arc::new(ErrorBackoff::new(self.config.max_error_backoff));
        let status_backoff = Arc::new(ErrorBackoff::new(self.config.max_error_backoff));
        let rollout_backoff = Arc::new(ErrorBackoff::new(self.config.max_error_backoff));
        let slice_backoff = Arc::new(ErrorBackoff::new(self.config.max_error_backoff));

        // The process is ready once every cache has synced; stopping wins over a sync at the
        // same moment.
        let caches_synced = {
            let shutdown = shutdown.clone();
            async move {
                let synced = tokio::select! {
                    biased;
                    _ = shutdown => false,
                    done = all_synced => done.is_ok(),
                };
                if synced {
                    info!("eno caches synced");
                    readiness.set(true);
                }
                synced
            }
        };
        let start_before_caches_sync = self.config.start_before_caches_sync;
        let limit = self.config.max_concurrent_reconciles;
        let controller_config = ControllerConfig::default().concurrency(dispatch_window(limit));

        let run_controllers = async move {
            let lifecycle_controller = {
                let on_ok = lifecycle_backoff.clone();
                let on_err = lifecycle_backoff;
                Controller::for_stream(comp_events, compositions.store())
                    .watches_stream(pod_events, |pod| pod_to_composition(&pod))
                    .with_config(controller_config.clone())
                    .graceful_shutdown_on(shutdown.clone())
                    .run(
                        limited(limit, resetting_backoff(on_ok, lifecycle::reconcile)),
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
            let status_controller = async {
                let Some(status_pod_events) = status_pod_events else {
                    return;
                };
                let on_ok = status_backoff.clone();
                let on_err = status_backoff;
                Controller::for_stream(status_pod_events, status_pods.clone())
                    .with_config(controller_config.clone())
                    .graceful_shutdown_on(shutdown.clone())
                    .run(
                        limited(
                            limit,
                            resetting_backoff(on_ok, status_controller::reconcile),
                        ),
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
                    .await
            };
            let rollout_controller = {
                let on_ok = rollout_backoff.clone();
                let on_err = rollout_backoff;
                Controller::for_stream(syn_events, synthesizers.clone())
                    .watches_stream(rollout_comp_events, |comp| {
                        rollout::composition_to_synthesizer(&comp)
                    })
                    .with_config(controller_config.clone())
                    .graceful_shutdown_on(shutdown.clone())
                    .run(
                        limited(limit, resetting_backoff(on_ok, rollout::reconcile)),
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
                let on_err = slice_backoff;
                let slice_cache = slices.clone();
                Controller::for_stream(slice_events, slices.store())
                    .watches_stream(slice_comp_events, move |comp| {
                        slice_cleanup::slices_of_composition(&comp, &slice_cache)
                    })
                    .with_config(controller_config.clone())
                    .graceful_shutdown_on(shutdown.clone())
                    .run(
                        limited(limit, resetting_backoff(on_ok, slice_cleanup::reconcile)),
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
            future::join4(
                lifecycle_controller,
                status_controller,
                rollout_controller,
                slice_cleanup_controller,
            )
            .await;
        };
        let controllers = async move {
            if start_before_caches_sync {
                // The test switch: the controllers start at once, each waiting only on its own
                // store (kube's `Controller`), so a reconcile may read another cache before it
                // has synced.
                warn!("starting the eno controllers before every cache has synced (test switch)");
                future::join(caches_synced, run_controllers).await;
            } else if caches_synced.await {
                run_controllers.await;
            }
        };
        info!(podNamespace = %pod_namespace, with_status_controller, "starting eno controllers");
        future::join(watches, controllers).await;
        info!("eno controllers stopped");
    }
}

/// Report a failed reconcile as a Warning Event on the composition (`kubectl describe` shows
/// it). Conflicts are routine and not reported. Publishing runs in the background.
fn report(recorder: &EventPublisher, comp: &Composition, error: &Error) {
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

/// How many reconciles kube's `Controller` may have dispatched at once for a limit of `limit`
/// reconciles running at once (0: any number, then no bound either).
///
/// The dispatched ones wait in [`limited`]'s first-come, first-served queue, so up to this many
/// ready objects run in a fixed order. Beyond it kube holds the ready objects in its scheduler
/// (a hashed set: in no fixed order) until a dispatched one finishes. The bound matters at
/// scale: kube polls every dispatched reconcile whenever any of them wakes, and scans its held
/// objects against the dispatched ones, so with every ready object dispatched (thousands at
/// `make bench-scale`'s 3000 Compositions) each watch event and each finished request cost
/// time proportional to the backlog (a fifth of the controller process's CPU at 1000, most of
/// it at 3000).
pub fn dispatch_window(limit: u16) -> u16 {
    limit.saturating_mul(DISPATCH_WINDOW_PER_RECONCILE)
}

/// Dispatched reconciles per reconcile allowed to run at once (see [`dispatch_window`]).
pub const DISPATCH_WINDOW_PER_RECONCILE: u16 = 32;

/// Wraps a reconcile function so that at most `limit` of its reconciles run at once (0: any
/// number); the others wait their turn in the order kube dispatched them.
fn limited<K, C, F>(
    limit: u16,
    mut reconcile: F,
) -> impl FnMut(Arc<K>, Arc<C>) -> future::BoxFuture<'static, Result<Action, Error>>
where
    F: FnMut(Arc<K>, Arc<C>) -> future::BoxFuture<'static, Result<Action, Error>>,
{
    let permits = (limit > 0).then(|| Arc::new(tokio::sync::Semaphore::new(limit.into())));
    move |object, ctx| {
        let reconciled = reconcile(object, ctx);
        let permits = permits.clone();
        async move {
            // The semaphore is never closed, so acquiring only fails if it were; run anyway.
            let _permit = match &permits {
                Some(permits) => permits.clone().acquire_owned().await.ok(),
                None => None,
            };
            reconciled.await
        }
        .boxed()
    }
}

/// Wraps a reconcile function so that a success forgets the object's failures in `backoff`.
fn resetting_backoff<K, C, F, Fut>(
    backoff: Arc<ErrorBackoff>,
    reconcile: F,
) -> impl FnMut(Arc<K>, Arc<C>) -> future::BoxFuture<'static, Result<Action, Error>>
where
    K: Resource + 'static,
    F: Fn(Arc<K>, Arc<C>) -> Fut,
    Fut: std::future::Future<Output = Result<Action, Error>> + Send + 'static,
{
    move |object, ctx| {
        let key = object_key(object.as_ref());
        let backoff = backoff.clone();
        let reconciled = reconcile(object, ctx);
        async move {
            let result = reconciled.await;
            if result.is_ok() {
                backoff.reset(&key);
            }
            result
        }
        .boxed()
    }
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

    /// One watch feeds every consumer each object once, in order: deletions only to the
    /// consumers of touched objects, the relist's markers to none, a watch error to the first.
    #[tokio::test]
    async fn a_shared_watch_feeds_each_consumer_its_objects_in_order() {
        use watcher::Event;
        let events = vec![
            Ok(Event::Init),
            Ok(Event::InitApply(pod(&[("n", "1")]))),
            Ok(Event::InitDone),
            Ok(Event::Apply(pod(&[("n", "2")]))),
            Ok(Event::Delete(pod(&[("n", "3")]))),
            Err(watcher::Error::NoResourceVersion),
            Ok(Event::Apply(pod(&[("n", "4")]))),
        ];
        let (pump, [touched, applied, second]) = share(
            futures::stream::iter(events),
            [Feed::Touched, Feed::Applied, Feed::Applied],
        );
        pump.await;
        let seen = |rx: Trigger<Pod>| async move {
            rx.map(|item| match item {
                Ok(pod) => label(&pod, "n").unwrap_or_default().to_string(),
                Err(_) => "error".to_string(),
            })
            .collect::<Vec<_>>()
            .await
        };
        assert_eq!(seen(touched).await, ["1", "2", "3", "error", "4"]);
        assert_eq!(seen(applied).await, ["1", "2", "4"]);
        assert_eq!(seen(second).await, ["1", "2", "4"]);
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

    /// Holds every LIST of one resource until released; records every request.
    struct HoldList {
        resource: &'static str,
        open: future::Shared<futures::future::BoxFuture<'static, ()>>,
        seen: Mutex<Vec<(String, String, String)>>,
    }

    impl fake_apiserver::hooks::RequestGate for HoldList {
        fn admit(
            &self,
            request: &fake_apiserver::hooks::RequestInfo,
        ) -> fake_apiserver::hooks::BoxFuture {
            self.seen.lock().unwrap_or_else(|e| e.into_inner()).push((
                request.verb.clone(),
                request.resource.clone(),
                request.name.clone().unwrap_or_default(),
            ));
            if request.verb == "list" && request.resource == self.resource {
                Box::pin(self.open.clone())
            } else {
                Box::pin(future::ready(()))
            }
        }
    }

    /// A server with Eno's CRDs and the `eno-system` namespace; with `compositions`, also
    /// namespace `a`, Synthesizer `syn` and those compositions of it in `a`.
    async fn eno_world(
        server: &fake_apiserver::FakeApiServer,
        compositions: &[String],
    ) -> kube::Client {
        use super::super::demo::{
            demo_composition, demo_synthesizer, ensure_namespace, install_crds,
        };
        use kube::api::PostParams;

        let client = server.client();
        install_crds(&client).await.unwrap();
        ensure_namespace(&client, "eno-system").await.unwrap();
        if compositions.is_empty() {
            return client;
        }
        ensure_namespace(&client, "a").await.unwrap();
        Api::<Synthesizer>::all(client.clone())
            .create(&PostParams::default(), &demo_synthesizer("syn"))
            .await
            .unwrap();
        for name in compositions {
            Api::<Composition>::namespaced(client.clone(), "a")
                .create(&PostParams::default(), &demo_composition(name, "a", "syn"))
                .await
                .unwrap();
        }
        client
    }

    /// A gate recording every request and holding every list of `resource` until `open`.
    fn hold_list(
        server: &fake_apiserver::FakeApiServer,
        resource: &'static str,
        open: futures::future::BoxFuture<'static, ()>,
    ) -> Arc<HoldList> {
        let gate = Arc::new(HoldList {
            resource,
            open: open.shared(),
            seen: Mutex::default(),
        });
        server.set_gate(Some(gate.clone()));
        gate
    }

    /// The Eno controllers of a test (`run_parts` on `client`), running until [`Self::stop`].
    struct Running {
        stop: futures::channel::oneshot::Sender<()>,
        task: tokio::task::JoinHandle<()>,
        readiness: Readiness,
    }

    impl Running {
        fn start(client: kube::Client, with_status_controller: bool) -> Self {
            use crate::operator::shutdown;
            use futures::FutureExt;

            let (stop, stopped) = futures::channel::oneshot::channel::<()>();
            let readiness = Readiness::new();
            let controllers = EnoControllers {
                client,
                config: Config::new("eno-system", "controllers:test"),
                clock: Arc::new(crate::clock::SystemClock),
                ids: Arc::new(crate::ids::SeededIds::new(1)),
                metrics: Metrics::default(),
            };
            let task = tokio::spawn(controllers.run_parts(
                shutdown::on(stopped.map(|_| ())),
                readiness.clone(),
                with_status_controller,
            ));
            Self {
                stop,
                task,
                readiness,
            }
        }

        /// Signals the stop and waits for the run to end.
        async fn stop(self) {
            self.stop.send(()).unwrap();
            tokio::time::timeout(Duration::from_secs(60), self.task)
                .await
                .expect("controllers stop")
                .unwrap();
        }
    }

    /// controller-runtime starts no worker before every cache has synced: while one cache's
    /// list is held, no controller writes anything (the lifecycle controller would add its
    /// finalizer, its compositions cache being synced) and the process is not ready.
    /// The paused clock only moves when every task is idle, so "nothing happened in 30s" means
    /// nothing could happen.
    #[rstest]
    #[case::compositions("compositions")]
    #[case::synthesizers("synthesizers")]
    #[case::pods("pods")]
    #[case::slices("resourceslices")]
    #[tokio::test(start_paused = true)]
    async fn no_reconcile_before_every_cache_has_synced(#[case] held: &'static str) {
        use super::super::FINALIZER;
        use futures::FutureExt;
        use kube::ResourceExt;

        let server = fake_apiserver::FakeApiServer::new();
        let client = eno_world(&server, &["x".to_string()]).await;
        let compositions = Api::<Composition>::namespaced(client.clone(), "a");
        let (release, released) = futures::channel::oneshot::channel::<()>();
        let gate = hold_list(&server, held, released.map(|_| ()).boxed());
        let running = Running::start(client, true);

        tokio::time::sleep(Duration::from_secs(30)).await;
        let seen = gate.seen.lock().unwrap().clone();
        assert!(
            seen.iter()
                .any(|(verb, resource, _)| verb == "list" && resource == held),
            "the held list was asked for: {seen:?}"
        );
        let writes: Vec<_> = seen
            .iter()
            .filter(|(verb, _, _)| !matches!(verb.as_str(), "get" | "list" | "watch"))
            .collect();
        assert!(writes.is_empty(), "wrote before {held} synced: {writes:?}");
        assert!(!running.readiness.is_ready(), "ready before {held} synced");

        release.send(()).unwrap();
        let mut finalized = false;
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let comp = compositions.get("x").await.unwrap();
            if comp.finalizers().iter().any(|f| f == FINALIZER) {
                finalized = true;
                break;
            }
        }
        assert!(
            finalized,
            "the lifecycle controller runs once every cache synced"
        );
        assert!(running.readiness.is_ready());
        running.stop().await;
    }

    /// Stopping before every cache has synced ends the run (no controller was started, and
    /// none waits for a store that never fills) without the process ever being ready.
    #[tokio::test(start_paused = true)]
    async fn stopping_before_the_caches_synced_ends_the_run() {
        use futures::FutureExt;

        let server = fake_apiserver::FakeApiServer::new();
        let client = eno_world(&server, &["x".to_string()]).await;
        hold_list(&server, "synthesizers", future::pending().boxed());
        let running = Running::start(client, true);
        tokio::time::sleep(Duration::from_secs(30)).await;
        let readiness = running.readiness.clone();
        running.stop().await;
        assert!(!readiness.is_ready());
    }

    /// As controller-runtime's manager, one list and one watch per kind, however many
    /// controllers read or are triggered by it.
    #[tokio::test(start_paused = true)]
    async fn each_kind_is_listed_and_watched_once() {
        use futures::FutureExt;

        let server = fake_apiserver::FakeApiServer::new();
        let client = eno_world(&server, &[]).await;
        let gate = hold_list(&server, "", future::ready(()).boxed());
        let running = Running::start(client, true);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(running.readiness.is_ready());
        running.stop().await;
        let seen = gate.seen.lock().unwrap().clone();
        let mut reads: BTreeMap<(String, String), usize> = BTreeMap::new();
        for (verb, resource, _) in seen {
            if verb == "list" || verb == "watch" {
                *reads.entry((verb, resource)).or_default() += 1;
            }
        }
        let expected: BTreeMap<(String, String), usize> = ["list", "watch"]
            .iter()
            .flat_map(|verb| {
                ["compositions", "pods", "resourceslices", "synthesizers"]
                    .map(|resource| ((verb.to_string(), resource.to_string()), 1))
            })
            .collect();
        assert_eq!(reads, expected);
    }

    /// Start-up order does not depend on hashing: the same compositions get their finalizers
    /// in the same order on every run (each run's kube scheduler hashes with other keys).
    #[tokio::test(start_paused = true)]
    async fn start_up_reconciles_run_in_a_fixed_order() {
        use futures::FutureExt;

        let names: Vec<String> = (0..8).map(|i| format!("c{i}")).collect();
        let mut orders = vec![];
        for _ in 0..3 {
            let server = fake_apiserver::FakeApiServer::builder().seed(1).build();
            let client = eno_world(&server, &names).await;
            let gate = hold_list(&server, "", future::ready(()).boxed());
            let running = Running::start(client, false);
            tokio::time::sleep(Duration::from_secs(1)).await;
            running.stop().await;
            let seen = gate.seen.lock().unwrap().clone();
            orders.push(seen);
        }
        assert_eq!(orders[0], orders[1]);
        assert_eq!(orders[0], orders[2]);
    }
}
