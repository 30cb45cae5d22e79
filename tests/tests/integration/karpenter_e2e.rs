//! End to end: the real controllers (`kube::runtime::Controller` through the production wiring)
//! on the in-process fake API server, with the kwok-style provider, a kubelet stand-in and a
//! manual clock. Every test has a deadline, and checks that no instance leaks.

use crate::karpenter_support;

use std::time::Duration;

use controllers::ids::SeededIds;
use controllers::karpenter::cloudprovider::fake::FakeCloudProvider;
use controllers::karpenter::cloudprovider::CloudProviderError;
use controllers::karpenter::types::condition_types::*;
use controllers::karpenter::types::*;
use jiff::SignedDuration;
use karpenter_support::*;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::ResourceExt;
use std::sync::Arc;

const WAIT: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodeclaims_become_ready_and_deletion_cleans_up_everything() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let (run, kwok) = Running::start(ProviderChoice::Kwok(None), true).await;
        let kwok = kwok.unwrap();
        let names = ["a", "b", "c"];
        for n in names {
            run.nodeclaims()
                .create(&PostParams::default(), &kwok_nodeclaim(n))
                .await
                .unwrap();
        }
        let api = run.nodeclaims();
        eventually(WAIT, "every NodeClaim Ready and Initialized", || async {
            let list = api.list(&ListParams::default()).await.unwrap().items;
            list.len() == 3
                && list
                    .iter()
                    .all(|nc| nc.condition_is_true(READY) && nc.condition_is_true(INITIALIZED))
        })
        .await;
        assert_eq!(kwok.instances().len(), 3);
        for nc in api.list(&ListParams::default()).await.unwrap().items {
            let node = run
                .nodes()
                .get(&nc.status.as_ref().unwrap().node_name)
                .await
                .unwrap();
            assert_eq!(node.labels()[NODE_INITIALIZED_LABEL], "true");
            assert_eq!(node.labels()[NODE_REGISTERED_LABEL], "true");
            let taints = node.spec.clone().unwrap().taints.unwrap_or_default();
            assert!(
                taints.is_empty(),
                "startup and ephemeral taints removed: {taints:?}"
            );
            assert_eq!(node.owner_references().len(), 1);
        }
        let metrics = &run.controllers.context.metrics;
        let pool = controllers::karpenter::metrics::Metrics::total;
        assert_eq!(
            pool(&metrics.launched, &["default"]),
            3,
            "one launch each, no duplicates"
        );
        assert_eq!(pool(&metrics.registered, &["default"]), 3);
        assert_eq!(pool(&metrics.initialized, &["default"]), 3);

        for n in names {
            api.delete(n, &DeleteParams::default()).await.unwrap();
        }
        let nodes = run.nodes();
        eventually(WAIT, "NodeClaims, Nodes and instances gone", || async {
            api.list(&ListParams::default())
                .await
                .unwrap()
                .items
                .is_empty()
                && nodes
                    .list(&ListParams::default())
                    .await
                    .unwrap()
                    .items
                    .is_empty()
                && kwok.instances().is_empty()
        })
        .await;
        run.stop().await;
    })
    .await
    .expect("test timed out")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insufficient_capacity_gets_the_nodeclaim_deleted() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let (run, kwok) = Running::start(ProviderChoice::Kwok(Some(0)), true).await;
        let kwok = kwok.unwrap();
        run.nodeclaims()
            .create(&PostParams::default(), &kwok_nodeclaim("a"))
            .await
            .unwrap();
        let api = run.nodeclaims();
        eventually(WAIT, "the NodeClaim deleted", || async {
            api.get_opt("a").await.unwrap().is_none()
        })
        .await;
        assert!(kwok.instances().is_empty());
        assert_eq!(
            run.controllers.context.metrics.terminated_count(
                "insufficient_capacity",
                "default",
                ""
            ),
            1
        );
        assert!(run
            .nodes()
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty());
        run.stop().await;
    })
    .await
    .expect("test timed out")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_never_registers_gets_the_nodeclaim_deleted_after_the_ttl() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        // The fake provider launches instances but no Node ever joins.
        let fake = FakeCloudProvider::new(Arc::new(SeededIds::new(5)));
        let (run, _) = Running::start(ProviderChoice::Fake(fake.clone()), false).await;
        run.nodeclaims()
            .create(&PostParams::default(), &nodeclaim("a"))
            .await
            .unwrap();
        let api = run.nodeclaims();
        eventually(WAIT, "Registered=False NodeNotFound", || async {
            api.get_opt("a").await.unwrap().is_some_and(|nc| {
                nc.condition(REGISTERED)
                    .is_some_and(|c| c.reason == "NodeNotFound")
                    && nc.condition_is_true(LAUNCHED)
            })
        })
        .await;
        assert_eq!(fake.instances().len(), 1);
        // Let the controller's own cache catch up before the clock jumps: a 14-minute jump while
        // the cache still lags would outlive the 1-minute launch cache and the read-own-writes
        // wait, and the stale pass would launch again (the hazard spec §6.3 describes).
        let store = run.controllers.context.nodeclaims.clone();
        eventually(WAIT, "the controller's cache to show the launch", || {
            let store = store.clone();
            async move {
                store
                    .get(&kube::runtime::reflector::ObjectRef::new("a"))
                    .is_some_and(|nc| {
                        nc.condition(REGISTERED)
                            .is_some_and(|c| c.reason == "NodeNotFound")
                    })
            }
        })
        .await;
        assert_eq!(
            run.controllers.context.read_own_writes.gate(
                "a",
                store
                    .get(&kube::runtime::reflector::ObjectRef::new("a"))
                    .and_then(|nc| nc.metadata.resource_version.clone())
                    .as_deref()
            ),
            controllers::karpenter::read_own_writes::Gate::Proceed
        );
        run.clock.advance(SignedDuration::from_mins(14));
        run.controllers.resync();
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(
            !api.get("a").await.unwrap().is_deleting(),
            "still within the TTL"
        );
        run.clock.advance(SignedDuration::from_mins(2));
        run.controllers.resync();
        eventually(WAIT, "the NodeClaim deleted after the TTL", || async {
            api.get_opt("a").await.unwrap().is_none()
        })
        .await;
        assert!(
            fake.instances().is_empty(),
            "the instance was terminated, not leaked"
        );
        assert_eq!(
            run.controllers
                .context
                .metrics
                .terminated_count("liveness", "default", "on-demand"),
            1
        );
        run.stop().await;
    })
    .await
    .expect("test timed out")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_errors_on_every_call_never_leaks_and_deletion_still_completes() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let fake = FakeCloudProvider::new(Arc::new(SeededIds::new(5)));
        fake.set_error_on_every_call(Some(CloudProviderError::Other("cloud unavailable".into())));
        let (run, _) = Running::start(ProviderChoice::Fake(fake.clone()), false).await;
        run.nodeclaims()
            .create(&PostParams::default(), &nodeclaim("a"))
            .await
            .unwrap();
        let api = run.nodeclaims();
        eventually(WAIT, "Launched=False LaunchFailed", || async {
            api.get_opt("a").await.unwrap().is_some_and(|nc| {
                nc.condition(LAUNCHED).is_some_and(|c| {
                    c.reason == "LaunchFailed" && c.message.contains("cloud unavailable")
                })
            })
        })
        .await;
        let nc = api.get("a").await.unwrap();
        assert_eq!(nc.condition(READY).unwrap().status, "False");
        api.delete("a", &DeleteParams::default()).await.unwrap();
        eventually(WAIT, "the NodeClaim gone", || async {
            api.get_opt("a").await.unwrap().is_none()
        })
        .await;
        assert!(fake.instances().is_empty());
        run.stop().await;
    })
    .await
    .expect("test timed out")
}
