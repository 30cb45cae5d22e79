//! Bad input: NodeClaims without requirements or resources, Nodes with empty or duplicate
//! provider ids, odd requirements, and a provider that fails every call. Clear errors and
//! conditions, never a panic.

use crate::karpenter_support;

use std::sync::Arc;

use controllers::ids::SeededIds;
use controllers::karpenter::cloudprovider::kwok::KwokCloudProvider;
use controllers::karpenter::cloudprovider::CloudProviderError;
use controllers::karpenter::context::Config;
use controllers::karpenter::types::condition_types::*;
use controllers::karpenter::types::*;
use karpenter_support::*;
use kube::api::{DeleteParams, ListParams};
use kube::ResourceExt;
use serde_json::json;

async fn within<F: std::future::Future<Output = ()>>(f: F) {
    tokio::time::timeout(TEST_TIMEOUT, f)
        .await
        .expect("test timed out");
}

fn bare(name: &str) -> NodeClaim {
    NodeClaim::new(name, NodeClaimSpec::default())
}

#[tokio::test]
async fn a_nodeclaim_without_requirements_or_resources_is_accepted_by_the_crd() {
    within(async {
        let env = Env::fake().await;
        // Straight JSON, as a user might apply it.
        let created = env
            .server
            .apply_manifest(json!({"apiVersion": "karpenter.sh/v1beta1", "kind": "NodeClaim", "metadata": {"name": "bare"}, "spec": {}}))
            .expect("accepted");
        assert_eq!(created["metadata"]["name"], "bare");
        let nc = env.get("bare").await.unwrap();
        assert!(nc.spec.requirements.is_empty() && nc.spec.resources.is_empty());
    })
    .await
}

#[tokio::test]
async fn kwok_rejects_a_nodeclaim_without_an_instance_type_requirement_with_a_clear_condition() {
    within(async {
        let ids = Arc::new(SeededIds::new(3));
        let clock = controllers::clock::ManualClock::default();
        let client = server(&clock).client();
        let kwok = KwokCloudProvider::new(client, ids);
        let mut env = Env::with_provider(Arc::new(kwok.clone()), None, Config::default()).await;
        env.create(&bare("bare")).await;
        let err = env.reconcile("bare").await.expect_err("launch fails");
        assert!(
            err.to_string()
                .contains("instance type requirement not found"),
            "{err}"
        );
        let nc = env.get("bare").await.unwrap();
        let launched = nc.condition(LAUNCHED).unwrap();
        assert_eq!(
            (launched.status.as_str(), launched.reason.as_str()),
            ("False", "LaunchFailed")
        );
        assert_eq!(launched.message, "instance type requirement not found");
        assert_eq!(cond(&nc, READY).0, "False");
        assert!(kwok.instances().is_empty());
    })
    .await
}

#[tokio::test]
async fn the_fake_provider_launches_a_nodeclaim_without_requirements() {
    within(async {
        let mut env = Env::fake().await;
        env.create(&bare("bare")).await;
        env.reconcile("bare").await.unwrap();
        let nc = env.get("bare").await.unwrap();
        assert!(nc.condition_is_true(LAUNCHED));
        assert!(!nc.label(INSTANCE_TYPE_LABEL).is_empty());
    })
    .await
}

#[tokio::test]
async fn odd_requirements_and_impossible_requests_do_not_panic() {
    within(async {
        let mut env = Env::fake().await;
        let mut nc = bare("odd");
        nc.spec.requirements = vec![
            NodeSelectorRequirementWithMinValues {
                key: "example.com/gen".into(),
                operator: "Gt".into(),
                values: vec!["not-a-number".into()],
                min_values: None,
            },
            NodeSelectorRequirementWithMinValues {
                key: "example.com/gen".into(),
                operator: "Lt".into(),
                values: vec![],
                min_values: None,
            },
            NodeSelectorRequirementWithMinValues {
                key: "example.com/x".into(),
                operator: "Sideways".into(),
                values: vec!["a".into()],
                min_values: Some(-1),
            },
            NodeSelectorRequirementWithMinValues {
                key: "example.com/size".into(),
                operator: "Gt".into(),
                values: vec![i64::MAX.to_string()],
                min_values: None,
            },
        ];
        nc.spec.resources.requests = [(
            "cpu".to_string(),
            k8s_openapi::apimachinery::pkg::api::resource::Quantity("garbage".into()),
        )]
        .into();
        env.create(&nc).await;
        let result = env.reconcile("odd").await;
        // Nothing fits an unparsable request: insufficient capacity deletes the NodeClaim.
        assert!(result.is_ok(), "{result:?}");
        assert!(env.get("odd").await.unwrap().is_deleting());
    })
    .await
}

#[tokio::test]
async fn a_node_with_an_empty_provider_id_matches_nothing() {
    within(async {
        let mut env = Env::fake().await;
        env.provider().set_allowed_create_calls(Some(0));
        env.create(&nodeclaim("a")).await;
        env.create_node(&node("empty", "", true, &[])).await;
        let _ = env.reconcile("a").await;
        let nc = env.get("a").await.unwrap();
        assert_eq!(
            cond(&nc, REGISTERED),
            ("False".into(), "NotLaunched".into())
        );
        assert!(env.node("empty").await.owner_references().is_empty());
    })
    .await
}

#[tokio::test]
async fn duplicate_provider_ids_are_reported_and_no_node_is_claimed() {
    within(async {
        let mut env = Env::fake().await;
        env.create(&nodeclaim("a")).await;
        env.reconcile("a").await.unwrap();
        let pid = env.get("a").await.unwrap().provider_id().to_string();
        env.create_node(&node("n1", &pid, true, &[])).await;
        env.create_node(&node("n2", &pid, true, &[])).await;
        env.reconcile("a").await.unwrap();
        let nc = env.get("a").await.unwrap();
        assert_eq!(
            cond(&nc, REGISTERED),
            ("False".into(), "MultipleNodesFound".into())
        );
        assert_eq!(
            nc.condition(REGISTERED).unwrap().message,
            "Invariant violated, matched multiple nodes"
        );
        assert_eq!(
            cond(&nc, INITIALIZED),
            ("False".into(), "NodeNotFound".into())
        );
        for n in ["n1", "n2"] {
            assert!(
                env.node(n).await.owner_references().is_empty(),
                "{n} not claimed"
            );
        }
        // One goes away: the other registers.
        env.nodes()
            .delete("n2", &DeleteParams::default())
            .await
            .unwrap();
        env.reconcile("a").await.unwrap();
        assert!(env.get("a").await.unwrap().condition_is_true(REGISTERED));
    })
    .await
}

#[tokio::test]
async fn a_provider_failing_every_call_gives_errors_and_conditions_and_termination_still_finishes()
{
    within(async {
        let mut env = Env::fake().await;
        env.provider()
            .set_error_on_every_call(Some(CloudProviderError::Other("x".repeat(500))));
        env.create(&nodeclaim("a")).await;
        let err = env.reconcile("a").await.expect_err("launch error returned");
        assert!(err.to_string().contains("launching nodeclaim"), "{err}");
        let nc = env.get("a").await.unwrap();
        let launched = nc.condition(LAUNCHED).unwrap();
        assert_eq!(launched.reason, "LaunchFailed");
        assert_eq!(launched.message.len(), 303, "truncated to 300 bytes + ...");
        // Never launched: termination has no instance to delete and drops the finalizer.
        env.nodeclaims()
            .delete("a", &DeleteParams::default())
            .await
            .unwrap();
        env.terminate("a").await.unwrap();
        assert!(env.get("a").await.is_none());
    })
    .await
}

#[tokio::test]
async fn a_failing_cloud_delete_keeps_the_finalizer_until_it_succeeds() {
    within(async {
        let mut env = Env::fake().await;
        env.create(&nodeclaim("a")).await;
        env.reconcile("a").await.unwrap();
        env.nodeclaims()
            .delete("a", &DeleteParams::default())
            .await
            .unwrap();
        env.provider()
            .set_error_on_every_call(Some(CloudProviderError::Other("api throttled".into())));
        let err = env.terminate("a").await.expect_err("delete failed");
        assert!(
            err.to_string()
                .contains("terminating cloudprovider instance"),
            "{err}"
        );
        assert!(env.get("a").await.unwrap().has_termination_finalizer());
        assert_eq!(env.provider().instances().len(), 1);
        env.provider().set_error_on_every_call(None);
        env.terminate("a").await.unwrap();
        assert!(env.get("a").await.is_none());
        assert!(env.provider().instances().is_empty());
        assert!(env
            .nodeclaims()
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .iter()
            .all(|n| n.name_any() != "a"));
    })
    .await
}
