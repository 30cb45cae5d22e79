//! Upstream's NodeClaim lifecycle suite (spec §7), ported: direct reconciles against the
//! in-process fake API server with a manual clock, caches filled from the server before each pass.

use crate::karpenter_support;

use std::time::Duration;

use controllers::karpenter::cloudprovider::CloudProvider;
use controllers::karpenter::cloudprovider::CloudProviderError;
use controllers::karpenter::types::condition_types::*;
use controllers::karpenter::types::*;
use jiff::SignedDuration;
use karpenter_support::*;
use kube::ResourceExt;
use serde_json::json;

async fn within<F: std::future::Future<Output = ()>>(f: F) {
    tokio::time::timeout(TEST_TIMEOUT, f)
        .await
        .expect("test timed out");
}

/// Create, launch, and create the Node with the launched provider id.
async fn launched_with_node(
    env: &mut Env,
    nc: NodeClaim,
    ready: bool,
    allocatable: &[(&str, &str)],
) -> String {
    let name = name(&nc);
    env.create(&nc).await;
    env.reconcile(&name).await.unwrap();
    let pid = env.get(&name).await.unwrap().provider_id().to_string();
    assert!(
        !pid.is_empty(),
        "{:?}",
        env.get(&name).await.map(|n| n.status)
    );
    env.create_node(&node("node-1", &pid, ready, allocatable))
        .await;
    if ready {
        // The node lifecycle controller drops the not-ready taint the API server put on at create.
        env.patch_node("node-1", json!({"spec": {"taints": null}}))
            .await;
    }
    pid
}

// ---- Finalizer ----

#[tokio::test]
async fn finalizer_adds_it_if_missing() {
    within(async {
        let mut env = Env::fake().await;
        env.create(&nodeclaim("a")).await;
        env.reconcile("a").await.unwrap();
        assert!(env.get("a").await.unwrap().has_termination_finalizer());
    })
    .await
}

// ---- Launch ----

#[tokio::test]
async fn launch_creates_once_and_marks_launched() {
    within(async {
        let mut env = Env::fake().await;
        env.create(&nodeclaim("a")).await;
        env.reconcile("a").await.unwrap();
        let nc = env.get("a").await.unwrap();
        assert_eq!(env.provider().create_calls().len(), 1);
        assert!(env.provider().get(nc.provider_id()).await.is_ok());
        assert_eq!(cond(&nc, LAUNCHED).0, "True");
        assert_eq!(nc.label(CAPACITY_TYPE_LABEL), "on-demand");
        assert!(
            !nc.label(INSTANCE_TYPE_LABEL).is_empty(),
            "provider labels copied"
        );
        assert!(!nc.status.as_ref().unwrap().allocatable.is_empty());
        assert_eq!(env.launched(), 1);
        // A second pass does not create again.
        env.reconcile("a").await.unwrap();
        assert_eq!(env.provider().create_calls().len(), 1);
    })
    .await
}

#[tokio::test]
async fn launch_insufficient_capacity_deletes_the_nodeclaim() {
    within(async {
        let mut env = Env::fake().await;
        env.create(&nodeclaim("a")).await;
        env.provider()
            .set_next_create_err(CloudProviderError::InsufficientCapacity("all gone".into()));
        env.reconcile("a").await.unwrap();
        let nc = env.get("a").await.unwrap();
        assert!(nc.is_deleting(), "deleted, held by the finalizer");
        assert_eq!(
            cond(&nc, LAUNCHED).0,
            "<absent>",
            "no Launched change on ICE"
        );
        env.expect_finalizers_removed("a").await;
        assert!(env.get("a").await.is_none());
        assert_eq!(
            env.ctx
                .metrics
                .terminated_count("insufficient_capacity", "default", ""),
            1
        );
        let events = env.ctx.recorder.published();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].reason, "InsufficientCapacityError");
        assert!(env.provider().instances().is_empty());
    })
    .await
}

#[tokio::test]
async fn launch_node_class_not_ready_requeues_without_error() {
    within(async {
        let mut env = Env::fake().await;
        env.create(&nodeclaim("a")).await;
        env.provider()
            .set_next_create_err(CloudProviderError::NodeClassNotReady("not yet".into()));
        let action = env.reconcile("a").await.expect("no error");
        assert_ne!(
            action,
            kube::runtime::controller::Action::await_change(),
            "requeued"
        );
        let nc = env.get("a").await.unwrap();
        assert_eq!(cond(&nc, LAUNCHED), ("False".into(), "LaunchFailed".into()));
        // Registration and Initialization then mark NotLaunched, and Ready follows the last MarkFalse.
        assert_eq!(cond(&nc, READY), ("False".into(), "NotLaunched".into()));
        assert_eq!(env.ctx.recorder.published()[0].reason, "NodeClassNotReady");
    })
    .await
}

// ---- Registration ----

fn registration_nodeclaim() -> NodeClaim {
    let mut nc = nodeclaim("a");
    nc.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("example.com/team".into(), "blue".into());
    nc.metadata.annotations = Some(
        [
            (DO_NOT_DISRUPT_ANNOTATION.to_string(), "true".to_string()),
            ("example.com/note".to_string(), "x".to_string()),
        ]
        .into(),
    );
    nc.spec.taints = vec![t("dedicated", Some("gpu"), "NoSchedule")];
    nc.spec.startup_taints = vec![t("example.com/agent", None, "NoSchedule")];
    nc
}

#[tokio::test]
async fn registration_syncs_the_node() {
    within(async {
        let mut env = Env::fake().await;
        launched_with_node(&mut env, registration_nodeclaim(), false, &[]).await;
        env.reconcile("a").await.unwrap();
        let nc = env.get("a").await.unwrap();
        assert_eq!(cond(&nc, REGISTERED).0, "True");
        assert_eq!(nc.status.as_ref().unwrap().node_name, "node-1");
        let node = env.node("node-1").await;
        let owners = node.owner_references();
        assert_eq!(owners.len(), 1);
        assert_eq!(
            (owners[0].kind.as_str(), owners[0].name.as_str()),
            ("NodeClaim", "a")
        );
        assert_eq!(owners[0].uid, nc.uid().unwrap());
        assert!(node.finalizers().iter().any(|f| f == TERMINATION_FINALIZER));
        let labels = node.labels();
        assert_eq!(labels[NODE_REGISTERED_LABEL], "true");
        assert_eq!(labels["example.com/team"], "blue");
        assert_eq!(labels[NODEPOOL_LABEL], "default");
        assert_eq!(node.annotations()[DO_NOT_DISRUPT_ANNOTATION], "true");
        assert_eq!(node.annotations()["example.com/note"], "x");
        let taints = node.spec.unwrap().taints.unwrap();
        assert!(taints
            .iter()
            .any(|x| x.key == "dedicated" && x.value.as_deref() == Some("gpu")));
        assert!(taints.iter().any(|x| x.key == "example.com/agent"));
        assert_eq!(registered_total(&env), 1);
    })
    .await
}

fn registered_total(env: &Env) -> u64 {
    controllers::karpenter::metrics::Metrics::total(&env.ctx.metrics.registered, &["default"])
}

#[tokio::test]
async fn registration_does_not_resync_removed_startup_taints() {
    within(async {
        let mut env = Env::fake().await;
        launched_with_node(&mut env, registration_nodeclaim(), false, &[]).await;
        env.reconcile("a").await.unwrap();
        // The agent removes its startup taint.
        env.patch_node("node-1", json!({"spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}})).await;
        env.reconcile("a").await.unwrap();
        let taints = env.node("node-1").await.spec.unwrap().taints.unwrap();
        assert!(!taints.iter().any(|x| x.key == "example.com/agent"), "{taints:?}");
    })
    .await
}

#[tokio::test]
async fn registration_waits_for_the_node() {
    within(async {
        let mut env = Env::fake().await;
        env.create(&nodeclaim("a")).await;
        env.reconcile("a").await.unwrap();
        let nc = env.get("a").await.unwrap();
        assert_eq!(
            cond(&nc, REGISTERED),
            ("False".into(), "NodeNotFound".into())
        );
        assert_eq!(
            cond(&nc, INITIALIZED),
            ("False".into(), "NodeNotFound".into())
        );
        assert_eq!(cond(&nc, READY).0, "False");
    })
    .await
}

// ---- Initialization ----

fn requesting(resources: &[(&str, &str)]) -> NodeClaim {
    let mut nc = nodeclaim("a");
    nc.spec.resources.requests = resources
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                k8s_openapi::apimachinery::pkg::api::resource::Quantity(v.to_string()),
            )
        })
        .collect();
    nc
}

#[tokio::test]
async fn initialization_all_conditions_met() {
    within(async {
        let mut env = Env::fake().await;
        launched_with_node(&mut env, requesting(&[("cpu", "1")]), true, &[]).await;
        env.reconcile("a").await.unwrap();
        let nc = env.get("a").await.unwrap();
        assert_eq!(
            cond(&nc, INITIALIZED),
            ("False".into(), "ResourceNotRegistered".into())
        );
        env.patch_node_status(
            "node-1",
            json!({"status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}}}),
        )
        .await;
        env.reconcile("a").await.unwrap();
        let nc = env.get("a").await.unwrap();
        assert_eq!(cond(&nc, INITIALIZED).0, "True");
        assert_eq!(cond(&nc, READY).0, "True", "{:?}", nc.conditions());
        assert_eq!(
            env.node("node-1").await.labels()[NODE_INITIALIZED_LABEL],
            "true"
        );
    })
    .await
}

#[tokio::test]
async fn initialization_not_ready_node() {
    within(async {
        let mut env = Env::fake().await;
        launched_with_node(&mut env, nodeclaim("a"), false, &[]).await;
        env.reconcile("a").await.unwrap();
        let nc = env.get("a").await.unwrap();
        assert_eq!(
            cond(&nc, INITIALIZED),
            ("False".into(), "NodeNotReady".into())
        );
        assert!(!env
            .node("node-1")
            .await
            .labels()
            .contains_key(NODE_INITIALIZED_LABEL));
    })
    .await
}

#[tokio::test]
async fn initialization_waits_for_gpu_registration() {
    within(async {
        let mut env = Env::fake().await;
        launched_with_node(
            &mut env,
            requesting(&[("nvidia.com/gpu", "1")]),
            true,
            &[("nvidia.com/gpu", "0")],
        )
        .await;
        env.reconcile("a").await.unwrap();
        assert_eq!(
            cond(&env.get("a").await.unwrap(), INITIALIZED),
            ("False".into(), "ResourceNotRegistered".into())
        );
        env.patch_node_status(
            "node-1",
            json!({"status": {"allocatable": {"nvidia.com/gpu": "1"}}}),
        )
        .await;
        env.reconcile("a").await.unwrap();
        assert_eq!(cond(&env.get("a").await.unwrap(), INITIALIZED).0, "True");
    })
    .await
}

#[tokio::test]
async fn initialization_waits_for_startup_taints() {
    within(async {
        let mut env = Env::fake().await;
        let mut nc = nodeclaim("a");
        nc.spec.startup_taints = vec![t("example.com/agent", Some("x"), "NoSchedule")];
        launched_with_node(&mut env, nc, true, &[]).await;
        // The kubelet registers with the startup taint (--register-with-taints).
        env.patch_node("node-1", json!({"spec": {"taints": [{"key": "example.com/agent", "value": "x", "effect": "NoSchedule"}]}})).await;
        env.reconcile("a").await.unwrap();
        let nc = env.get("a").await.unwrap();
        assert_eq!(cond(&nc, INITIALIZED), ("False".into(), "StartupTaintsExist".into()));
        assert_eq!(nc.condition(INITIALIZED).unwrap().message, "StartupTaint \"example.com/agent=x:NoSchedule\" still exists");
        env.patch_node("node-1", json!({"spec": {"taints": null}})).await;
        env.reconcile("a").await.unwrap();
        assert_eq!(cond(&env.get("a").await.unwrap(), INITIALIZED).0, "True");
    })
    .await
}

#[tokio::test]
async fn initialization_waits_for_ephemeral_taints() {
    within(async {
        let mut env = Env::fake().await;
        launched_with_node(&mut env, nodeclaim("a"), true, &[]).await;
        env.patch_node("node-1", json!({"spec": {"taints": [{"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"}]}})).await;
        env.reconcile("a").await.unwrap();
        assert_eq!(cond(&env.get("a").await.unwrap(), INITIALIZED), ("False".into(), "KnownEphemeralTaintsExist".into()));
        env.patch_node("node-1", json!({"spec": {"taints": null}})).await;
        env.reconcile("a").await.unwrap();
        assert_eq!(cond(&env.get("a").await.unwrap(), INITIALIZED).0, "True");
    })
    .await
}

// ---- Liveness ----

#[tokio::test]
async fn liveness_keeps_registered_nodeclaims() {
    within(async {
        let mut env = Env::fake().await;
        launched_with_node(&mut env, nodeclaim("a"), true, &[]).await;
        env.reconcile("a").await.unwrap();
        env.clock.advance(SignedDuration::from_mins(20));
        env.reconcile("a").await.unwrap();
        let nc = env.get("a").await.unwrap();
        assert!(!nc.is_deleting());
    })
    .await
}

#[tokio::test]
async fn liveness_deletes_unregistered_nodeclaims_after_the_ttl() {
    within(async {
        let mut env = Env::fake().await;
        env.create(&nodeclaim("a")).await;
        let action = env.reconcile("a").await.unwrap();
        assert_eq!(
            action,
            kube::runtime::controller::Action::requeue(Duration::from_secs(900)),
            "TTL remainder"
        );
        env.clock.advance(SignedDuration::from_mins(14));
        assert_eq!(
            env.reconcile("a").await.unwrap(),
            kube::runtime::controller::Action::requeue(Duration::from_secs(60))
        );
        assert!(!env.get("a").await.unwrap().is_deleting());
        env.clock.advance(SignedDuration::from_mins(6));
        env.reconcile("a").await.unwrap();
        assert!(env.get("a").await.unwrap().is_deleting());
        env.expect_finalizers_removed("a").await;
        assert!(env.get("a").await.is_none());
        assert_eq!(
            env.ctx
                .metrics
                .terminated_count("liveness", "default", "on-demand"),
            1
        );
    })
    .await
}

#[tokio::test]
async fn liveness_deletes_nodeclaims_that_never_launch() {
    within(async {
        let mut env = Env::fake().await;
        env.provider().set_allowed_create_calls(Some(0));
        env.create(&nodeclaim("a")).await;
        assert!(env.reconcile("a").await.is_err(), "launch fails");
        let nc = env.get("a").await.unwrap();
        assert_eq!(
            cond(&nc, REGISTERED),
            ("False".into(), "NotLaunched".into())
        );
        env.clock.advance(SignedDuration::from_mins(20));
        let _ = env.reconcile("a").await;
        assert!(env.get("a").await.unwrap().is_deleting());
        env.expect_finalizers_removed("a").await;
        assert!(env.get("a").await.is_none());
    })
    .await
}

// ---- Sharp edges fixed (spec §6) ----

/// §6.4: the transition time is stamped with the injected clock, the one the TTL uses. The manual
/// clock stands in 2024; upstream would stamp wall time (years later) and never expire the TTL.
#[tokio::test]
async fn one_clock_for_transition_times_and_ttls() {
    within(async {
        let mut env = Env::fake().await;
        env.create(&nodeclaim("a")).await;
        env.reconcile("a").await.unwrap();
        let nc = env.get("a").await.unwrap();
        let ltt = nc
            .condition(REGISTERED)
            .unwrap()
            .last_transition_time
            .clone()
            .unwrap();
        assert_eq!(
            ltt.0.as_second(),
            controllers::clock::Clock::now(&env.clock).as_second()
        );
        env.clock.advance(SignedDuration::from_mins(16));
        env.reconcile("a").await.unwrap();
        assert!(env.get("a").await.unwrap().is_deleting());
    })
    .await
}

/// §6.5: a launch failure is reported even when the following patch hits a NodeClaim that is gone.
#[tokio::test]
async fn not_found_does_not_swallow_other_errors() {
    within(async {
        let mut env = Env::fake().await;
        env.provider()
            .set_error_on_every_call(Some(CloudProviderError::Other("cloud is down".into())));
        // The cache still shows a NodeClaim (with the finalizer) that the server no longer has.
        let mut ghost = nodeclaim("ghost");
        ghost.metadata.uid = Some("ghost-uid".into());
        ghost.metadata.resource_version = Some("1".into());
        ghost.metadata.finalizers = Some(vec![TERMINATION_FINALIZER.into()]);
        env.cache_nodeclaim(ghost);
        let err =
            controllers::karpenter::lifecycle::reconcile(env.cached("ghost"), env.ctx.clone())
                .await
                .expect_err("upstream's IgnoreNotFound(multierr) would return nil here");
        assert!(err.to_string().contains("cloud is down"), "{err}");
        assert!(!err.is_not_found());
    })
    .await
}

/// §3.2: the launch cache stops a second Create when the status patch that recorded the launch
/// failed; it is keyed by UID, so a recreation under the same name launches again.
#[tokio::test]
async fn launch_cache_prevents_a_second_create_after_a_failed_status_patch() {
    within(async {
        let mut env = Env::fake().await;
        env.create(&nodeclaim("a")).await;
        env.server.add_fault(fake_apiserver::hooks::FaultRule {
            matcher: fake_apiserver::hooks::RequestMatcher {
                verb: Some("patch".into()),
                resource: Some("nodeclaims".into()),
                subresource: Some("status".into()),
                ..Default::default()
            },
            error: fake_apiserver::error::ApiError::internal("etcd hiccup"),
            times: Some(1),
        });
        assert!(env.reconcile("a").await.is_err(), "status patch failed");
        assert_eq!(
            cond(&env.get("a").await.unwrap(), LAUNCHED).0,
            "<absent>",
            "launch lost"
        );
        env.reconcile("a").await.unwrap();
        assert_eq!(
            env.provider().create_calls().len(),
            1,
            "no duplicate instance"
        );
        assert_eq!(env.provider().instances().len(), 1);
        assert_eq!(cond(&env.get("a").await.unwrap(), LAUNCHED).0, "True");
        // Same name, new UID: launches again.
        env.expect_finalizers_removed("a").await;
        env.nodeclaims()
            .delete("a", &Default::default())
            .await
            .unwrap();
        env.create(&nodeclaim("a")).await;
        env.reconcile("a").await.unwrap();
        assert_eq!(env.provider().create_calls().len(), 2);
    })
    .await
}

// ---- Termination (spec §5) ----

#[tokio::test]
async fn termination_deletes_nodes_then_the_instance_then_the_finalizer() {
    within(async {
        let mut env = Env::fake().await;
        launched_with_node(&mut env, nodeclaim("a"), true, &[]).await;
        env.reconcile("a").await.unwrap();
        env.nodeclaims()
            .delete("a", &Default::default())
            .await
            .unwrap();
        env.terminate("a").await.unwrap();
        let node = env.node("node-1").await;
        assert!(
            node.metadata.deletion_timestamp.is_some(),
            "node deleted (held by its finalizer)"
        );
        assert_eq!(
            env.provider().instances().len(),
            1,
            "instance kept while the node exists"
        );
        assert!(env.get("a").await.unwrap().has_termination_finalizer());
        // The node termination controller lets the Node go.
        env.patch_node("node-1", json!({"metadata": {"finalizers": null}}))
            .await;
        env.terminate("a").await.unwrap();
        assert!(env.provider().instances().is_empty(), "instance deleted");
        assert!(env.get("a").await.is_none(), "finalizer removed");
    })
    .await
}

#[tokio::test]
async fn termination_requeues_on_conflict() {
    within(async {
        let mut env = Env::fake().await;
        env.create(&nodeclaim("a")).await;
        env.reconcile("a").await.unwrap();
        env.nodeclaims()
            .delete("a", &Default::default())
            .await
            .unwrap();
        env.sync().await;
        let stale = env.cached("a");
        // Someone else writes the NodeClaim after our cache saw it.
        env.nodeclaims()
            .patch(
                "a",
                &Default::default(),
                &kube::api::Patch::Merge(&json!({"metadata": {"labels": {"x": "y"}}})),
            )
            .await
            .unwrap();
        let action = controllers::karpenter::termination::reconcile(stale, env.ctx.clone())
            .await
            .unwrap();
        assert_ne!(
            action,
            kube::runtime::controller::Action::await_change(),
            "409 requeues"
        );
        assert!(
            env.get("a").await.is_some(),
            "the finalizer was not clobbered"
        );
        env.terminate("a").await.unwrap();
        assert!(env.get("a").await.is_none());
    })
    .await
}

// ---- Guards of spec §8, each with its bad interleaving when defeated ----

fn fail_once(env: &Env, verb: &str, subresource: &str) {
    env.server.add_fault(fake_apiserver::hooks::FaultRule {
        matcher: fake_apiserver::hooks::RequestMatcher {
            verb: Some(verb.into()),
            resource: Some("nodeclaims".into()),
            subresource: Some(subresource.into()),
            ..Default::default()
        },
        error: fake_apiserver::error::ApiError::internal("injected"),
        times: Some(1),
    });
}

/// §8.1: no launch without the finalizer.
#[tokio::test]
async fn no_launch_before_the_finalizer_is_stored() {
    within(async {
        let mut env = Env::fake().await;
        env.create(&nodeclaim("a")).await;
        fail_once(&env, "patch", "");
        assert!(env.reconcile("a").await.is_err());
        assert!(env.provider().create_calls().is_empty(), "nothing launched");
        env.reconcile("a").await.unwrap();
        assert_eq!(env.provider().create_calls().len(), 1);
    })
    .await
}

/// §8.2 with the launch cache defeated (TTL 0): a failed status patch leads to a second Create,
/// i.e. a leaked instance. With the cache (above) there is one.
#[tokio::test]
async fn without_the_launch_cache_a_failed_status_patch_leaks_an_instance() {
    within(async {
        let config = controllers::karpenter::context::Config {
            launch_cache_ttl: SignedDuration::ZERO,
            ..Default::default()
        };
        let mut env = Env::fake_with(config).await;
        env.create(&nodeclaim("a")).await;
        fail_once(&env, "patch", "status");
        assert!(env.reconcile("a").await.is_err());
        env.reconcile("a").await.unwrap();
        assert_eq!(env.provider().create_calls().len(), 2);
        assert_eq!(
            env.provider().instances().len(),
            2,
            "one instance is orphaned"
        );
    })
    .await
}
