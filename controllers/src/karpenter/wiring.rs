//! Production wiring: one watch per kind feeds the reflector stores in the [`Context`], and the
//! watch mappings below turn each watch event into the keys each controller reconciles; the
//! controllers themselves are `kube::runtime::Controller`s reading the same stores.
//!
//! The mappings are plain values and functions so the race harness can drive the very same
//! reconciles from its own scheduler:
//! - [`LifecycleNodeClaimFilter`]: NodeClaim **create** events only (upstream's `For` predicate
//!   drops updates and deletes, so the controller's own writes never requeue it) — plus a
//!   re-trigger when the cache catches up with a write a deferred pass was waiting for;
//! - [`nodeclaims_for_node`]: any Node event → the cached NodeClaims with that provider id;
//! - [`TerminationNodeClaimFilter`]: NodeClaim creates, deletes, and updates that change the
//!   generation (`GenerationChangedPredicate`; setting deletionTimestamp bumps it);
//! - Node **delete** events → [`nodeclaims_for_node`] for termination;
//! - Node events → that Node, for the minimal node termination controller;
//! - no watch for [`garbage_collection`]: its two singletons run on timers once the stores sync.
//!
//! Every watched object is trimmed to what the reconciles read before it enters a store
//! ([`super::trim`]: no managedFields; of a Node's status only conditions and allocatable).
//!
//! Objects listed during a (re)list are only in the store after `InitDone`, so their triggers are
//! emitted then. Upstream's rate limits (1s→1m per item, 10 qps / burst 100) are applied by the
//! reconciles through [`super::rate_limit`]; concurrency is 1000 (lifecycle) and 100 (termination).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures::channel::mpsc;
use futures::future::{BoxFuture, FutureExt};
use futures::{stream, StreamExt};
use k8s_openapi::api::core::v1::Node;
use kube::runtime::controller::{Config as ControllerConfig, Controller};
use kube::runtime::reflector::{self, store::Writer, ObjectRef, Store};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, ResourceExt};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::task::JoinSet;

use crate::operator::shutdown::{self, Shutdown};

use super::context::{Context, Stores};
use super::garbage_collection;
use super::lifecycle;
use super::node_termination;
use super::nodes::nodeclaims_for_node;
use super::termination;
use super::types::NodeClaim;

/// Lifecycle's NodeClaim trigger: a key is emitted the first time its UID is seen.
#[derive(Debug, Default)]
pub struct LifecycleNodeClaimFilter {
    seen: HashSet<String>,
}

impl LifecycleNodeClaimFilter {
    /// The trigger for an object now in the store (an `Apply`, or an `InitApply` at `InitDone`).
    pub fn on_apply(&mut self, nc: &NodeClaim, ctx: &Context) -> Option<ObjectRef<NodeClaim>> {
        let uid = nc.uid().unwrap_or_default();
        let created = self.seen.insert(uid);
        let caught_up = ctx
            .read_own_writes
            .caught_up_by(&nc.name_any(), nc.resource_version().as_deref());
        (created || caught_up).then(|| ObjectRef::from_obj(nc))
    }

    /// A delete: forget the UID (no trigger).
    pub fn on_delete(&mut self, nc: &NodeClaim, ctx: &Context) {
        self.seen.remove(&nc.uid().unwrap_or_default());
        ctx.read_own_writes.forget(&nc.name_any());
    }

    /// After a relist: forget UIDs no longer in the store.
    pub fn prune(&mut self, store: &Store<NodeClaim>) {
        let live: HashSet<String> = store.state().iter().filter_map(|nc| nc.uid()).collect();
        self.seen.retain(|uid| live.contains(uid));
    }
}

/// Termination's NodeClaim trigger: first sighting or a generation change.
#[derive(Debug, Default)]
pub struct TerminationNodeClaimFilter {
    generations: HashMap<String, Option<i64>>,
}

impl TerminationNodeClaimFilter {
    /// The trigger for an object now in the store.
    pub fn on_apply(&mut self, nc: &NodeClaim) -> Option<ObjectRef<NodeClaim>> {
        let uid = nc.uid().unwrap_or_default();
        let previous = self.generations.insert(uid, nc.metadata.generation);
        (previous != Some(nc.metadata.generation)).then(|| ObjectRef::from_obj(nc))
    }

    /// A delete: forget the UID (the key is gone from the store, so no reconcile would run).
    pub fn on_delete(&mut self, nc: &NodeClaim) {
        self.generations.remove(&nc.uid().unwrap_or_default());
    }

    /// After a relist: forget UIDs no longer in the store.
    pub fn prune(&mut self, store: &Store<NodeClaim>) {
        let live: HashSet<String> = store.state().iter().filter_map(|nc| nc.uid()).collect();
        self.generations.retain(|uid, _| live.contains(uid));
    }
}

/// The keys one watch event triggers, per controller.
#[derive(Debug, Default, PartialEq)]
pub struct Triggers {
    /// Lifecycle keys.
    pub lifecycle: Vec<ObjectRef<NodeClaim>>,
    /// NodeClaim termination keys.
    pub termination: Vec<ObjectRef<NodeClaim>>,
    /// Node termination keys.
    pub nodes: Vec<ObjectRef<Node>>,
}

/// Applies watch events to the stores and maps them to triggers: the whole watch side of both
/// controllers, usable by hand (the harness) or from watch streams ([`spawn`]).
pub struct Dispatcher {
    ctx: Arc<Context>,
    nodeclaim_writer: Writer<NodeClaim>,
    node_writer: Writer<Node>,
    lifecycle: LifecycleNodeClaimFilter,
    termination: TerminationNodeClaimFilter,
    nodeclaim_init: Vec<NodeClaim>,
    node_init: Vec<Node>,
    /// The Nodes the store held when a relist began: those missing from the new list were
    /// deleted while the watch was down.
    node_before_relist: Vec<Arc<Node>>,
}

impl Dispatcher {
    /// A dispatcher writing into the stores `ctx` reads (created by [`new_stores`]).
    pub fn new(ctx: Arc<Context>, writers: Writers) -> Self {
        Self {
            ctx,
            nodeclaim_writer: writers.nodeclaims,
            node_writer: writers.nodes,
            lifecycle: LifecycleNodeClaimFilter::default(),
            termination: TerminationNodeClaimFilter::default(),
            nodeclaim_init: vec![],
            node_init: vec![],
            node_before_relist: vec![],
        }
    }

    /// Apply a NodeClaim watch event to the store; return what it triggers.
    pub fn on_nodeclaim_event(&mut self, event: &watcher::Event<NodeClaim>) -> Triggers {
        self.nodeclaim_writer.apply_watcher_event(event);
        let mut t = Triggers::default();
        let applied = match event {
            watcher::Event::Apply(nc) => vec![nc.clone()],
            watcher::Event::Delete(nc) => {
                self.lifecycle.on_delete(nc, &self.ctx);
                self.termination.on_delete(nc);
                vec![]
            }
            watcher::Event::Init => {
                self.nodeclaim_init.clear();
                vec![]
            }
            watcher::Event::InitApply(nc) => {
                self.nodeclaim_init.push(nc.clone());
                vec![]
            }
            watcher::Event::InitDone => {
                self.lifecycle.prune(&self.ctx.nodeclaims);
                self.termination.prune(&self.ctx.nodeclaims);
                std::mem::take(&mut self.nodeclaim_init)
            }
        };
        for nc in &applied {
            t.lifecycle.extend(self.lifecycle.on_apply(nc, &self.ctx));
            t.termination.extend(self.termination.on_apply(nc));
        }
        t
    }

    /// Apply a Node watch event to the store; return what it triggers.
    ///
    /// A relist (after a dropped or expired watch) also reports, as deleted, every Node the
    /// store held before it that the new list lacks — as client-go's informer does
    /// (`DeletedFinalStateUnknown`), and kube-runtime's watcher does not. Without it, a Node
    /// deleted while the watch was down never requeues the terminating NodeClaim waiting for
    /// it, which then waits forever (found by the race harness,
    /// `karpenter/termination-waits-for-nodes` seed 1415 in `make race`).
    pub fn on_node_event(&mut self, event: &watcher::Event<Node>) -> Triggers {
        if matches!(event, watcher::Event::Init) {
            // The writer keeps the old contents until the relist is done.
            self.node_before_relist = self.ctx.nodes.state();
        }
        self.node_writer.apply_watcher_event(event);
        let mut t = Triggers::default();
        let (applied, deleted) = match event {
            watcher::Event::Apply(n) => (vec![n.clone()], vec![]),
            watcher::Event::Delete(n) => (vec![], vec![n.clone()]),
            watcher::Event::Init => {
                self.node_init.clear();
                (vec![], vec![])
            }
            watcher::Event::InitApply(n) => {
                self.node_init.push(n.clone());
                (vec![], vec![])
            }
            watcher::Event::InitDone => {
                let listed = std::mem::take(&mut self.node_init);
                let gone = std::mem::take(&mut self.node_before_relist)
                    .into_iter()
                    .filter(|old| !listed.iter().any(|n| n.metadata.name == old.metadata.name))
                    .map(|old| (*old).clone())
                    .collect();
                (listed, gone)
            }
        };
        for n in applied.iter().chain(&deleted) {
            t.lifecycle
                .extend(nodeclaims_for_node(&self.ctx.nodeclaims, n));
        }
        for n in &deleted {
            t.termination
                .extend(nodeclaims_for_node(&self.ctx.nodeclaims, n));
        }
        for n in &applied {
            t.nodes.push(ObjectRef::from_obj(n));
        }
        t
    }
}

/// The writing halves of the context's stores.
pub struct Writers {
    /// Feeds `Context::nodeclaims`.
    pub nodeclaims: Writer<NodeClaim>,
    /// Feeds `Context::nodes`.
    pub nodes: Writer<Node>,
}

/// Fresh stores: the readers go into the [`Context`], the writers to a [`Dispatcher`].
pub fn new_stores() -> (Stores, Writers) {
    let (nodeclaims, nc_writer) = reflector::store();
    let (nodes, node_writer) = reflector::store();
    (
        Stores { nodeclaims, nodes },
        Writers {
            nodeclaims: nc_writer,
            nodes: node_writer,
        },
    )
}

/// Options of the production wiring.
#[derive(Clone)]
pub struct WiringOptions {
    /// Watcher configuration of every watch.
    pub watcher_config: watcher::Config,
    /// Run the minimal node termination controller (needed unless something else removes
    /// `karpenter.sh/termination` from deleting Nodes).
    pub node_termination: bool,
    /// Trim watched objects before they enter the caches ([`super::trim`]; on by default).
    /// Off only to measure what the trimming saves.
    pub trim_caches: bool,
}

impl Default for WiringOptions {
    fn default() -> Self {
        Self {
            watcher_config: watcher::Config::default(),
            node_termination: true,
            trim_caches: true,
        }
    }
}

/// The running controllers. Dropping it aborts every task at once (as a crash would);
/// [`Running::shutdown`] stops them gracefully.
pub struct Running {
    /// The shared context (stores, metrics, provider, caches).
    pub context: Arc<Context>,
    ready: futures::future::Shared<BoxFuture<'static, bool>>,
    resync: Vec<mpsc::UnboundedSender<()>>,
    stop: Option<futures::channel::oneshot::Sender<()>>,
    /// The watch and controller tasks; dropping the set aborts them.
    tasks: JoinSet<()>,
}

impl Running {
    /// Reconcile every cached NodeClaim in both controllers now (a resync; e.g. after moving a
    /// manual clock past a TTL).
    pub fn resync(&self) {
        for tx in &self.resync {
            let _ = tx.unbounded_send(());
        }
    }

    /// Resolves once both stores hold a full list and the controllers run (`false` if stopped
    /// first). Use this rather than `Store::wait_until_ready` on the context's stores.
    pub async fn ready(&self) -> bool {
        self.ready.clone().await
    }

    /// Stop watching, let running reconciles finish, and wait for every task.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        while self.tasks.join_next().await.is_some() {}
    }
}

/// Starts the watches, the lifecycle and termination controllers (and optionally the node
/// termination stand-in) on the current tokio runtime. They stop on `external` or
/// [`Running::shutdown`], whichever comes first, and are aborted when the [`Running`] is dropped:
/// keep it for as long as they should run.
pub fn spawn(
    ctx: Arc<Context>,
    writers: Writers,
    opts: WiringOptions,
    external: Shutdown,
) -> Running {
    let (stop_tx, stop_rx) = futures::channel::oneshot::channel::<()>();
    let stop: Shutdown = shutdown::on(async move {
        futures::future::select(stop_rx.map(|_| ()), external).await;
    });
    let (lc_tx, lc_rx) = mpsc::unbounded();
    let (tm_tx, tm_rx) = mpsc::unbounded();
    let (node_tx, node_rx) = mpsc::unbounded();
    let (lc_resync_tx, lc_resync_rx) = mpsc::unbounded();
    let (tm_resync_tx, tm_resync_rx) = mpsc::unbounded();
    let mut tasks = JoinSet::new();

    // Watches → stores → triggers.
    let mut dispatcher = Dispatcher::new(ctx.clone(), writers);
    let trim = opts.trim_caches;
    let nc_events = watcher(
        Api::<NodeClaim>::all(ctx.client.clone()),
        opts.watcher_config.clone(),
    )
    .default_backoff()
    .modify(move |nc| {
        if trim {
            super::trim::nodeclaim(nc)
        }
    })
    .map(|e| Watched::NodeClaim(Box::new(e)));
    let node_events = watcher(
        Api::<Node>::all(ctx.client.clone()),
        opts.watcher_config.clone(),
    )
    .default_backoff()
    .modify(move |node| {
        if trim {
            super::trim::node(node)
        }
    })
    .map(|e| Watched::Node(Box::new(e)));
    let mut events = Box::pin(stream::select(nc_events, node_events).take_until(stop.clone()));
    let node_termination = opts.node_termination;
    tasks.spawn(async move {
        while let Some(ev) = events.next().await {
            let t = match ev {
                Watched::NodeClaim(e) => match *e {
                    Ok(e) => dispatcher.on_nodeclaim_event(&e),
                    Err(e) => {
                        tracing::warn!(error = %e, "nodeclaim watch failed; retrying with backoff");
                        continue;
                    }
                },
                Watched::Node(e) => match *e {
                    Ok(e) => dispatcher.on_node_event(&e),
                    Err(e) => {
                        tracing::warn!(error = %e, "node watch failed; retrying with backoff");
                        continue;
                    }
                },
            };
            for r in t.lifecycle {
                let _ = lc_tx.unbounded_send(r);
            }
            for r in t.termination {
                let _ = tm_tx.unbounded_send(r);
            }
            if node_termination {
                for r in t.nodes {
                    let _ = node_tx.unbounded_send(r);
                }
            }
        }
    });

    // kube's `Store::wait_until_ready` wakes only the last of several concurrent waiters, and
    // every `Controller` waits on its store before running; lifecycle and termination share the
    // NodeClaim store. So one task waits for both stores first (one waiter each) and only then
    // builds the controllers, whose own waits then return at once.
    let (ready_tx, ready_rx) = futures::channel::oneshot::channel::<()>();
    let ready = ready_rx.map(|r| r.is_ok()).boxed().shared();
    let starter_ctx = ctx.clone();
    tasks.spawn(async move {
        let ctx = starter_ctx;
        let stores_ready = async {
            ctx.nodeclaims.wait_until_ready().await.is_ok()
                && ctx.nodes.wait_until_ready().await.is_ok()
        };
        // Biased (no random branch choice in a seeded run): stopping wins.
        let synced = tokio::select! {
            biased;
            _ = stop.clone() => false,
            ok = stores_ready => ok,
        };
        if !synced {
            return;
        }
        let _ = ready_tx.send(());
        run_controllers(
            ctx,
            lc_rx,
            tm_rx,
            node_rx,
            lc_resync_rx,
            tm_resync_rx,
            node_termination,
            stop,
        )
        .await;
    });

    Running {
        context: ctx,
        ready,
        resync: vec![lc_resync_tx, tm_resync_tx],
        stop: Some(stop_tx),
        tasks,
    }
}

/// Longest wait for running reconciles once stopping.
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Counts running reconciles, so shutdown can wait for them and no longer.
#[derive(Debug, Clone, Default)]
pub struct InFlight(Arc<AtomicUsize>);

struct InFlightGuard(Arc<AtomicUsize>);

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl InFlight {
    /// Wraps a reconcile function so each call is counted while it runs.
    pub fn wrap<K, C, F, Fut>(
        &self,
        f: F,
    ) -> impl FnMut(Arc<K>, Arc<C>) -> BoxFuture<'static, Fut::Output>
    where
        F: Fn(Arc<K>, Arc<C>) -> Fut,
        Fut: Future + Send + 'static,
    {
        let counter = self.0.clone();
        move |obj, ctx| {
            counter.fetch_add(1, Ordering::SeqCst);
            let guard = InFlightGuard(counter.clone());
            let fut = f(obj, ctx);
            async move {
                let _guard = guard;
                fut.await
            }
            .boxed()
        }
    }

    /// Number of running reconciles.
    pub fn running(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Resolves once `stop` has fired and then no reconcile is running, or `grace` after `stop`.
pub fn forceful_after(
    stop: Shutdown,
    in_flight: InFlight,
    grace: std::time::Duration,
) -> BoxFuture<'static, ()> {
    async move {
        stop.await;
        tracing::debug!(
            running = in_flight.running(),
            "stopping: waiting for running reconciles"
        );
        let idle = async {
            while in_flight.running() > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        };
        let _ = tokio::time::timeout(grace, idle).await;
    }
    .boxed()
}

#[allow(clippy::too_many_arguments)]
async fn run_controllers(
    ctx: Arc<Context>,
    lc_rx: mpsc::UnboundedReceiver<ObjectRef<NodeClaim>>,
    tm_rx: mpsc::UnboundedReceiver<ObjectRef<NodeClaim>>,
    node_rx: mpsc::UnboundedReceiver<ObjectRef<Node>>,
    lc_resync_rx: mpsc::UnboundedReceiver<()>,
    tm_resync_rx: mpsc::UnboundedReceiver<()>,
    node_termination: bool,
    stop: Shutdown,
) {
    // `graceful_shutdown_on` stops new reconciles but the applier still waits for requeues already
    // scheduled (Liveness asks for up to 15 minutes), so each controller's stream is also cut as
    // soon as no reconcile is running once we are stopping.
    let in_flight = InFlight::default();
    let cut = || forceful_after(stop.clone(), in_flight.clone(), SHUTDOWN_GRACE);
    let lifecycle = Controller::for_stream(stream::pending(), ctx.nodeclaims.clone())
        .reconcile_on(lc_rx)
        .reconcile_on(every_cached(lc_resync_rx, ctx.nodeclaims.clone()))
        .with_config(ControllerConfig::default().concurrency(ctx.config.lifecycle_concurrency))
        .graceful_shutdown_on(stop.clone())
        .run(
            in_flight.wrap(lifecycle::reconcile),
            lifecycle::error_policy,
            ctx.clone(),
        )
        .take_until(cut());
    let mut drains = vec![drain("nodeclaim.lifecycle", lifecycle).boxed()];

    let termination = Controller::for_stream(stream::pending(), ctx.nodeclaims.clone())
        .reconcile_on(tm_rx)
        .reconcile_on(every_cached(tm_resync_rx, ctx.nodeclaims.clone()))
        .with_config(ControllerConfig::default().concurrency(ctx.config.termination_concurrency))
        .graceful_shutdown_on(stop.clone())
        .run(
            in_flight.wrap(termination::reconcile),
            termination::error_policy,
            ctx.clone(),
        )
        .take_until(cut());
    drains.push(drain("nodeclaim.termination", termination).boxed());

    if node_termination {
        let nodes = Controller::for_stream(stream::pending(), ctx.nodes.clone())
            .reconcile_on(node_rx)
            .with_config(
                ControllerConfig::default().concurrency(ctx.config.termination_concurrency),
            )
            .graceful_shutdown_on(stop.clone())
            .run(
                in_flight.wrap(node_termination::reconcile),
                node_termination::error_policy,
                ctx.clone(),
            )
            .take_until(cut());
        drains.push(drain("node.termination", nodes).boxed());
    }

    // Instance and NodeClaim garbage collection: singletons on timers, off the watches.
    drains.push(garbage_collection::run(ctx.clone(), stop.clone()).boxed());

    futures::future::join_all(drains).await;
}

/// On each `trigger`, every cached object, by namespace and name: a resync in a fixed order
/// (kube's `reconcile_all_on` goes in the store's hash order, seeded at random per process).
pub fn every_cached<K>(
    trigger: impl futures::Stream<Item = ()> + Send + 'static,
    store: Store<K>,
) -> impl futures::Stream<Item = ObjectRef<K>> + Send + 'static
where
    K: kube::Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    trigger.flat_map(move |()| {
        let mut refs: Vec<ObjectRef<K>> = store
            .state()
            .iter()
            .map(|obj| ObjectRef::from_obj(obj.as_ref()))
            .collect();
        refs.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        stream::iter(refs)
    })
}

enum Watched {
    NodeClaim(Box<Result<watcher::Event<NodeClaim>, watcher::Error>>),
    Node(Box<Result<watcher::Event<Node>, watcher::Error>>),
}

async fn drain<K, E1, E2>(
    name: &'static str,
    results: impl futures::Stream<
        Item = Result<
            (ObjectRef<K>, kube::runtime::controller::Action),
            kube::runtime::controller::Error<E1, E2>,
        >,
    >,
) where
    K: kube::Resource + 'static,
    E1: std::error::Error + 'static,
    E2: std::error::Error + 'static,
{
    results
        .for_each(|r| {
            if let Err(e) = r {
                tracing::debug!(controller = name, error = %e, "reconcile failed");
            }
            futures::future::ready(())
        })
        .await;
}

/// Fills a cache as a watch's initial list does (tests that drive reconciles by hand).
#[cfg(test)]
pub(crate) fn fill_cache<K>(writer: &mut Writer<K>, objects: Vec<K>)
where
    K: kube::Resource<DynamicType = ()> + Clone + 'static,
{
    writer.apply_watcher_event(&watcher::Event::Init);
    for object in objects {
        writer.apply_watcher_event(&watcher::Event::InitApply(object));
    }
    writer.apply_watcher_event(&watcher::Event::InitDone);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SystemClock;
    use crate::ids::SeededIds;
    use crate::karpenter::cloudprovider::fake::FakeCloudProvider;
    use crate::karpenter::context::Config;
    use crate::karpenter::metrics::Metrics;
    use crate::karpenter::types::NodeClaimSpec;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::PostParams;
    use kube::CustomResourceExt;
    use std::time::Duration;

    async fn started() -> (fake_apiserver::FakeApiServer, Arc<Context>, Running) {
        let server = fake_apiserver::FakeApiServer::new();
        let client = server.client();
        Api::<CustomResourceDefinition>::all(client.clone())
            .create(&PostParams::default(), &NodeClaim::crd())
            .await
            .unwrap();
        let ids = Arc::new(SeededIds::new(1));
        let (stores, writers) = new_stores();
        let ctx = Arc::new(Context::new(
            client,
            stores,
            Arc::new(FakeCloudProvider::new(ids.clone())),
            Arc::new(SystemClock),
            ids,
            Metrics::new(),
            Config::default(),
        ));
        let running = spawn(
            ctx.clone(),
            writers,
            WiringOptions::default(),
            shutdown::never(),
        );
        assert!(running.ready().await);
        (server, ctx, running)
    }

    /// Holds every update, patch and delete, forever; counts them.
    #[derive(Default)]
    struct HoldWrites(AtomicUsize);

    impl fake_apiserver::hooks::RequestGate for HoldWrites {
        fn admit(
            &self,
            request: &fake_apiserver::hooks::RequestInfo,
        ) -> fake_apiserver::hooks::BoxFuture {
            if !matches!(request.verb.as_str(), "update" | "patch" | "delete") {
                return Box::pin(futures::future::ready(()));
            }
            self.0.fetch_add(1, Ordering::SeqCst);
            Box::pin(futures::future::pending())
        }
    }

    /// Dropping `Running` (a crash) aborts the watch and controller tasks at once, even with a
    /// reconcile in flight (a graceful stop would wait up to [`SHUTDOWN_GRACE`] for it); they
    /// then let go of the context. The paused clock only moves once every task is idle.
    #[tokio::test(start_paused = true)]
    async fn dropping_running_aborts_its_tasks() {
        let (server, ctx, running) = started().await;
        let held = Arc::new(HoldWrites::default());
        server.set_gate(Some(held.clone()));
        Api::<NodeClaim>::all(ctx.client.clone())
            .create(
                &PostParams::default(),
                &NodeClaim::new("a", NodeClaimSpec::default()),
            )
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(
            held.0.load(Ordering::SeqCst) > 0,
            "a reconcile is stuck on a write"
        );
        assert!(Arc::strong_count(&ctx) > 2, "the tasks hold the context");
        drop(running);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(Arc::strong_count(&ctx), 1, "every task is gone");
    }

    /// `shutdown` still stops the tasks and waits for them.
    #[tokio::test(start_paused = true)]
    async fn shutdown_waits_for_every_task() {
        let (_server, ctx, running) = started().await;
        tokio::time::timeout(Duration::from_secs(60), running.shutdown())
            .await
            .expect("shutdown ends");
        assert_eq!(Arc::strong_count(&ctx), 1, "every task is gone");
    }

    /// A resync emits every cached NodeClaim by name, whatever the store's hash order.
    #[tokio::test]
    async fn resync_goes_by_name() {
        let (store, mut writer) = reflector::store::<NodeClaim>();
        writer.apply_watcher_event(&watcher::Event::Init);
        for name in ["c", "a", "e", "b", "d"] {
            writer.apply_watcher_event(&watcher::Event::InitApply(NodeClaim::new(
                name,
                NodeClaimSpec::default(),
            )));
        }
        writer.apply_watcher_event(&watcher::Event::InitDone);
        let refs: Vec<String> = every_cached(stream::iter([(), ()]), store)
            .map(|r| r.name)
            .collect()
            .await;
        assert_eq!(refs, ["a", "b", "c", "d", "e", "a", "b", "c", "d", "e"]);
    }

    /// A Node deleted while the watch was down (a relist follows a dropped or expired watch)
    /// still requeues the terminating NodeClaim that waits for it.
    #[tokio::test]
    async fn a_relist_reports_nodes_deleted_while_the_watch_was_down() {
        let ids = Arc::new(SeededIds::new(1));
        let (stores, writers) = new_stores();
        let ctx = Arc::new(Context::new(
            fake_apiserver::FakeApiServer::new().client(),
            stores,
            Arc::new(FakeCloudProvider::new(ids.clone())),
            Arc::new(SystemClock),
            ids,
            Metrics::new(),
            Config::default(),
        ));
        let mut dispatcher = Dispatcher::new(ctx, writers);
        let mut nodeclaim = NodeClaim::new("a", NodeClaimSpec::default());
        nodeclaim.status = Some(crate::karpenter::types::NodeClaimStatus {
            provider_id: "fake:///i-1".into(),
            ..Default::default()
        });
        let node = |name: &str, provider_id: &str| Node {
            metadata: kube::api::ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            spec: Some(k8s_openapi::api::core::v1::NodeSpec {
                provider_id: Some(provider_id.into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        dispatcher.on_nodeclaim_event(&watcher::Event::Init);
        dispatcher.on_nodeclaim_event(&watcher::Event::InitApply(nodeclaim));
        dispatcher.on_nodeclaim_event(&watcher::Event::InitDone);
        let list = |dispatcher: &mut Dispatcher, nodes: Vec<Node>| {
            dispatcher.on_node_event(&watcher::Event::Init);
            for n in nodes {
                dispatcher.on_node_event(&watcher::Event::InitApply(n));
            }
            dispatcher.on_node_event(&watcher::Event::InitDone)
        };
        let first = list(
            &mut dispatcher,
            vec![node("n-1", "fake:///i-1"), node("n-2", "fake:///i-2")],
        );
        assert!(first.termination.is_empty(), "nothing was deleted");
        let relisted = list(&mut dispatcher, vec![node("n-2", "fake:///i-2")]);
        let names: Vec<&str> = relisted
            .termination
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(names, ["a"], "n-1's NodeClaim hears of its deletion");
    }
}
