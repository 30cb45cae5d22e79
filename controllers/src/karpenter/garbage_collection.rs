//! Garbage collection of cloud instances and NodeClaims that lost each other: what holds the
//! split-write duplicate of spec §6.3 (a crash between the launch and the recorded providerID
//! leaves an instance no NodeClaim knows) and its mirror image (a NodeClaim whose instance the
//! cloud no longer has).
//!
//! - [`instance`]: the AWS provider's `instance.garbagecollection` (aws/karpenter-provider-aws
//!   `pkg/controllers/nodeclaim/garbagecollection`): list the cloud's instances, then the
//!   NodeClaims and Nodes; delete every instance older than [`instance::GRACE_PERIOD`] (30s)
//!   whose providerID no NodeClaim carries, and its Node. Every 10s for the first 20 successful
//!   passes, every 2m after.
//! - [`nodeclaim`]: core's `nodeclaim.garbagecollection` (kubernetes-sigs/karpenter
//!   `pkg/controllers/nodeclaim/garbagecollection`): delete every Registered NodeClaim whose
//!   providerID the cloud's list lacks, unless its Node is Ready. Every 2m.
//!
//! Both are singletons ([`run`]): one pass at start, then again after the interval the pass
//! returns, on tokio timers (so the race harness's virtual time drives them); a failed pass is
//! retried with controller-runtime's default per-item backoff (5ms doubling, at most 1000s).
//! As controller-runtime's cached client does upstream, NodeClaims and Nodes are read from the
//! reflector stores of the [`Context`]; [`run`] is started once they are synced.
//!
//! Differences from Go: passes handle their items one after the other (upstream runs up to 100,
//! resp. 20, in parallel) in providerID, resp. name, order; instance GC ages instances on the
//! injected clock, and an instance whose launch time the provider does not report (the fake
//! provider without a clock) is never collected (Go's zero `CreationTimestamp` would make it
//! collectable at once); upstream's managed-by filter (NodeClaims of this provider's node
//! classes) is not ported — every NodeClaim counts.

use std::time::Duration;

use futures::FutureExt;

use crate::operator::shutdown::Shutdown;

use super::context::Context;
use super::error::Error;

pub mod instance {
    //! `instance.garbagecollection` (the AWS provider's NodeClaim garbage collection).

    use std::collections::BTreeSet;
    use std::time::Duration;

    use jiff::SignedDuration;
    use k8s_openapi::api::core::v1::Node;
    use kube::api::DeleteParams;
    use kube::{Api, ResourceExt};

    use crate::karpenter::context::Context;
    use crate::karpenter::error::{is_not_found, Error};
    use crate::karpenter::nodes::node_provider_id;
    use crate::karpenter::types::NodeClaim;

    /// The controller's name, as upstream logs it.
    pub const NAME: &str = "instance.garbagecollection";
    /// How old an instance without a NodeClaim must be before it is deleted: longer than a
    /// launch takes to record the providerID.
    pub const GRACE_PERIOD: SignedDuration = SignedDuration::from_secs(30);
    /// Interval of the first [`EARLY_PASSES`] successful passes.
    pub const EARLY_INTERVAL: Duration = Duration::from_secs(10);
    /// Successful passes run at [`EARLY_INTERVAL`].
    pub const EARLY_PASSES: u64 = 20;
    /// Interval after that.
    pub const INTERVAL: Duration = Duration::from_secs(120);

    /// The controller: it counts successful passes (more aggressive requeueing near the start).
    #[derive(Debug, Default)]
    pub struct Controller {
        successful_count: u64,
    }

    impl Controller {
        /// A controller that has not run yet.
        pub fn new() -> Self {
            Self::default()
        }

        /// One pass; returns when to run again.
        pub async fn reconcile(&mut self, ctx: &Context) -> Result<Duration, Error> {
            // List the cloud's instances BEFORE the NodeClaims and Nodes, so that if the list
            // takes long, what we know of the cluster is the newer: instances are deleted for
            // want of a NodeClaim, never the other way round.
            let cloud_nodeclaims =
                ctx.cloud_provider
                    .list()
                    .await
                    .map_err(|source| Error::CloudProvider {
                        action: "listing cloudprovider nodeclaims".into(),
                        source,
                    })?;
            // Filter out any cloudprovider NodeClaim which is already terminating.
            let cloud_nodeclaims: Vec<NodeClaim> = cloud_nodeclaims
                .into_iter()
                .filter(|nc| !nc.is_deleting())
                .collect();
            let cluster_provider_ids: BTreeSet<String> = ctx
                .nodeclaims
                .state()
                .iter()
                .map(|nc| nc.provider_id().to_string())
                .filter(|id| !id.is_empty())
                .collect();
            let mut node_list = ctx.nodes.state();
            node_list.sort_by_key(|n| n.name_any());
            let now = ctx.clock.now();
            let mut errs = vec![];
            for nc in &cloud_nodeclaims {
                if cluster_provider_ids.contains(nc.provider_id()) {
                    continue;
                }
                // Go's `time.Since(CreationTimestamp) > 30s`; no launch time, no collection.
                let Some(created) = nc.metadata.creation_timestamp.as_ref() else {
                    continue;
                };
                if now.duration_since(created.0) > GRACE_PERIOD {
                    if let Err(e) = garbage_collect(ctx, nc, &node_list).await {
                        errs.push(e);
                    }
                }
            }
            match errs.len() {
                0 => {}
                1 => return Err(errs.remove(0)),
                _ => return Err(Error::Multiple(errs)),
            }
            self.successful_count += 1;
            Ok(if self.successful_count <= EARLY_PASSES {
                EARLY_INTERVAL
            } else {
                INTERVAL
            })
        }
    }

    /// `garbageCollect`: delete the instance, then (to make scheduling go quicker) its Node.
    pub async fn garbage_collect(
        ctx: &Context,
        nodeclaim: &NodeClaim,
        node_list: &[std::sync::Arc<Node>],
    ) -> Result<(), Error> {
        let provider_id = nodeclaim.provider_id();
        if let Err(e) = ctx.cloud_provider.delete(nodeclaim).await {
            // As upstream: a NotFound ends the pass for this instance, Node included.
            if e.is_nodeclaim_not_found() {
                return Ok(());
            }
            return Err(Error::CloudProvider {
                action: "deleting cloudprovider instance".into(),
                source: e,
            });
        }
        tracing::debug!(provider_id = %provider_id, "garbage collected cloudprovider instance");
        if let Some(node) = node_list
            .iter()
            .find(|n| node_provider_id(n) == provider_id)
        {
            match Api::<Node>::all(ctx.client.clone())
                .delete(&node.name_any(), &DeleteParams::default())
                .await
            {
                Ok(_) => {
                    tracing::debug!(provider_id = %provider_id, node = %node.name_any(), "garbage collected node")
                }
                Err(e) if is_not_found(&e) => {}
                Err(e) => return Err(Error::api("deleting garbage collected node", e)),
            }
        }
        Ok(())
    }
}

pub mod nodeclaim {
    //! `nodeclaim.garbagecollection` (core's NodeClaim garbage collection).

    use std::collections::BTreeSet;
    use std::time::Duration;

    use kube::api::DeleteParams;
    use kube::{Api, ResourceExt};

    use crate::karpenter::context::Context;
    use crate::karpenter::error::{is_not_found, Error};
    use crate::karpenter::metrics::TerminatedLabels;
    use crate::karpenter::nodes::node_for_nodeclaim;
    use crate::karpenter::types::{condition_types::REGISTERED, NodeClaim, CAPACITY_TYPE_LABEL};

    /// The controller's name, as upstream logs it.
    pub const NAME: &str = "nodeclaim.garbagecollection";
    /// Interval between passes.
    pub const INTERVAL: Duration = Duration::from_secs(120);

    fn node_is_ready(node: &k8s_openapi::api::core::v1::Node) -> bool {
        node.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
    }

    /// One pass; returns when to run again.
    pub async fn reconcile(ctx: &Context) -> Result<Duration, Error> {
        let mut node_claim_list = ctx.nodeclaims.state();
        node_claim_list.sort_by_key(|nc| nc.name_any());
        let cloud_provider_node_claims =
            ctx.cloud_provider
                .list()
                .await
                .map_err(|source| Error::CloudProvider {
                    action: "listing cloudprovider nodeclaims".into(),
                    source,
                })?;
        let cloud_provider_provider_ids: BTreeSet<String> = cloud_provider_node_claims
            .iter()
            .filter(|nc| !nc.is_deleting())
            .map(|nc| nc.provider_id().to_string())
            .collect();
        // Only Registered NodeClaims: the registration TTL (Liveness) handles the others, rather
        // than relying on the cloud provider's API alone to trigger the Node's deletion.
        let node_claims: Vec<_> = node_claim_list
            .into_iter()
            .filter(|nc| {
                nc.condition_is_true(REGISTERED)
                    && !nc.is_deleting()
                    && !cloud_provider_provider_ids.contains(nc.provider_id())
            })
            .collect();
        let api: Api<NodeClaim> = Api::all(ctx.client.clone());
        let mut errs = vec![];
        for nc in node_claims {
            // A registered NodeClaim's Node is only NotFound when it was deleted from under us,
            // and Duplicate is an invalid state: neither stops the collection.
            let node = node_for_nodeclaim(&ctx.nodes, &nc).ok();
            // The cloud says the instance is gone, but a Ready Node means its kubelet still
            // runs (the cloud node lifecycle controller reasons the same way).
            if node.as_deref().is_some_and(node_is_ready) {
                continue;
            }
            match api.delete(&nc.name_any(), &DeleteParams::default()).await {
                Ok(_) => {}
                Err(e) if is_not_found(&e) => continue,
                Err(e) => {
                    errs.push(Error::api("deleting garbage collected nodeclaim", e));
                    continue;
                }
            }
            tracing::debug!(
                nodeclaim = %nc.name_any(),
                provider_id = %nc.provider_id(),
                nodepool = %nc.nodepool(),
                "garbage collecting nodeclaim with no cloudprovider representation"
            );
            ctx.metrics
                .terminated
                .get_or_create(&TerminatedLabels {
                    reason: "garbage_collected".into(),
                    nodepool: nc.nodepool().into(),
                    capacity_type: nc.label(CAPACITY_TYPE_LABEL).into(),
                })
                .inc();
        }
        match errs.len() {
            0 => Ok(INTERVAL),
            1 => Err(errs.remove(0)),
            _ => Err(Error::Multiple(errs)),
        }
    }
}

/// controller-runtime's default per-item backoff: 5ms doubling per failure, at most 1000s.
fn failure_backoff(failures: u32) -> Duration {
    let max = Duration::from_secs(1000);
    Duration::from_millis(5)
        .checked_mul(1u32.checked_shl(failures.min(31)).unwrap_or(u32::MAX))
        .map_or(max, |d| d.min(max))
}

/// Runs a singleton: `pass` at once, then again after what it returns (or a backoff after an
/// error), until `stop`.
async fn singleton<F>(name: &'static str, stop: Shutdown, mut pass: F)
where
    F: FnMut() -> futures::future::BoxFuture<'static, Result<Duration, Error>>,
{
    let mut failures = 0u32;
    loop {
        let result = tokio::select! {
            biased;
            _ = stop.clone() => return,
            r = pass() => r,
        };
        let wait = match result {
            Ok(after) => {
                failures = 0;
                after
            }
            Err(e) => {
                tracing::error!(controller = name, error = %e, "garbage collection failed");
                failures = failures.saturating_add(1);
                failure_backoff(failures - 1)
            }
        };
        tokio::select! {
            biased;
            _ = stop.clone() => return,
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

/// Runs both garbage collectors until `stop` (unless the test switch
/// [`super::Config::garbage_collection_disabled`] is set). Start it once the stores are synced.
pub async fn run(ctx: std::sync::Arc<Context>, stop: Shutdown) {
    if ctx.config.garbage_collection_disabled {
        return;
    }
    let instances = {
        let ctx = ctx.clone();
        let controller =
            std::sync::Arc::new(futures::lock::Mutex::new(instance::Controller::new()));
        singleton(instance::NAME, stop.clone(), move || {
            let ctx = ctx.clone();
            let controller = controller.clone();
            async move { controller.lock().await.reconcile(&ctx).await }.boxed()
        })
    };
    let nodeclaims = singleton(nodeclaim::NAME, stop, move || {
        let ctx = ctx.clone();
        async move { nodeclaim::reconcile(&ctx).await }.boxed()
    });
    futures::future::join(instances, nodeclaims).await;
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use jiff::SignedDuration;
    use k8s_openapi::api::core::v1::{Node, NodeCondition, NodeSpec, NodeStatus};
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::{ObjectMeta, PostParams};
    use kube::{Api, CustomResourceExt};

    use super::*;
    use crate::clock::{Clock, ManualClock};
    use crate::ids::SeededIds;
    use crate::karpenter::cloudprovider::fake::FakeCloudProvider;
    use crate::karpenter::cloudprovider::{CloudProvider, CloudProviderError};
    use crate::karpenter::conditions::mark_true;
    use crate::karpenter::context::Config;
    use crate::karpenter::metrics::Metrics;
    use crate::karpenter::types::{condition_types::REGISTERED, NodeClaim, NodeClaimSpec};
    use crate::karpenter::wiring::{fill_cache, new_stores, Writers};

    struct Env {
        server: fake_apiserver::FakeApiServer,
        clock: ManualClock,
        cloud: FakeCloudProvider,
        ctx: Arc<Context>,
        writers: Writers,
    }

    async fn env() -> Env {
        let clock = ManualClock::default();
        let server_clock = clock.clone();
        let server = fake_apiserver::FakeApiServer::builder()
            .clock(move || crate::clock::Clock::now(&server_clock))
            .build();
        Api::<CustomResourceDefinition>::all(server.client())
            .create(&PostParams::default(), &NodeClaim::crd())
            .await
            .unwrap();
        let ids = Arc::new(SeededIds::new(1));
        let cloud = FakeCloudProvider::new(ids.clone()).with_clock(Arc::new(clock.clone()));
        let (stores, writers) = new_stores();
        let ctx = Arc::new(Context::new(
            server.client(),
            stores,
            Arc::new(cloud.clone()),
            Arc::new(clock.clone()),
            ids,
            Metrics::new(),
            Config::default(),
        ));
        Env {
            server,
            clock,
            cloud,
            ctx,
            writers,
        }
    }

    fn node(name: &str, provider_id: &str, ready: bool) -> Node {
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
                conditions: Some(vec![NodeCondition {
                    type_: "Ready".into(),
                    status: if ready { "True" } else { "False" }.into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
        }
    }

    async fn create_node(env: &Env, node: &Node) {
        Api::<Node>::all(env.server.client())
            .create(&PostParams::default(), node)
            .await
            .unwrap();
    }

    fn owning(name: &str, provider_id: &str, registered: bool, env: &Env) -> NodeClaim {
        let mut nc = NodeClaim::new(name, NodeClaimSpec::default());
        nc.status.get_or_insert_with(Default::default).provider_id = provider_id.into();
        if registered {
            mark_true(&mut nc, REGISTERED, env.clock.now());
        }
        nc
    }

    async fn launch(env: &Env, name: &str) -> String {
        env.cloud
            .create(&NodeClaim::new(name, NodeClaimSpec::default()))
            .await
            .unwrap()
            .provider_id()
            .to_string()
    }

    fn live(env: &Env) -> Vec<String> {
        env.cloud
            .instances()
            .list()
            .iter()
            .map(|nc| nc.provider_id().to_string())
            .collect()
    }

    #[tokio::test]
    async fn instances_without_a_nodeclaim_are_deleted_after_the_grace_period_with_their_node() {
        let mut env = env().await;
        let owned = launch(&env, "owned").await;
        let orphan = launch(&env, "orphan").await;
        create_node(&env, &node("orphan-node", &orphan, true)).await;
        let owner = owning("owned", &owned, false, &env);
        fill_cache(&mut env.writers.nodeclaims, vec![owner]);
        fill_cache(
            &mut env.writers.nodes,
            vec![node("orphan-node", &orphan, true)],
        );
        let mut gc = instance::Controller::new();
        // Within the grace period: kept (its providerID may be on its way to the NodeClaim).
        env.clock.advance(SignedDuration::from_secs(30));
        assert_eq!(
            gc.reconcile(&env.ctx).await.unwrap(),
            instance::EARLY_INTERVAL
        );
        assert_eq!(live(&env).len(), 2);
        env.clock.advance(SignedDuration::from_secs(1));
        gc.reconcile(&env.ctx).await.unwrap();
        assert_eq!(live(&env), vec![owned]);
        assert!(
            env.server
                .get_object("v1", "nodes", None, "orphan-node")
                .is_none(),
            "the orphan's Node is deleted too"
        );
    }

    #[tokio::test]
    async fn an_instance_without_a_launch_time_is_never_collected() {
        let env = env().await;
        let cloud = FakeCloudProvider::new(Arc::new(SeededIds::new(2)));
        cloud
            .create(&NodeClaim::new("x", NodeClaimSpec::default()))
            .await
            .unwrap();
        let ctx = Context::new(
            env.server.client(),
            crate::karpenter::context::Stores {
                nodeclaims: env.ctx.nodeclaims.clone(),
                nodes: env.ctx.nodes.clone(),
            },
            Arc::new(cloud.clone()),
            Arc::new(env.clock.clone()),
            Arc::new(SeededIds::new(1)),
            Metrics::new(),
            Config::default(),
        );
        env.clock.advance(SignedDuration::from_hours(1));
        instance::Controller::new().reconcile(&ctx).await.unwrap();
        assert_eq!(cloud.instances().len(), 1);
    }

    #[tokio::test]
    async fn instance_gc_requeues_every_10s_for_20_passes_then_every_2m_and_fails_on_list_errors() {
        let mut env = env().await;
        fill_cache(&mut env.writers.nodeclaims, vec![]);
        fill_cache(&mut env.writers.nodes, vec![]);
        let mut gc = instance::Controller::new();
        for _ in 0..20 {
            assert_eq!(
                gc.reconcile(&env.ctx).await.unwrap(),
                Duration::from_secs(10)
            );
        }
        assert_eq!(
            gc.reconcile(&env.ctx).await.unwrap(),
            Duration::from_secs(120)
        );
        env.cloud
            .set_error_on_every_call(Some(CloudProviderError::Other("down".into())));
        assert!(gc.reconcile(&env.ctx).await.is_err());
    }

    #[tokio::test]
    async fn registered_nodeclaims_whose_instance_is_gone_are_deleted_unless_their_node_is_ready() {
        let mut env = env().await;
        let api = Api::<NodeClaim>::all(env.server.client());
        let kept = launch(&env, "has-instance").await;
        let claims = vec![
            owning("has-instance", &kept, true, &env),
            owning("gone", "fake:///gone", true, &env),
            owning("unregistered", "fake:///unregistered", false, &env),
            owning("ready-node", "fake:///ready", true, &env),
            owning("not-ready-node", "fake:///not-ready", true, &env),
        ];
        for nc in &claims {
            api.create(&PostParams::default(), nc).await.unwrap();
        }
        fill_cache(&mut env.writers.nodeclaims, claims);
        fill_cache(
            &mut env.writers.nodes,
            vec![
                node("ready", "fake:///ready", true),
                node("not-ready", "fake:///not-ready", false),
            ],
        );
        assert_eq!(
            nodeclaim::reconcile(&env.ctx).await.unwrap(),
            nodeclaim::INTERVAL
        );
        let mut left: Vec<String> = env
            .server
            .list_objects("karpenter.sh/v1beta1", "nodeclaims", None)
            .1
            .iter()
            .map(|o| {
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        left.sort();
        assert_eq!(left, ["has-instance", "ready-node", "unregistered"]);
        // Already gone from the server but still cached: NotFound is not an error.
        assert!(nodeclaim::reconcile(&env.ctx).await.is_ok());
    }

    #[test]
    fn failure_backoff_doubles_from_5ms_up_to_1000s() {
        assert_eq!(failure_backoff(0), Duration::from_millis(5));
        assert_eq!(failure_backoff(3), Duration::from_millis(40));
        assert_eq!(failure_backoff(40), Duration::from_secs(1000));
    }

    #[tokio::test(start_paused = true)]
    async fn run_collects_on_its_timers_and_stops_on_shutdown() {
        let mut env = env().await;
        fill_cache(&mut env.writers.nodeclaims, vec![]);
        fill_cache(&mut env.writers.nodes, vec![]);
        launch(&env, "orphan").await;
        let (tx, rx) = futures::channel::oneshot::channel::<()>();
        let task = tokio::spawn(run(
            env.ctx.clone(),
            crate::operator::shutdown::on(async move {
                let _ = rx.await;
            }),
        ));
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(live(&env).len(), 1, "first pass: within the grace period");
        env.clock.advance(SignedDuration::from_secs(31));
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert!(live(&env).is_empty(), "a later pass collects it");
        let _ = tx.send(());
        tokio::time::timeout(Duration::from_secs(1), task)
            .await
            .expect("stops")
            .unwrap();
    }
}
