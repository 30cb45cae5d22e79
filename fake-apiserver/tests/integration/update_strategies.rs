//! What a `PUT` does per kind, as each registry strategy decides: whether a `PUT` to a missing
//! object creates it (`AllowCreateOnUpdate`: `201`, else `404`) and whether a `PUT` without
//! `metadata.resourceVersion` is accepted (`AllowUnconditionalUpdate`: else `422` naming the
//! resource).

use crate::http_support;

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use http_support::json as call;
use rstest::rstest;
use serde_json::{json, Value};

/// A valid object of each kind, named `x` (the namespace comes from the path).
fn object(api_version: &str, kind: &str) -> Value {
    let mut object = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}});
    match kind {
        "Service" => object["spec"] = json!({"ports": [{"port": 80}]}),
        "Event" if api_version == "v1" => {
            object["involvedObject"] = json!({"kind": "Pod", "name": "p", "namespace": "default"});
            object["reason"] = json!("Tested");
        }
        "Event" => {
            object["eventTime"] = json!("2026-01-01T00:00:00.000000Z");
            object["reportingController"] = json!("example.com/tester");
            object["reportingInstance"] = json!("tester-1");
            object["action"] = json!("Test");
            object["type"] = json!("Normal");
            object["reason"] = json!("Tested");
            object["regarding"] = json!({"kind": "Pod", "name": "p", "namespace": "default"});
        }
        "RoleBinding" => {
            object["roleRef"] = json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"});
        }
        "PodDisruptionBudget" => object["spec"] = json!({"minAvailable": 1}),
        _ => {}
    }
    object
}

#[rstest]
#[case::lease(
    "/apis/coordination.k8s.io/v1/namespaces/default/leases",
    "coordination.k8s.io/v1",
    "Lease",
    true
)]
#[case::service("/api/v1/namespaces/default/services", "v1", "Service", true)]
#[case::endpoints("/api/v1/namespaces/default/endpoints", "v1", "Endpoints", true)]
#[case::event("/api/v1/namespaces/default/events", "v1", "Event", true)]
#[case::events_k8s_io(
    "/apis/events.k8s.io/v1/namespaces/default/events",
    "events.k8s.io/v1",
    "Event",
    true
)]
#[case::limit_range("/api/v1/namespaces/default/limitranges", "v1", "LimitRange", true)]
#[case::role(
    "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
    "rbac.authorization.k8s.io/v1",
    "Role",
    true
)]
#[case::role_binding(
    "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
    "rbac.authorization.k8s.io/v1",
    "RoleBinding",
    true
)]
#[case::cluster_role(
    "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "rbac.authorization.k8s.io/v1",
    "ClusterRole",
    true
)]
#[case::configmap("/api/v1/namespaces/default/configmaps", "v1", "ConfigMap", false)]
#[case::secret("/api/v1/namespaces/default/secrets", "v1", "Secret", false)]
#[case::service_account(
    "/api/v1/namespaces/default/serviceaccounts",
    "v1",
    "ServiceAccount",
    false
)]
#[case::pdb(
    "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
    "policy/v1",
    "PodDisruptionBudget",
    false
)]
#[tokio::test]
async fn a_put_to_a_missing_object_creates_it_where_the_strategy_allows(
    #[case] collection: &str,
    #[case] api_version: &str,
    #[case] kind: &str,
    #[case] creates: bool,
) {
    let server = FakeApiServer::new();
    let mut body = object(api_version, kind);
    // A resourceVersion in the body does not stop the create (storage clears it).
    body["metadata"]["resourceVersion"] = json!("12345");
    let uri = format!("{collection}/x");
    let (status, answer) = call(&server, Method::PUT, &uri, &body).await;
    let (read, stored) = call(&server, Method::GET, &uri, &Value::Null).await;
    if creates {
        assert_eq!(status, StatusCode::CREATED, "{answer}");
        assert_eq!(answer["kind"], kind);
        assert!(answer["metadata"]["uid"].is_string(), "{answer}");
        assert_ne!(answer["metadata"]["resourceVersion"], "12345");
        assert_eq!(read, StatusCode::OK);
        assert_eq!(stored["metadata"]["uid"], answer["metadata"]["uid"]);
        // The next PUT updates what the first one created.
        let mut again = stored.clone();
        again["metadata"]["labels"] = json!({"second": "put"});
        let (status, updated) = call(&server, Method::PUT, &uri, &again).await;
        assert_eq!(status, StatusCode::OK, "{updated}");
        assert_eq!(updated["metadata"]["uid"], answer["metadata"]["uid"]);
        assert_eq!(updated["metadata"]["labels"]["second"], "put");
    } else {
        assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
        assert_eq!(answer["reason"], "NotFound");
        assert_eq!(read, StatusCode::NOT_FOUND);
    }
}

/// A dry-run `PUT` that would create stores nothing and still answers `201`.
#[tokio::test]
async fn a_dry_run_create_on_update_stores_nothing() {
    let server = FakeApiServer::new();
    let uri = "/apis/coordination.k8s.io/v1/namespaces/default/leases/x?dryRun=All";
    let revision = server.revision();
    let (status, answer) = call(
        &server,
        Method::PUT,
        uri,
        &object("coordination.k8s.io/v1", "Lease"),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(server.revision(), revision);
    let (read, _) = call(
        &server,
        Method::GET,
        "/apis/coordination.k8s.io/v1/namespaces/default/leases/x",
        &Value::Null,
    )
    .await;
    assert_eq!(read, StatusCode::NOT_FOUND);
}

#[rstest]
#[case::lease(
    "/apis/coordination.k8s.io/v1/namespaces/default/leases",
    "coordination.k8s.io/v1",
    "Lease",
    Some("leases.coordination.k8s.io")
)]
#[case::pdb(
    "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
    "policy/v1",
    "PodDisruptionBudget",
    Some("poddisruptionbudgets.policy")
)]
#[case::configmap("/api/v1/namespaces/default/configmaps", "v1", "ConfigMap", None)]
#[case::role(
    "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
    "rbac.authorization.k8s.io/v1",
    "Role",
    None
)]
#[tokio::test]
async fn an_update_without_a_resource_version_is_refused_where_the_strategy_says(
    #[case] collection: &str,
    #[case] api_version: &str,
    #[case] kind: &str,
    #[case] refused_as: Option<&str>,
) {
    let server = FakeApiServer::new();
    let (created, answer) = call(
        &server,
        Method::POST,
        collection,
        &object(api_version, kind),
    )
    .await;
    assert_eq!(created, StatusCode::CREATED, "{answer}");
    let mut body = object(api_version, kind);
    body["metadata"]["labels"] = json!({"unconditional": "yes"});
    let (status, answer) = call(&server, Method::PUT, &format!("{collection}/x"), &body).await;
    match refused_as {
        Some(resource) => {
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
            assert_eq!(
                answer["message"],
                format!("{resource} \"x\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update")
            );
            let plural = resource.split('.').next().unwrap_or_default();
            assert_eq!(answer["details"]["kind"], plural);
        }
        None => {
            assert_eq!(status, StatusCode::OK, "{answer}");
            assert_eq!(answer["metadata"]["labels"]["unconditional"], "yes");
        }
    }
}

/// What a write through `/status` keeps besides the status, per kind (its status strategy's
/// `PrepareForUpdate`): most kinds keep the request's metadata and only take back their spec;
/// a Deployment takes back its labels, a Pod its owner references; a custom resource keeps
/// nothing but the status.
#[rstest]
#[case::service("/api/v1/namespaces/default/services", "v1", "Service", true, true)]
#[case::deployment(
    "/apis/apps/v1/namespaces/default/deployments",
    "apps/v1",
    "Deployment",
    false,
    true
)]
#[case::pdb(
    "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
    "policy/v1",
    "PodDisruptionBudget",
    true,
    true
)]
#[tokio::test]
async fn a_status_write_keeps_what_the_status_strategy_keeps(
    #[case] collection: &str,
    #[case] api_version: &str,
    #[case] kind: &str,
    #[case] keeps_labels: bool,
    #[case] keeps_annotations: bool,
) {
    let server = FakeApiServer::new();
    let mut body = object(api_version, kind);
    if kind == "Deployment" {
        body["spec"] = json!({"selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}});
    }
    let (created, answer) = call(&server, Method::POST, collection, &body).await;
    assert_eq!(created, StatusCode::CREATED, "{answer}");
    // Read back: an in-process controller (the disruption controller) may have written since.
    let (_, stored) = call(
        &server,
        Method::GET,
        &format!("{collection}/x"),
        &Value::Null,
    )
    .await;
    let spec_before = stored["spec"].clone();
    let mut write = stored.clone();
    write["metadata"]["labels"] = json!({"via": "status"});
    write["metadata"]["annotations"] = json!({"via": "status"});
    write["spec"]["changedViaStatus"] = json!(true);
    let (status, answer) = call(
        &server,
        Method::PUT,
        &format!("{collection}/x/status"),
        &write,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["spec"], spec_before,
        "the spec is never written through /status"
    );
    assert_eq!(
        answer["metadata"]["labels"]["via"].as_str() == Some("status"),
        keeps_labels,
        "{answer}"
    );
    assert_eq!(
        answer["metadata"]["annotations"]["via"].as_str() == Some("status"),
        keeps_annotations,
        "{answer}"
    );
}

#[tokio::test]
async fn a_pod_status_write_keeps_labels_but_not_owner_references() {
    let server = FakeApiServer::new();
    let pods = "/api/v1/namespaces/default/pods";
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}]}});
    let (created, stored) = call(&server, Method::POST, pods, &pod).await;
    assert_eq!(created, StatusCode::CREATED, "{stored}");
    let mut write = stored.clone();
    write["metadata"]["labels"] = json!({"via": "status"});
    write["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "ConfigMap",
        "name": "owner", "uid": "00000000-0000-0000-0000-000000000001"}]);
    write["status"]["phase"] = json!("Running");
    let (status, answer) = call(&server, Method::PUT, &format!("{pods}/p/status"), &write).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["status"]["phase"], "Running");
    assert_eq!(answer["metadata"]["labels"], json!({"via": "status"}));
    assert!(
        answer["metadata"].get("ownerReferences").is_none(),
        "{answer}"
    );
}

/// `podTemplateStrategy`: a PodTemplate is created at generation 1 and its generation moves
/// when its `template` changes, not when only its metadata does.
#[tokio::test]
async fn a_pod_template_tracks_its_generation() {
    let server = FakeApiServer::new();
    let uri = "/api/v1/namespaces/default/podtemplates";
    let template = json!({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"},
        "template": {"spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}});
    let (status, created) = call(&server, Method::POST, uri, &template).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["metadata"]["generation"], 1);

    let mut relabelled = created.clone();
    relabelled["metadata"]["labels"] = json!({"a": "b"});
    let (status, relabelled) = call(&server, Method::PUT, &format!("{uri}/t"), &relabelled).await;
    assert_eq!(status, StatusCode::OK, "{relabelled}");
    assert_eq!(relabelled["metadata"]["generation"], 1);

    let mut changed = relabelled.clone();
    changed["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    let (status, changed) = call(&server, Method::PUT, &format!("{uri}/t"), &changed).await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["metadata"]["generation"], 2);
}
