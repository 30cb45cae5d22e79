//! The replacement for upstream's one-second sleep (spec §4 step 4, §8.3), and the watch
//! mappings the production wiring and the race harness share.

use crate::karpenter_support;

use std::sync::Arc;

use controllers::clock::ManualClock;
use controllers::ids::SeededIds;
use controllers::karpenter::cloudprovider::fake::FakeCloudProvider;
use controllers::karpenter::context::{Config, Context};
use controllers::karpenter::lifecycle;
use controllers::karpenter::metrics::Metrics;
use controllers::karpenter::nodes::nodeclaims_for_node;
use controllers::karpenter::read_own_writes::Gate;
use controllers::karpenter::types::*;
use controllers::karpenter::wiring::{new_stores, Dispatcher};
use karpenter_support::*;
use kube::runtime::controller::Action;
use kube::runtime::watcher::Event;
use serde_json::json;

/// Launch, then register, with the NodeClaim cache updated only up to the launch. Then a Node
/// event maps (through the stale cache, which has the provider id) to the NodeClaim, and a pass
/// runs on the stale copy that has no `Registered` yet. Returns the registered-counter value and
/// how many "registered nodeclaim" log lines were written.
async fn stale_pass_after_registration(config: Config) -> (u64, usize, Action) {
    let logs = LogCapture::default();
    let _guard = logs.install();
    let mut env = Env::fake_with(config).await;
    env.create(&nodeclaim("a")).await;
    env.reconcile("a").await.unwrap();
    let pid = env.get("a").await.unwrap().provider_id().to_string();
    env.create_node(&node("n1", &pid, false, &[])).await;
    env.reconcile("a").await.unwrap();
    let registered = |env: &Env| Metrics::total(&env.ctx.metrics.registered, &["default"]);
    assert_eq!(registered(&env), 1);
    assert_eq!(logs.count("registered nodeclaim"), 1);
    let stale = env.cached("a");
    assert!(
        !stale.condition_is_true(condition_types::REGISTERED),
        "the cache lags"
    );

    // The kubelet reports Ready: a Node event, mapped through the (stale) NodeClaim cache.
    env.patch_node_status(
        "n1",
        json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
    )
    .await;
    // The Node informer has the event it hands to the mapping (an informer updates its store
    // before its handlers run); only the NodeClaim cache lags. (A stale Node copy would make
    // Registration's resourceVersion-locked Node patch conflict instead.)
    env.sync_nodes().await;
    let node = env.node("n1").await;
    let keys = nodeclaims_for_node(&env.ctx.nodeclaims, &node);
    assert_eq!(keys.len(), 1, "the node event maps to the NodeClaim");
    let action = lifecycle::reconcile(env.cached(&keys[0].name), env.ctx.clone())
        .await
        .unwrap();
    (registered(&env), logs.count("registered nodeclaim"), action)
}

#[tokio::test]
async fn node_event_before_the_cache_caught_up_does_not_duplicate_metrics_or_logs() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let (registered, lines, action) = stale_pass_after_registration(Config::default()).await;
        assert_eq!(
            registered, 1,
            "no duplicate karpenter_nodeclaims_registered"
        );
        assert_eq!(lines, 1, "no duplicate log line");
        assert_eq!(
            action,
            Action::requeue(std::time::Duration::from_secs(1)),
            "deferred, bounded by the 1s wait"
        );
    })
    .await
    .unwrap()
}

/// The same schedule with the gate removed (the `acts_on_stale_cache` test switch) duplicates
/// both — the reason upstream slept, and what the gate replaces.
#[tokio::test]
async fn without_the_gate_the_stale_pass_duplicates_metrics_and_logs() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let config = Config {
            acts_on_stale_cache: true,
            ..Config::default()
        };
        let (registered, lines, _) = stale_pass_after_registration(config).await;
        assert_eq!(registered, 2);
        assert_eq!(lines, 2);
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn once_the_cache_catches_up_the_pass_runs() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let mut env = Env::fake().await;
        env.create(&nodeclaim("a")).await;
        env.sync().await;
        let stale = env.cached("a");
        lifecycle::reconcile(stale.clone(), env.ctx.clone())
            .await
            .unwrap();
        // Stale copy: deferred without calling the provider again.
        let deferred = lifecycle::reconcile(stale.clone(), env.ctx.clone())
            .await
            .unwrap();
        assert_eq!(deferred, Action::requeue(std::time::Duration::from_secs(1)));
        assert_eq!(env.provider().create_calls().len(), 1);
        assert_eq!(env.launched(), 1);
        // Caught up: runs (Liveness asks to come back at the TTL).
        let action = env.reconcile("a").await.unwrap();
        assert_eq!(action, Action::requeue(std::time::Duration::from_secs(900)));
        assert_eq!(env.ctx.read_own_writes.pending(), 0);
        assert_eq!(env.launched(), 1);
    })
    .await
    .unwrap()
}

// ---- Watch mappings ----

fn nc_obj(name: &str, uid: &str, rv: &str, generation: i64, provider_id: &str) -> NodeClaim {
    let mut nc = nodeclaim(name);
    nc.metadata.uid = Some(uid.into());
    nc.metadata.resource_version = Some(rv.into());
    nc.metadata.generation = Some(generation);
    nc.status = Some(NodeClaimStatus {
        provider_id: provider_id.into(),
        ..Default::default()
    });
    nc
}

async fn dispatcher() -> (Dispatcher, Arc<Context>) {
    let clock = ManualClock::default();
    let server = server(&clock);
    let (stores, writers) = new_stores();
    let ids = Arc::new(SeededIds::new(1));
    let ctx = Arc::new(Context::new(
        server.client(),
        stores,
        Arc::new(FakeCloudProvider::new(ids.clone())),
        Arc::new(clock),
        ids,
        Metrics::new(),
        Config::default(),
    ));
    (Dispatcher::new(ctx.clone(), writers), ctx)
}

fn names<K: kube::Resource>(refs: &[kube::runtime::reflector::ObjectRef<K>]) -> Vec<String> {
    refs.iter().map(|r| r.name.clone()).collect()
}

#[tokio::test]
async fn lifecycle_sees_creates_only_and_termination_sees_generation_changes() {
    let (mut d, _) = dispatcher().await;
    let t = d.on_nodeclaim_event(&Event::Apply(nc_obj("a", "u1", "1", 1, "")));
    assert_eq!(names(&t.lifecycle), vec!["a"]);
    assert_eq!(names(&t.termination), vec!["a"]);
    // Our own status write: no trigger for either.
    let t = d.on_nodeclaim_event(&Event::Apply(nc_obj("a", "u1", "2", 1, "p1")));
    assert!(t.lifecycle.is_empty() && t.termination.is_empty());
    // Deletion bumps the generation: termination only.
    let t = d.on_nodeclaim_event(&Event::Apply(nc_obj("a", "u1", "3", 2, "p1")));
    assert!(t.lifecycle.is_empty());
    assert_eq!(names(&t.termination), vec!["a"]);
    // Recreated under the same name: a create again.
    d.on_nodeclaim_event(&Event::Delete(nc_obj("a", "u1", "4", 2, "p1")));
    let t = d.on_nodeclaim_event(&Event::Apply(nc_obj("a", "u2", "5", 1, "")));
    assert_eq!(names(&t.lifecycle), vec!["a"]);
}

#[tokio::test]
async fn relisted_objects_trigger_once_they_are_in_the_store() {
    let (mut d, ctx) = dispatcher().await;
    assert!(d.on_nodeclaim_event(&Event::Init).lifecycle.is_empty());
    assert!(d
        .on_nodeclaim_event(&Event::InitApply(nc_obj("a", "u1", "1", 1, "")))
        .lifecycle
        .is_empty());
    assert!(ctx.nodeclaims.is_empty(), "buffered until InitDone");
    let t = d.on_nodeclaim_event(&Event::InitDone);
    assert_eq!(names(&t.lifecycle), vec!["a"]);
    assert_eq!(ctx.nodeclaims.len(), 1);
}

#[tokio::test]
async fn node_events_map_by_provider_id_and_never_for_an_empty_one() {
    let (mut d, _) = dispatcher().await;
    d.on_nodeclaim_event(&Event::Apply(nc_obj("unlaunched-1", "u1", "1", 1, "")));
    d.on_nodeclaim_event(&Event::Apply(nc_obj("unlaunched-2", "u2", "2", 1, "")));
    d.on_nodeclaim_event(&Event::Apply(nc_obj("launched", "u3", "3", 1, "p1")));
    // Upstream would enqueue both unlaunched NodeClaims for this Node (spec §6.7).
    let t = d.on_node_event(&Event::Apply(node("empty", "", false, &[])));
    assert!(t.lifecycle.is_empty() && t.termination.is_empty());
    let t = d.on_node_event(&Event::Apply(node("n1", "p1", false, &[])));
    assert_eq!(names(&t.lifecycle), vec!["launched"]);
    assert!(
        t.termination.is_empty(),
        "termination watches Node deletes only"
    );
    let t = d.on_node_event(&Event::Delete(node("n1", "p1", false, &[])));
    assert_eq!(names(&t.lifecycle), vec!["launched"]);
    assert_eq!(names(&t.termination), vec!["launched"]);
}

#[tokio::test]
async fn the_cache_catching_up_with_a_deferred_write_retriggers_the_key() {
    let (mut d, ctx) = dispatcher().await;
    d.on_nodeclaim_event(&Event::Apply(nc_obj("a", "u1", "5", 1, "")));
    ctx.read_own_writes.wrote("a", Some("7"));
    assert!(matches!(
        ctx.read_own_writes.gate("a", Some("5")),
        Gate::Wait(_)
    ));
    let t = d.on_nodeclaim_event(&Event::Apply(nc_obj("a", "u1", "6", 1, "")));
    assert!(t.lifecycle.is_empty(), "not there yet");
    let t = d.on_nodeclaim_event(&Event::Apply(nc_obj("a", "u1", "7", 1, "")));
    assert_eq!(
        names(&t.lifecycle),
        vec!["a"],
        "re-run as soon as the cache shows our write"
    );
}
