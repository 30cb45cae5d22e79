//! Shared helpers for the `karpenter_*` integration tests: the in-process fake API server with the
//! NodeClaim CRD, a manual clock, seeded ids, a cloud provider, and a controller [`Context`]
//! whose reflector stores the test fills by hand ([`Env::sync`]: a fresh list of both kinds, as
//! an up-to-date informer would hold), so reconciles can be called directly as upstream's envtest
//! suite does (`ExpectReconcileSucceeded`).
//!
//! Each test file includes this with `mod karpenter_support;` (a directory module, so Cargo does
//! not build it as a test of its own).

#![allow(dead_code)] // Each test file uses a different subset.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use controllers::clock::{Clock, ManualClock};
use controllers::ids::SeededIds;
use controllers::karpenter::cloudprovider::fake::FakeCloudProvider;
use controllers::karpenter::cloudprovider::SharedCloudProvider;
use controllers::karpenter::context::{Config, Context};
use controllers::karpenter::lifecycle;
use controllers::karpenter::metrics::Metrics;
use controllers::karpenter::taints::taint;
use controllers::karpenter::termination;
use controllers::karpenter::types::*;
use controllers::karpenter::wiring::{new_stores, Writers};
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::{Node, NodeCondition, NodeSpec, NodeStatus, Taint};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::api::{ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::watcher::Event;
use kube::{Api, Client, CustomResourceExt, ResourceExt};
use serde_json::json;

/// Every test's overall deadline.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(20);

/// A fake API server, a manual clock, a provider and a context over hand-fed stores.
pub struct Env {
    /// The server.
    pub server: FakeApiServer,
    /// In-process client.
    pub client: Client,
    /// The one clock (controllers and server timestamps).
    pub clock: ManualClock,
    /// The controllers' context.
    pub ctx: Arc<Context>,
    /// The fake provider (when the env was built with it).
    pub fake: Option<FakeCloudProvider>,
    writers: Writers,
}

/// Installs the NodeClaim CRD.
pub async fn install_crd(client: &Client) {
    Api::<CustomResourceDefinition>::all(client.clone())
        .create(&PostParams::default(), &NodeClaim::crd())
        .await
        .unwrap();
}

/// A fake API server whose timestamps come from `clock`.
pub fn server(clock: &ManualClock) -> FakeApiServer {
    let c = clock.clone();
    FakeApiServer::builder()
        .seed(7)
        .clock(move || c.now())
        .build()
}

impl Env {
    /// An env with the scriptable fake provider.
    pub async fn fake() -> Self {
        Self::fake_with(Config::default()).await
    }

    /// An env with the fake provider and `config`.
    pub async fn fake_with(config: Config) -> Self {
        let ids = Arc::new(SeededIds::new(11));
        let fake = FakeCloudProvider::new(ids);
        Self::with_provider(Arc::new(fake.clone()), Some(fake), config).await
    }

    /// An env with any provider.
    pub async fn with_provider(
        provider: SharedCloudProvider,
        fake: Option<FakeCloudProvider>,
        config: Config,
    ) -> Self {
        let clock = ManualClock::default();
        let server = server(&clock);
        let client = server.client();
        install_crd(&client).await;
        let (stores, writers) = new_stores();
        let ctx = Arc::new(Context::new(
            client.clone(),
            stores,
            provider,
            Arc::new(clock.clone()),
            Arc::new(SeededIds::new(12)),
            Metrics::new(),
            config,
        ));
        Self {
            server,
            client,
            clock,
            ctx,
            fake,
            writers,
        }
    }

    /// The fake provider.
    pub fn provider(&self) -> &FakeCloudProvider {
        self.fake
            .as_ref()
            .expect("env built with the fake provider")
    }

    /// NodeClaim API.
    pub fn nodeclaims(&self) -> Api<NodeClaim> {
        Api::all(self.client.clone())
    }

    /// Node API.
    pub fn nodes(&self) -> Api<Node> {
        Api::all(self.client.clone())
    }

    /// Relists both kinds into the stores (an informer that has caught up).
    pub async fn sync(&mut self) {
        let ncs = self
            .nodeclaims()
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        self.writers.nodeclaims.apply_watcher_event(&Event::Init);
        for nc in ncs {
            self.writers
                .nodeclaims
                .apply_watcher_event(&Event::InitApply(nc));
        }
        self.writers
            .nodeclaims
            .apply_watcher_event(&Event::InitDone);
        self.sync_nodes().await;
    }

    /// Relists the Nodes into their store only (the Node informer has caught up, the NodeClaim
    /// one has not).
    pub async fn sync_nodes(&mut self) {
        let nodes = self
            .nodes()
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        self.writers.nodes.apply_watcher_event(&Event::Init);
        for n in nodes {
            self.writers.nodes.apply_watcher_event(&Event::InitApply(n));
        }
        self.writers.nodes.apply_watcher_event(&Event::InitDone);
    }

    /// Puts `nc` into the NodeClaim store as is (a cache that shows something else than the server).
    pub fn cache_nodeclaim(&mut self, nc: NodeClaim) {
        self.writers
            .nodeclaims
            .apply_watcher_event(&Event::Apply(nc));
    }

    /// The cached NodeClaim `name`.
    pub fn cached(&self, name: &str) -> Arc<NodeClaim> {
        self.ctx
            .nodeclaims
            .get(&kube::runtime::reflector::ObjectRef::new(name))
            .unwrap_or_else(|| panic!("nodeclaim {name} not cached"))
    }

    /// Sync, then one lifecycle reconcile of `name` from the cache.
    pub async fn reconcile(&mut self, name: &str) -> Result<Action, controllers::karpenter::Error> {
        self.sync().await;
        lifecycle::reconcile(self.cached(name), self.ctx.clone()).await
    }

    /// Sync, then one termination reconcile of `name` from the cache.
    pub async fn terminate(&mut self, name: &str) -> Result<Action, controllers::karpenter::Error> {
        self.sync().await;
        termination::reconcile(self.cached(name), self.ctx.clone()).await
    }

    /// Creates a NodeClaim.
    pub async fn create(&self, nc: &NodeClaim) -> NodeClaim {
        self.nodeclaims()
            .create(&PostParams::default(), nc)
            .await
            .unwrap()
    }

    /// The NodeClaim from the server.
    pub async fn get(&self, name: &str) -> Option<NodeClaim> {
        self.nodeclaims().get_opt(name).await.unwrap()
    }

    /// Creates a Node.
    pub async fn create_node(&self, node: &Node) -> Node {
        self.nodes()
            .create(&PostParams::default(), node)
            .await
            .unwrap()
    }

    /// The Node from the server.
    pub async fn node(&self, name: &str) -> Node {
        self.nodes().get(name).await.unwrap()
    }

    /// Merge-patches a Node (the test plays kubelet / CCM / daemonsets).
    pub async fn patch_node(&self, name: &str, body: serde_json::Value) {
        self.nodes()
            .patch(name, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .unwrap();
    }

    /// Merge-patches a Node's status.
    pub async fn patch_node_status(&self, name: &str, body: serde_json::Value) {
        self.nodes()
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .unwrap();
    }

    /// `ExpectFinalizersRemoved`: strip the NodeClaim's finalizers (plays the termination controller).
    pub async fn expect_finalizers_removed(&self, name: &str) {
        if self.get(name).await.is_some() {
            self.nodeclaims()
                .patch(
                    name,
                    &PatchParams::default(),
                    &Patch::Merge(&json!({"metadata": {"finalizers": null}})),
                )
                .await
                .unwrap();
        }
    }

    /// `karpenter_nodeclaims_launched{nodepool="default"}`.
    pub fn launched(&self) -> u64 {
        Metrics::total(&self.ctx.metrics.launched, &["default"])
    }
}

/// A NodeClaim as the provisioner makes it (nodepool `default`, no status).
pub fn nodeclaim(name: &str) -> NodeClaim {
    NodeClaim {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(BTreeMap::from([(
                NODEPOOL_LABEL.to_string(),
                "default".to_string(),
            )])),
            ..Default::default()
        },
        spec: NodeClaimSpec {
            requirements: vec![NodeSelectorRequirementWithMinValues {
                key: CAPACITY_TYPE_LABEL.into(),
                operator: "In".into(),
                values: vec!["on-demand".into()],
                min_values: None,
            }],
            node_class_ref: Some(NodeClassReference {
                kind: "FakeNodeClass".into(),
                name: "default".into(),
                api_version: String::new(),
            }),
            ..Default::default()
        },
        status: None,
    }
}

/// A Node with `provider_id`, optionally Ready, with `allocatable`.
pub fn node(name: &str, provider_id: &str, ready: bool, allocatable: &[(&str, &str)]) -> Node {
    Node {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: Some(NodeSpec {
            provider_id: Some(provider_id.into()),
            ..Default::default()
        }),
        status: Some(NodeStatus {
            conditions: ready.then(|| {
                vec![NodeCondition {
                    type_: "Ready".into(),
                    status: "True".into(),
                    ..Default::default()
                }]
            }),
            allocatable: Some(
                allocatable
                    .iter()
                    .map(|(k, v)| (k.to_string(), Quantity(v.to_string())))
                    .collect(),
            ),
            ..Default::default()
        }),
    }
}

/// A taint.
pub fn t(key: &str, value: Option<&str>, effect: &str) -> Taint {
    taint(key, value, effect)
}

/// The condition `type_` of `nc` as (status, reason).
pub fn cond(nc: &NodeClaim, type_: &str) -> (String, String) {
    nc.condition(type_)
        .map(|c| (c.status.clone(), c.reason.clone()))
        .unwrap_or_else(|| ("<absent>".into(), String::new()))
}

/// Captured log output of the current thread's `tracing` events (for single-threaded tests).
#[derive(Clone, Default)]
pub struct LogCapture(Arc<Mutex<Vec<u8>>>);

impl LogCapture {
    /// Installs a subscriber writing into this capture for as long as the guard lives.
    pub fn install(&self) -> tracing::subscriber::DefaultGuard {
        let sink = self.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || sink.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::DEBUG)
            .finish();
        tracing::subscriber::set_default(subscriber)
    }

    /// How many captured lines contain `needle`.
    pub fn count(&self, needle: &str) -> usize {
        let bytes = self.0.lock().unwrap().clone();
        String::from_utf8_lossy(&bytes)
            .lines()
            .filter(|l| l.contains(needle))
            .count()
    }

    /// Everything captured.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl Write for LogCapture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Name of a NodeClaim.
pub fn name(nc: &NodeClaim) -> String {
    nc.name_any()
}

/// The real controllers (`kube::runtime::Controller`s through the production wiring) on the
/// in-process client, with a manual clock, optionally with the kubelet stand-in.
pub struct Running {
    /// The server.
    pub server: FakeApiServer,
    /// In-process client.
    pub client: Client,
    /// The manual clock.
    pub clock: ManualClock,
    /// The running controllers (context, resync, shutdown).
    pub controllers: controllers::karpenter::wiring::Running,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    kubelet: Option<tokio::task::JoinHandle<()>>,
}

/// Which provider an end-to-end run uses.
pub enum ProviderChoice {
    /// The kwok-style provider, optionally capacity-limited.
    Kwok(Option<usize>),
    /// The fake provider (creates no Nodes).
    Fake(FakeCloudProvider),
}

impl Running {
    /// Starts everything.
    pub async fn start(
        provider: ProviderChoice,
        kubelet: bool,
    ) -> (
        Self,
        Option<controllers::karpenter::cloudprovider::kwok::KwokCloudProvider>,
    ) {
        use controllers::karpenter::cloudprovider::kwok::KwokCloudProvider;
        use controllers::karpenter::kubelet::{self, KubeletContext};
        let clock = ManualClock::default();
        let server = server(&clock);
        let client = server.client();
        install_crd(&client).await;
        let ids = Arc::new(SeededIds::new(21));
        let (shared, kwok): (SharedCloudProvider, _) = match provider {
            ProviderChoice::Kwok(max) => {
                // One clock for all: instance launch times age on the clock the controllers use.
                let k = KwokCloudProvider::new(client.clone(), ids.clone())
                    .with_clock(Arc::new(clock.clone()))
                    .with_max_instances(max);
                (Arc::new(k.clone()), Some(k))
            }
            ProviderChoice::Fake(f) => (Arc::new(f), None),
        };
        let (stores, writers) = new_stores();
        let ctx = Arc::new(Context::new(
            client.clone(),
            stores,
            shared,
            Arc::new(clock.clone()),
            ids,
            Metrics::new(),
            Config::default(),
        ));
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let stop = controllers::operator::shutdown::on(async move {
            let _ = stop_rx.await;
        });
        let controllers =
            controllers::karpenter::wiring::spawn(ctx, writers, Default::default(), stop.clone());
        let kubelet = kubelet.then(|| {
            let kctx = Arc::new(KubeletContext::new(
                client.clone(),
                Arc::new(clock.clone()),
                Duration::from_millis(100),
            ));
            tokio::spawn(kubelet::run(kctx, Default::default(), stop))
        });
        (
            Self {
                server,
                client,
                clock,
                controllers,
                stop: Some(stop_tx),
                kubelet,
            },
            kwok,
        )
    }

    /// NodeClaim API.
    pub fn nodeclaims(&self) -> Api<NodeClaim> {
        Api::all(self.client.clone())
    }

    /// Node API.
    pub fn nodes(&self) -> Api<Node> {
        Api::all(self.client.clone())
    }

    /// Stops the controllers and the stand-in and waits for them.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.controllers.shutdown().await;
        if let Some(k) = self.kubelet.take() {
            let _ = k.await;
        }
    }
}

/// Polls `check` every 20ms until it holds; panics with `what` after `timeout`.
pub async fn eventually<F, Fut>(timeout: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if check().await {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A NodeClaim the kwok provider can launch (instance-type requirement, a startup taint, a CPU request).
pub fn kwok_nodeclaim(name: &str) -> NodeClaim {
    let mut nc = controllers::karpenter::demo::demo_nodeclaim("default");
    nc.metadata.generate_name = None;
    nc.metadata.name = Some(name.into());
    nc
}
