//! The guards of Karpenter's NodeClaim lifecycle (spec §4, §6, §8), each in place and removed.
//!
//! Every world runs the production wiring (`wiring::spawn`) as host `karpenter`, built from the
//! parts of [`super::karpenter`] ([`setup`], [`cloud`]); the host closure here differs from
//! [`super::karpenter::process`] only in that it shares the process's [`Metrics`] with the
//! world (an invariant reads them) and can use the kwok provider, whose Nodes the kubelet
//! stand-in (`kubelet::run`, an actor) makes Ready, as `controllers karpenter demo` wires them.
//!
//! - `karpenter/finalizer-before-launch` (§8.1): a user deletes the NodeClaim; without the
//!   finalizer the NodeClaim is gone at once and its instance outlives it.
//! - `karpenter/launch-cache-by-uid` (§8.2): a user deletes the NodeClaim and recreates it
//!   under the same name; a cache keyed by name hands the old launch to the new object.
//! - `karpenter/read-own-writes` (§8.3): with kwok Nodes, Node events requeue the NodeClaim
//!   right after our status patch; without the wait for our own write, a pass on the stale
//!   copy counts the launch or registration twice.
//! - `karpenter/ice-delete` (§4.1, §8.7): insufficient capacity deletes the NodeClaim, so the
//!   provisioner picks another offering; without it, the same NodeClaim is launched again.
//! - `karpenter/liveness` (§4.4): a NodeClaim whose Node never registers is deleted after the
//!   registration TTL (15 minutes of virtual time).
//! - `karpenter/optimistic-lock` (§6.2, §8.6): another writer adds a finalizer and a `Drifted`
//!   condition; the lifecycle's merge patches, computed from a stale copy, replace those lists
//!   whole unless they carry the resourceVersion they were computed from.
//! - `karpenter/node-taint-lock` (§8.6): kwok Nodes are created with the `not-ready` taint
//!   (the server's `TaintNodesByCondition`), which the node lifecycle controller (an actor of
//!   the world) and the kubelet stand-in take off; the kubelet registered without the
//!   NodeClaim's taints, so Registration writes the Node's taint list whole, computed from its
//!   cached Node, and without the resourceVersion on that patch it brings the removed taint
//!   back.
//!
//! Guards are removed by the controller's own test switches or tunables (the guards are the
//! process's own code or memory: no change of the world could remove them honestly).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use controllers::karpenter::cloudprovider::fake::FakeCloudProvider;
use controllers::karpenter::cloudprovider::kwok::KwokCloudProvider;
use controllers::karpenter::cloudprovider::{CloudProviderError, SharedCloudProvider};
use controllers::karpenter::context::Config;
use controllers::karpenter::kubelet::{self, KubeletContext};
use controllers::karpenter::metrics::Metrics;
use controllers::karpenter::wiring::{self, new_stores, WiringOptions};
use controllers::karpenter::{Context, NodeClaim};
use controllers::operator::shutdown;
use fake_apiserver::controllers::Controller;
use fake_apiserver::FakeApiServer;
use futures::FutureExt;
use jiff::SignedDuration;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{json, Value};

use super::karpenter::{cloud, nodeclaims, setup};
use crate::scenario::Scenario;
use crate::sim::Faults;
use crate::world::World;

/// The NodeClaim every world starts with.
pub const NODECLAIM: &str = "default-1";
/// The finalizer another writer adds (guard 6).
pub const FOREIGN_FINALIZER: &str = "example.com/keep";
/// The condition another writer adds (disruption's, guard 6).
pub const FOREIGN_CONDITION: &str = "Drifted";

/// Which cloud provider the process runs with.
#[derive(Clone)]
pub enum Provider {
    /// The world's fake cloud (it outlives a crash); creates no Nodes.
    Fake(Arc<FakeCloudProvider>),
    /// The kwok provider, made per incarnation on the process's client: its Nodes are the
    /// instances.
    Kwok,
    /// The kwok provider whose Nodes register without the NodeClaim's taints (a kubelet
    /// without `--register-with-taints`): Registration writes the taint list.
    KwokWithoutRegisteredTaints,
}

/// Host `karpenter`: `wiring::spawn` on `provider`, counting into `metrics` (shared with the
/// world), with the default configuration changed by `configure`.
pub fn process(
    world: &mut World,
    provider: Provider,
    metrics: Metrics,
    configure: impl Fn(&mut Config) + Send + Sync + 'static,
) {
    world.host("karpenter", move |env| {
        let mut config = Config::default();
        configure(&mut config);
        let (stores, writers) = new_stores();
        let cloud_provider: SharedCloudProvider = match &provider {
            Provider::Fake(cloud) => cloud.clone(),
            Provider::Kwok => Arc::new(KwokCloudProvider::new(env.client.clone(), env.ids.clone())),
            Provider::KwokWithoutRegisteredTaints => Arc::new(
                KwokCloudProvider::new(env.client.clone(), env.ids.clone())
                    .without_registered_taints(),
            ),
        };
        let ctx = Arc::new(Context::new(
            env.client,
            stores,
            cloud_provider,
            env.clock,
            env.ids,
            metrics.clone(),
            config,
        ));
        let options = WiringOptions {
            node_termination: !matches!(provider, Provider::Fake(_)),
            ..WiringOptions::default()
        };
        async move {
            let running = wiring::spawn(ctx, writers, options, shutdown::never());
            // The process lives as long as this task; a crash drops (and so aborts) it.
            futures::future::pending::<()>().await;
            drop(running);
        }
        .boxed()
    });
}

/// Actor `kubelet`: the kubelet stand-in for kwok Nodes (Ready, startup taints removed).
pub fn kubelet(world: &mut World, heartbeat: Duration) {
    world.actor("kubelet", move |env| {
        let ctx = Arc::new(KubeletContext::new(env.client, env.clock, heartbeat));
        kubelet::run(ctx, Default::default(), shutdown::never()).boxed()
    });
}

// ---- deeds: what users and other controllers do, through the network ----

/// Waits until the server shows the NodeClaim `Launched` (a user deleting a NodeClaim that is
/// being launched meets a different race, see the module's documentation).
pub async fn until_launched(client: kube::Client) {
    let api: Api<NodeClaim> = Api::all(client);
    for _ in 0..600 {
        if let Ok(Some(nc)) = api.get_opt(NODECLAIM).await {
            if nc.condition_is_true("Launched") {
                return;
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// A user deletes the NodeClaim once it is launched.
pub async fn delete_nodeclaim(client: kube::Client) {
    until_launched(client.clone()).await;
    let api: Api<NodeClaim> = Api::all(client);
    if let Err(e) = api.delete(NODECLAIM, &DeleteParams::default()).await {
        tracing::info!(error = %e, "deed: deleting the nodeclaim");
    }
}

/// A user deletes the NodeClaim and creates it again under the same name once the old one is
/// gone (a create meets `AlreadyExists` while termination runs).
pub async fn recreate_nodeclaim(client: kube::Client) {
    delete_nodeclaim(client.clone()).await;
    let api: Api<NodeClaim> = Api::all(client);
    let mut nodeclaim = controllers::karpenter::demo::demo_nodeclaim("default");
    nodeclaim.metadata.generate_name = None;
    nodeclaim.metadata.name = Some(NODECLAIM.into());
    for _ in 0..600 {
        match api.create(&PostParams::default(), &nodeclaim).await {
            Ok(_) => return,
            Err(e) => tracing::info!(error = %e, "deed: recreating the nodeclaim"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Another controller adds its finalizer: read, append, merge patch with the resourceVersion
/// read (a well-behaved writer), again on a conflict.
pub async fn add_foreign_finalizer(client: kube::Client) {
    let api: Api<NodeClaim> = Api::all(client);
    for _ in 0..20 {
        let Ok(Some(nc)) = api.get_opt(NODECLAIM).await else {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        };
        let mut finalizers = nc.metadata.finalizers.clone().unwrap_or_default();
        if finalizers.iter().any(|f| f == FOREIGN_FINALIZER) {
            return;
        }
        finalizers.push(FOREIGN_FINALIZER.into());
        let body = json!({"metadata": {
            "finalizers": finalizers,
            "resourceVersion": nc.metadata.resource_version,
        }});
        match api
            .patch(NODECLAIM, &PatchParams::default(), &Patch::Merge(&body))
            .await
        {
            Ok(_) => return,
            Err(e) => tracing::info!(error = %e, "deed: adding a finalizer"),
        }
    }
}

/// Disruption marks the NodeClaim `Drifted`: read, append the condition, status merge patch
/// with the resourceVersion read, again on a conflict.
pub async fn add_foreign_condition(client: kube::Client) {
    let api: Api<NodeClaim> = Api::all(client);
    for _ in 0..20 {
        let Ok(Some(nc)) = api.get_opt(NODECLAIM).await else {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        };
        let mut conditions: Vec<Value> = nc
            .status
            .as_ref()
            .map(|s| {
                s.conditions
                    .iter()
                    .filter_map(|c| serde_json::to_value(c).ok())
                    .collect()
            })
            .unwrap_or_default();
        if conditions.iter().any(|c| c["type"] == FOREIGN_CONDITION) {
            return;
        }
        conditions.push(json!({
            "type": FOREIGN_CONDITION, "status": "True", "severity": "Info",
            "reason": "Drifted", "message": "drifted from the NodePool",
            "lastTransitionTime": "2024-01-01T00:00:00Z",
        }));
        let body = json!({
            "metadata": {"resourceVersion": nc.metadata.resource_version},
            "status": {"conditions": conditions},
        });
        match api
            .patch_status(NODECLAIM, &PatchParams::default(), &Patch::Merge(&body))
            .await
        {
            Ok(_) => return,
            Err(e) => tracing::info!(error = %e, "deed: adding a condition"),
        }
    }
}

// ---- checks ----

fn name_of(nc: &Value) -> &str {
    nc["metadata"]["name"].as_str().unwrap_or_default()
}

fn is_deleting(nc: &Value) -> bool {
    !nc["metadata"]["deletionTimestamp"].is_null()
}

fn condition_true(nc: &Value, t: &str) -> bool {
    nc["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == t && c["status"] == "True")
}

/// No instance outlives its NodeClaim: every instance's NodeClaim (by name) is in the server.
pub fn no_instance_outlives_its_nodeclaim(
    server: &FakeApiServer,
    cloud: &FakeCloudProvider,
) -> Result<(), String> {
    let claims = nodeclaims(server);
    for instance in cloud.instances().list() {
        let name = instance.metadata.name.clone().unwrap_or_default();
        if !claims.iter().any(|nc| name_of(nc) == name) {
            return Err(format!(
                "instance {} of NodeClaim {name} outlives its NodeClaim: it leaked",
                instance.provider_id()
            ));
        }
    }
    Ok(())
}

/// Each live NodeClaim's recorded instance is its own: it exists, and no other NodeClaim
/// records it.
pub fn each_nodeclaim_has_its_own_instance(
    server: &FakeApiServer,
    cloud: &FakeCloudProvider,
) -> Result<(), String> {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for nc in nodeclaims(server) {
        let provider_id = nc["status"]["providerID"].as_str().unwrap_or_default();
        if provider_id.is_empty() {
            continue;
        }
        let uid = nc["metadata"]["uid"].as_str().unwrap_or_default();
        if let Some(other) = seen.insert(provider_id.to_string(), uid.to_string()) {
            return Err(format!(
                "NodeClaims {other} and {uid} both record instance {provider_id}"
            ));
        }
        if !is_deleting(&nc) && cloud.instances().get(provider_id).is_none() {
            return Err(format!(
                "NodeClaim {} (uid {uid}) records instance {provider_id}, which is not its own: it does not exist",
                name_of(&nc)
            ));
        }
    }
    Ok(())
}

/// Each NodeClaim (by UID) is counted at most once as launched, registered and initialized.
pub fn each_nodeclaim_counted_once(
    metrics: &Metrics,
    created: &RefCell<std::collections::BTreeSet<String>>,
    server: &FakeApiServer,
) -> Result<(), String> {
    let mut created = created.borrow_mut();
    for nc in nodeclaims(server) {
        created.insert(nc["metadata"]["uid"].as_str().unwrap_or_default().into());
    }
    let pool = Metrics::pool("default");
    for (what, family) in [
        ("launched", &metrics.launched),
        ("registered", &metrics.registered),
        ("initialized", &metrics.initialized),
    ] {
        let count = family.get_or_create(&pool).get();
        if count > created.len() as u64 {
            return Err(format!(
                "karpenter_nodeclaims_{what} is {count} for {} NodeClaim(s): counted twice",
                created.len()
            ));
        }
    }
    Ok(())
}

/// A NodeClaim whose launch met insufficient capacity is never launched again (the first
/// `Create` is the one that fails).
pub fn no_relaunch_after_insufficient_capacity(cloud: &FakeCloudProvider) -> Result<(), String> {
    let calls = cloud.create_calls();
    let Some(first) = calls.first() else {
        return Ok(());
    };
    let uid = first.metadata.uid.clone();
    let again = calls[1..].iter().filter(|c| c.metadata.uid == uid).count();
    if again > 0 {
        return Err(format!(
            "NodeClaim {} (uid {}) launched {again} more time(s) after insufficient capacity",
            first.metadata.name.as_deref().unwrap_or_default(),
            uid.as_deref().unwrap_or_default()
        ));
    }
    Ok(())
}

/// Once the server has shown another writer's finalizer or condition on a NodeClaim (by UID),
/// it stays there.
pub fn foreign_writes_kept(
    seen: &RefCell<BTreeMap<String, (bool, bool)>>,
    server: &FakeApiServer,
) -> Result<(), String> {
    let mut seen = seen.borrow_mut();
    for nc in nodeclaims(server) {
        let uid = nc["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let finalizer = nc["metadata"]["finalizers"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|f| f == FOREIGN_FINALIZER);
        let condition = nc["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == FOREIGN_CONDITION);
        let had = seen.entry(uid).or_default();
        if had.0 && !finalizer {
            return Err(format!(
                "finalizer {FOREIGN_FINALIZER} of NodeClaim {} was lost",
                name_of(&nc)
            ));
        }
        if had.1 && !condition {
            return Err(format!(
                "condition {FOREIGN_CONDITION} of NodeClaim {} was lost",
                name_of(&nc)
            ));
        }
        had.0 |= finalizer;
        had.1 |= condition;
    }
    Ok(())
}

/// The not-ready taint a Node's creation gave it (`TaintNodesByCondition`).
const NOT_READY_TAINT: &str = "node.kubernetes.io/not-ready";

/// Once the server has shown a Node (by UID) without the `not-ready` taint, the taint does not
/// come back unless the Node reports `Ready=False` (nothing here makes it not ready).
pub fn removed_not_ready_taint_stays_removed(
    seen: &RefCell<BTreeMap<String, bool>>,
    server: &FakeApiServer,
) -> Result<(), String> {
    let mut seen = seen.borrow_mut();
    for node in server.list_objects("v1", "nodes", None).1 {
        let uid = node["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let tainted = node["spec"]["taints"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["key"] == NOT_READY_TAINT);
        let not_ready = node["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "False");
        let removed_before = seen.entry(uid).or_default();
        if *removed_before && tainted && !not_ready {
            return Err(format!(
                "taint {NOT_READY_TAINT} came back on Node {} after it was removed",
                node["metadata"]["name"].as_str().unwrap_or_default()
            ));
        }
        *removed_before |= !tainted;
    }
    Ok(())
}

/// The goal: every NodeClaim is Ready or gone.
pub fn ready_or_gone(server: &FakeApiServer) -> Result<(), String> {
    for nc in nodeclaims(server) {
        if !condition_true(&nc, "Ready") {
            return Err(format!(
                "NodeClaim {} is neither Ready nor gone",
                name_of(&nc)
            ));
        }
    }
    Ok(())
}

/// The goal: no Node without a NodeClaim (kwok: a Node is an instance).
pub fn no_node_without_nodeclaim(server: &FakeApiServer) -> Result<(), String> {
    let claims = nodeclaims(server);
    for node in server.list_objects("v1", "nodes", None).1 {
        let provider_id = node["spec"]["providerID"].as_str().unwrap_or_default();
        if !claims
            .iter()
            .any(|nc| nc["status"]["providerID"].as_str() == Some(provider_id))
        {
            return Err(format!(
                "Node {} has no NodeClaim",
                node["metadata"]["name"].as_str().unwrap_or_default()
            ));
        }
    }
    Ok(())
}

// ---- worlds ----

fn fake_world(
    world: &mut World,
    configure: impl Fn(&mut Config) + Send + Sync + 'static,
) -> Arc<FakeCloudProvider> {
    world.setup(|client| setup(client).boxed());
    let cloud = cloud();
    process(
        world,
        Provider::Fake(cloud.clone()),
        Metrics::new(),
        configure,
    );
    let c = cloud.clone();
    world.invariant("no instance outlives its NodeClaim", move |server| {
        no_instance_outlives_its_nodeclaim(server, &c)
    });
    cloud
}

/// §8.1: a user deletes the NodeClaim at any time.
pub fn finalizer_world(world: &mut World, guard: bool) {
    let cloud = fake_world(world, move |c| c.launches_without_finalizer = !guard);
    world.deed("user deletes the NodeClaim", 1, |client| {
        delete_nodeclaim(client).boxed()
    });
    world.eventually("every NodeClaim is Ready or gone", ready_or_gone);
    world.eventually("no instance left", move |server| {
        no_instance_outlives_its_nodeclaim(server, &cloud)
    });
}

/// §8.2: a user deletes the NodeClaim and recreates it under the same name.
pub fn recreate_world(world: &mut World, guard: bool) {
    let cloud = fake_world(world, move |c| c.launch_cache_keyed_by_name = !guard);
    world.deed("user deletes and recreates the NodeClaim", 1, |client| {
        recreate_nodeclaim(client).boxed()
    });
    let c = cloud.clone();
    world.invariant("each NodeClaim has its own instance", move |server| {
        each_nodeclaim_has_its_own_instance(server, &c)
    });
    world.eventually("NodeClaim launched", super::karpenter::launched);
}

/// §8.3: kwok Nodes made Ready by the kubelet stand-in; Node events requeue the NodeClaim.
pub fn read_own_writes_world(world: &mut World, guard: bool) {
    world.setup(|client| setup(client).boxed());
    let metrics = Metrics::new();
    process(world, Provider::Kwok, metrics.clone(), move |c| {
        c.acts_on_stale_cache = !guard;
    });
    kubelet(world, Duration::from_secs(10));
    let created = RefCell::default();
    world.invariant("each NodeClaim counted once", move |server| {
        each_nodeclaim_counted_once(&metrics, &created, server)
    });
    world.eventually("every NodeClaim is Ready or gone", ready_or_gone);
    world.eventually("no Node without a NodeClaim", no_node_without_nodeclaim);
}

/// §4.1, §8.7: the first launch meets insufficient capacity.
pub fn ice_world(world: &mut World, guard: bool) {
    let cloud = fake_world(world, move |c| {
        c.insufficient_capacity_keeps_nodeclaim = !guard
    });
    cloud.set_next_create_err(CloudProviderError::InsufficientCapacity(
        "no capacity in any offering".into(),
    ));
    let c = cloud.clone();
    world.invariant("no relaunch after insufficient capacity", move |_| {
        no_relaunch_after_insufficient_capacity(&c)
    });
    world.eventually("no instance left", move |server| {
        no_instance_outlives_its_nodeclaim(server, &cloud)
    });
}

/// §4.4: no Node ever registers (the fake provider makes none).
pub fn liveness_world(world: &mut World, guard: bool) {
    let cloud = fake_world(world, move |c| {
        if !guard {
            // The guard off: a TTL no run reaches.
            c.registration_ttl = SignedDuration::from_hours(24 * 365);
        }
    });
    world.eventually("every NodeClaim is Ready or gone", ready_or_gone);
    world.eventually("no instance left", move |server| {
        no_instance_outlives_its_nodeclaim(server, &cloud)
    });
}

/// §6.2, §8.6: another controller adds a finalizer, disruption adds a condition.
pub fn optimistic_lock_world(world: &mut World, guard: bool) {
    fake_world(world, move |c| {
        c.merge_patches_without_optimistic_lock = !guard
    });
    world.deed("another controller adds its finalizer", 1, |client| {
        add_foreign_finalizer(client).boxed()
    });
    world.deed("disruption marks the NodeClaim Drifted", 1, |client| {
        add_foreign_condition(client).boxed()
    });
    let seen = RefCell::default();
    world.invariant("no lost update", move |server| {
        foreign_writes_kept(&seen, server)
    });
    world.eventually("NodeClaim launched", super::karpenter::launched);
}

/// §8.6: kwok Nodes start with the `not-ready` taint, which kube-controller-manager's node
/// lifecycle controller and the kubelet stand-in remove; Registration syncs the taint list.
pub fn node_taint_lock_world(world: &mut World, guard: bool) {
    world.setup(|client| setup(client).boxed());
    process(
        world,
        Provider::KwokWithoutRegisteredTaints,
        Metrics::new(),
        move |c| c.merge_patches_without_optimistic_lock = !guard,
    );
    kubelet(world, Duration::from_secs(10));
    world.kube_controller_manager(&[Controller::NodeLifecycle]);
    let seen = RefCell::default();
    world.invariant("a removed not-ready taint stays removed", move |server| {
        removed_not_ready_taint_stays_removed(&seen, server)
    });
    world.eventually("every NodeClaim is Ready or gone", ready_or_gone);
    world.eventually("no Node without a NodeClaim", no_node_without_nodeclaim);
}

/// The scenarios of this module.
pub fn scenarios() -> Vec<Scenario> {
    let request_faults = Faults {
        request_permille: 100,
        budget: 3,
        ..Faults::none()
    };
    // No crashes: a crash between a launch and its recorded status leaks an instance, as
    // upstream (spec §6.3, shown by `karpenter/crash-after-launch`).
    let all_faults = Faults {
        request_permille: 50,
        crashes: false,
        watch_cuts: true,
        expired_watches: true,
        budget: 3,
    };
    let watch_faults = Faults {
        watch_cuts: true,
        expired_watches: true,
        budget: 3,
        ..Faults::none()
    };
    let pair = |guard: &str,
                about: &str,
                about_without: &str,
                build: fn(&mut World, bool),
                faults: Faults,
                configure: fn(&mut crate::sim::Config)| {
        vec![
            Scenario::new(&format!("karpenter/{guard}"), about, move |w| {
                build(w, true)
            })
            .configure({
                let faults = faults.clone();
                move |c| {
                    c.faults = faults;
                    configure(c);
                }
            }),
            Scenario::new(
                &format!("karpenter/without-{guard}"),
                about_without,
                move |w| build(w, false),
            )
            .configure(move |c| {
                c.faults = faults;
                configure(c);
            }),
        ]
    };
    let mut all = Vec::new();
    all.extend(pair(
        "finalizer-before-launch",
        "spec §8.1: the finalizer is on before the launch, so a deleted NodeClaim's instance is deleted first",
        "the finalizer not added before the launch: a deleted NodeClaim is gone at once and its instance leaks",
        finalizer_world,
        all_faults.clone(),
        |c| c.steps = 80,
    ));
    all.extend(pair(
        "launch-cache-by-uid",
        "spec §8.2: a NodeClaim deleted and recreated under the same name launches its own instance",
        "the launch cache keyed by name: the recreated NodeClaim gets the old, deleted instance",
        recreate_world,
        all_faults.clone(),
        |c| c.steps = 120,
    ));
    all.extend(pair(
        "read-own-writes",
        "spec §8.3: a Node event right after our status patch waits for the cache: each NodeClaim counted once",
        "no wait for our own writes: a pass on the stale NodeClaim counts a launch or registration twice",
        read_own_writes_world,
        // Cut watches, not expired ones: a relist after `410 Gone` can take the informer
        // longer than the one second the guard waits (as upstream's sleep), see the report.
        Faults {
            watch_cuts: true,
            budget: 3,
            ..Faults::none()
        },
        |c| {
            c.steps = 120;
            // Informer lag within the second the guard (upstream's sleep) allows for.
            c.max_lag = Duration::from_millis(500);
        },
    ));
    all.extend(pair(
        "ice-delete",
        "spec §4.1, §8.7: insufficient capacity deletes the NodeClaim, which is never launched again",
        "insufficient capacity keeps the NodeClaim: the same NodeClaim is launched again",
        ice_world,
        watch_faults.clone(),
        |c| c.steps = 80,
    ));
    all.extend(pair(
        "liveness",
        "spec §4.4: a NodeClaim whose Node never registers is deleted after the 15m registration TTL",
        "no registration TTL: a NodeClaim whose Node never registers stays forever",
        liveness_world,
        all_faults.clone(),
        |c| c.steps = 80,
    ));
    all.extend(pair(
        "optimistic-lock",
        "spec §6.2, §8.6: merge patches carry their resourceVersion: another writer's finalizer and condition are kept",
        "upstream v0.36's unlocked merge patches: another writer's finalizer or condition is lost",
        optimistic_lock_world,
        request_faults,
        |c| c.steps = 80,
    ));
    all.extend(pair(
        "node-taint-lock",
        "spec §8.6: Registration's Node patch carries its resourceVersion: a taint removed meanwhile stays removed",
        "upstream v0.36's unlocked Node patch: Registration's taint list from a stale cache brings the removed not-ready taint back",
        node_taint_lock_world,
        // No request faults: a kwok Node created by a request whose answer is lost is an
        // instance the process does not know (the leak of spec §6.3), not this race.
        watch_faults,
        |c| c.steps = 120,
    ));
    all
}
