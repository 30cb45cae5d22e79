//! Karpenter's NodeClaim launch as a harness model: the launch cache race of spec §8.2.
//!
//! The lifecycle reconcile (`controllers::karpenter::lifecycle::reconcile`) runs against the
//! in-process fake API server with its own watch dispatcher
//! (`controllers::karpenter::wiring::Dispatcher`) fed by hand from the server's event log, so
//! the harness decides when the controller's caches see each write. The scheduler may also make
//! the next status patch of the NodeClaim fail (a fault rule on the server), the case the launch
//! cache exists for: the instance was created, but `Launched` never reached the API server.
//! The invariant, after every step: the cloud never holds more instances than there are
//! NodeClaims.
//!
//! [`Guards::launch_cache`] off gives the cache a zero TTL (every lookup misses), which defeats
//! the guard without touching controller code.
//!
//! [`KarpenterModel::allowing_crash`] also offers one crash of the controller process: its
//! caches, work queue and launch cache are lost and it starts again from fresh lists (the cloud
//! and the API server keep their state). A crash after the launch whose status patch failed is
//! the split-write hazard of spec §6.3, which the port keeps as upstream has it: the launch cache
//! is in memory, so the restarted controller launches a second instance.

use std::collections::BTreeMap;
use std::sync::Arc;

use controllers::clock::{Clock, ManualClock};
use controllers::ids::SeededIds;
use controllers::karpenter::cloudprovider::fake::FakeCloudProvider;
use controllers::karpenter::context::Config;
use controllers::karpenter::lifecycle;
use controllers::karpenter::metrics::Metrics;
use controllers::karpenter::wiring::{new_stores, Dispatcher, Triggers};
use controllers::karpenter::{Context, NodeClaim};
use fake_apiserver::hooks::{FaultRule, RequestMatcher};
use fake_apiserver::{ApiError, FakeApiServer};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, PostParams};
use kube::CustomResourceExt;

use crate::cache::{CacheScope, EventFeed, LagBound};
use crate::engine::{requeue_at, Model};

/// Which guards of the controller are in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guards {
    /// The launch cache keyed by UID (spec §4.1).
    pub launch_cache: bool,
}

impl Default for Guards {
    fn default() -> Self {
        Self { launch_cache: true }
    }
}

#[derive(Debug, Clone)]
enum Offer {
    DeliverNodeClaims,
    DeliverNodes,
    Reconcile(String),
    FailNextStatusPatch,
    AdvanceTo(Timestamp),
    Crash,
}

/// The Karpenter model: one NodeClaim, the lifecycle controller, the fake cloud provider.
pub struct KarpenterModel {
    server: FakeApiServer,
    clock: ManualClock,
    ids: Arc<SeededIds>,
    config: Config,
    provider: Arc<FakeCloudProvider>,
    /// The controller's context, dispatcher and informers (replaced when it crashes).
    process: Process,
    queue: BTreeMap<String, Timestamp>,
    fault_injected: bool,
    crash_allowed: bool,
    crashed: bool,
    lag: LagBound,
    offered: Vec<Offer>,
    steps: usize,
}

impl KarpenterModel {
    /// A model seeded with `seed`.
    pub async fn new(seed: u64, guards: Guards) -> Self {
        let clock = ManualClock::default();
        let server_clock = clock.clone();
        let server = FakeApiServer::builder()
            .seed(seed)
            .clock(move || server_clock.now())
            .build();
        let client = server.client();
        let crds: Api<
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
        > = Api::all(client.clone());
        crds.create(&PostParams::default(), &NodeClaim::crd())
            .await
            .expect("the fake API server accepts the NodeClaim CRD");
        let mut nodeclaim = controllers::karpenter::demo::demo_nodeclaim("default");
        nodeclaim.metadata.generate_name = None;
        nodeclaim.metadata.name = Some("default-1".into());
        Api::<NodeClaim>::all(client.clone())
            .create(&PostParams::default(), &nodeclaim)
            .await
            .expect("nodeclaim");

        let ids = Arc::new(SeededIds::new(seed));
        let provider = Arc::new(FakeCloudProvider::new(ids.clone()));
        let mut config = Config::default();
        if !guards.launch_cache {
            config.launch_cache_ttl = SignedDuration::ZERO;
        }
        let process = Process::start(&server, &client, &provider, &clock, &ids, &config);
        let mut model = Self {
            server,
            clock,
            ids,
            config,
            provider,
            process,
            queue: BTreeMap::new(),
            fault_injected: false,
            crash_allowed: false,
            crashed: false,
            lag: LagBound::new(MAX_INFORMER_LAG),
            offered: Vec::new(),
            steps: 0,
        };
        model.list_and_enqueue();
        model
    }

    /// The same model, also offering one crash and restart of the controller.
    pub fn allowing_crash(mut self) -> Self {
        self.crash_allowed = true;
        self
    }

    /// The informers' initial lists, each object queued.
    fn list_and_enqueue(&mut self) {
        for event in self.process.nodeclaims.initial() {
            let triggers = self.process.dispatcher.on_nodeclaim_event(&event);
            self.enqueue(triggers);
        }
        for event in self.process.nodes.initial() {
            let triggers = self.process.dispatcher.on_node_event(&event);
            self.enqueue(triggers);
        }
    }

    /// The controller process dies and starts again: new caches (listed afresh), an empty work
    /// queue and launch cache; the API server and the cloud keep their state.
    fn crash_and_restart(&mut self) {
        let client = self.server.client();
        let process = Process::start(
            &self.server,
            &client,
            &self.provider,
            &self.clock,
            &self.ids,
            &self.config,
        );
        self.process = process;
        self.queue.clear();
        self.lag = LagBound::new(MAX_INFORMER_LAG);
        self.list_and_enqueue();
    }

    fn enqueue(&mut self, triggers: Triggers) {
        let now = self.clock.now();
        for key in triggers.lifecycle {
            let due = self.queue.entry(key.name.clone()).or_insert(now);
            if *due > now {
                *due = now;
            }
        }
    }
}

/// What lives in the controller process (and is lost when it crashes).
struct Process {
    ctx: Arc<Context>,
    dispatcher: Dispatcher,
    nodeclaims: EventFeed<NodeClaim>,
    nodes: EventFeed<Node>,
}

impl Process {
    /// A controller process: its context (stores, launch cache, read-own-writes gate) and
    /// informers subscribed to the server from now on.
    fn start(
        server: &FakeApiServer,
        client: &kube::Client,
        provider: &Arc<FakeCloudProvider>,
        clock: &ManualClock,
        ids: &Arc<SeededIds>,
        config: &Config,
    ) -> Self {
        let (stores, writers) = new_stores();
        let ctx = Arc::new(Context::new(
            client.clone(),
            stores,
            provider.clone(),
            Arc::new(clock.clone()),
            ids.clone(),
            Metrics::new(),
            config.clone(),
        ));
        Self {
            dispatcher: Dispatcher::new(ctx.clone(), writers),
            ctx,
            nodeclaims: EventFeed::new(
                server,
                CacheScope::all("karpenter.sh/v1beta1", "nodeclaims"),
            ),
            nodes: EventFeed::new(server, CacheScope::all("v1", "nodes")),
        }
    }
}

/// How far behind the server an informer may fall, in virtual time.
const MAX_INFORMER_LAG: SignedDuration = SignedDuration::from_secs(1);

/// The most steps one run takes.
const MAX_STEPS: usize = 80;

impl Model for KarpenterModel {
    fn actions(&mut self) -> Vec<String> {
        self.offered.clear();
        if self.steps >= MAX_STEPS {
            return Vec::new();
        }
        let now = self.clock.now();
        let pending = (
            self.process.nodeclaims.pending(),
            self.process.nodes.pending(),
        );
        self.lag.observe("nodeclaims", pending.0, now);
        self.lag.observe("nodes", pending.1, now);
        if pending.0 > 0 {
            self.offered.push(Offer::DeliverNodeClaims);
        }
        if pending.1 > 0 {
            self.offered.push(Offer::DeliverNodes);
        }
        let mut next_due: Option<Timestamp> = None;
        for (name, due) in &self.queue {
            if *due <= now {
                self.offered.push(Offer::Reconcile(name.clone()));
            } else {
                next_due = Some(next_due.map_or(*due, |d| d.min(*due)));
            }
        }
        if !self.fault_injected {
            self.offered.push(Offer::FailNextStatusPatch);
        }
        if self.crash_allowed && !self.crashed {
            self.offered.push(Offer::Crash);
        }
        if let Some(due) = next_due.map(|d| self.lag.cap(d)).filter(|d| *d > now) {
            self.offered.push(Offer::AdvanceTo(due));
        }
        self.offered
            .iter()
            .map(|o| match o {
                Offer::DeliverNodeClaims => "deliver nodeclaims".to_string(),
                Offer::DeliverNodes => "deliver nodes".to_string(),
                Offer::Reconcile(name) => format!("reconcile lifecycle {name}"),
                Offer::FailNextStatusPatch => "fail the next nodeclaim status patch".to_string(),
                Offer::AdvanceTo(t) => format!("advance clock to {t}"),
                Offer::Crash => "crash and restart the controller".to_string(),
            })
            .collect()
    }

    async fn perform(&mut self, index: usize) -> String {
        self.steps += 1;
        let Some(offer) = self.offered.get(index).cloned() else {
            return "nothing".into();
        };
        match offer {
            Offer::DeliverNodeClaims => match self.process.nodeclaims.next_event() {
                Some(event) => {
                    let triggers = self.process.dispatcher.on_nodeclaim_event(&event);
                    let line = format!("{} triggered", triggers.lifecycle.len());
                    self.enqueue(triggers);
                    line
                }
                None => "nothing".into(),
            },
            Offer::DeliverNodes => match self.process.nodes.next_event() {
                Some(event) => {
                    let triggers = self.process.dispatcher.on_node_event(&event);
                    let line = format!("{} triggered", triggers.lifecycle.len());
                    self.enqueue(triggers);
                    line
                }
                None => "nothing".into(),
            },
            Offer::Reconcile(name) => self.reconcile(name).await,
            Offer::FailNextStatusPatch => {
                self.fault_injected = true;
                self.server.add_fault(FaultRule {
                    matcher: RequestMatcher {
                        verb: Some("patch".into()),
                        resource: Some("nodeclaims".into()),
                        subresource: Some("status".into()),
                        ..Default::default()
                    },
                    error: ApiError::internal("injected: etcd request timed out"),
                    times: Some(1),
                });
                "armed".into()
            }
            Offer::AdvanceTo(t) => {
                self.clock.set(t);
                format!("now {t}")
            }
            Offer::Crash => {
                self.crashed = true;
                self.crash_and_restart();
                format!("restarted, {} queued", self.queue.len())
            }
        }
    }

    async fn check(&mut self) -> Result<(), String> {
        let instances = self.provider.instances().len();
        let (_, nodeclaims) = self
            .server
            .list_objects("karpenter.sh/v1beta1", "nodeclaims", None);
        if instances > nodeclaims.len() {
            return Err(format!(
                "{instances} cloud instances for {} NodeClaim(s): an instance leaked",
                nodeclaims.len()
            ));
        }
        Ok(())
    }
}

impl KarpenterModel {
    async fn reconcile(&mut self, name: String) -> String {
        self.queue.remove(&name);
        let key = self
            .process
            .ctx
            .nodeclaims
            .get(&kube::runtime::reflector::ObjectRef::new(&name));
        let Some(nodeclaim) = key else {
            return "not in the cache".into();
        };
        let now = self.clock.now();
        let (action, line) =
            match lifecycle::reconcile(nodeclaim.clone(), self.process.ctx.clone()).await {
                Ok(action) => (action, "ok".to_string()),
                Err(e) => {
                    let action = lifecycle::error_policy(nodeclaim, &e, self.process.ctx.clone());
                    (action, format!("error: {e}"))
                }
            };
        if let Some((due, after)) = requeue_at(now, &action) {
            self.queue.insert(name, due);
            return format!("{line}, requeue after {after:?}");
        }
        line
    }
}
