//! Deleting a CRD as kube-apiserver does it: the DELETE marks the CRD (deletion timestamp, the
//! `customresourcecleanup.apiextensions.k8s.io` finalizer, `Terminating` pending), the CRD
//! finalizer deletes its custom resources honouring their finalizers, refuses new ones while
//! it waits, and removes the CRD (and stops serving its resource) only when none is left.

use crate::http_support;

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use http_support::{gizmo_crd as crd, json as call, CRDS};
use serde_json::{json, Value};

const CRD: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.ex.com";
const GIZMOS: &str = "/apis/ex.com/v1/namespaces/default/gizmos";

fn gizmo(name: &str, finalizers: &[&str]) -> Value {
    json!({"apiVersion": "ex.com/v1", "kind": "Gizmo", "metadata": {"name": name, "finalizers": finalizers}})
}

fn terminating(crd: &Value) -> (String, String) {
    let condition = crd["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Terminating"))
        .cloned()
        .unwrap_or(Value::Null);
    (
        condition["status"].as_str().unwrap_or_default().to_string(),
        condition["reason"].as_str().unwrap_or_default().to_string(),
    )
}

async fn setup(server: &FakeApiServer) {
    let (status, answer) = call(server, Method::POST, CRDS, &crd()).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    for (name, finalizers) in [("held", vec!["ex.com/hold"]), ("free", vec![])] {
        let (status, answer) = call(server, Method::POST, GIZMOS, &gizmo(name, &finalizers)).await;
        assert_eq!(status, StatusCode::CREATED, "{answer}");
    }
}

#[tokio::test]
async fn a_crd_waits_for_its_custom_resources_finalizers() {
    let server = FakeApiServer::new();
    setup(&server).await;

    let (status, marked) = call(&server, Method::DELETE, CRD, &Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{marked}");
    assert_eq!(marked["kind"], "CustomResourceDefinition");
    assert!(marked["metadata"]["deletionTimestamp"].is_string());
    assert!(marked["metadata"]
        .get("deletionGracePeriodSeconds")
        .is_none());
    assert_eq!(
        marked["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );
    assert_eq!(
        terminating(&marked),
        ("True".into(), "InstanceDeletionPending".into())
    );

    // The free one is gone, the held one is being deleted, and the CRD waits for it.
    let (status, _) = call(
        &server,
        Method::GET,
        &format!("{GIZMOS}/free"),
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, held) = call(
        &server,
        Method::GET,
        &format!("{GIZMOS}/held"),
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(held["metadata"]["deletionTimestamp"].is_string(), "{held}");
    let (status, waiting) = call(&server, Method::GET, CRD, &Value::Null).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        terminating(&waiting),
        ("True".into(), "InstanceDeletionInProgress".into())
    );

    // No new custom resources meanwhile.
    let (status, refused) = call(&server, Method::POST, GIZMOS, &gizmo("late", &[])).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{refused}");
    assert_eq!(refused["reason"], "MethodNotAllowed");
    assert_eq!(
        refused["message"],
        "create not allowed while custom resource definition is terminating"
    );
    assert_eq!(
        refused["details"],
        json!({"group": "ex.com", "kind": "gizmos"})
    );

    // A second DELETE changes nothing.
    let (status, again) = call(&server, Method::DELETE, CRD, &Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(
        again["metadata"]["resourceVersion"],
        waiting["metadata"]["resourceVersion"]
    );

    // Releasing the last custom resource lets the CRD go, and its resource is no longer served.
    let (status, released) = http_support::call(
        &server,
        Method::PATCH,
        &format!("{GIZMOS}/held"),
        "application/merge-patch+json",
        br#"{"metadata":{"finalizers":null}}"#.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{released}");
    let (status, _) = call(&server, Method::GET, CRD, &Value::Null).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call(&server, Method::GET, GIZMOS, &Value::Null).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_crd_without_custom_resources_goes_at_once_and_a_dry_run_only_shows_the_mark() {
    let server = FakeApiServer::new();
    let (status, _) = call(&server, Method::POST, CRDS, &crd()).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, previewed) = call(
        &server,
        Method::DELETE,
        &format!("{CRD}?dryRun=All"),
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{previewed}");
    assert_eq!(
        terminating(&previewed),
        ("True".into(), "InstanceDeletionPending".into())
    );
    let (status, kept) = call(&server, Method::GET, CRD, &Value::Null).await;
    assert_eq!(status, StatusCode::OK);
    assert!(kept["metadata"].get("deletionTimestamp").is_none());

    let (status, marked) = call(&server, Method::DELETE, CRD, &Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{marked}");
    let (status, _) = call(&server, Method::GET, CRD, &Value::Null).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn crd_delete_preconditions_conflict_in_the_crd_registrys_words() {
    let server = FakeApiServer::new();
    let (status, created) = call(&server, Method::POST, CRDS, &crd()).await;
    assert_eq!(status, StatusCode::CREATED);
    let uid = created["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let (status, refused) = call(
        &server,
        Method::DELETE,
        CRD,
        &json!({"preconditions": {"uid": "wrong"}}),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert_eq!(
        refused["message"],
        format!("Operation cannot be fulfilled on customresourcedefinitions.apiextensions.k8s.io \"gizmos.ex.com\": Precondition failed: UID in precondition: wrong, UID in object meta: {uid}")
    );
    let (status, _) = call(&server, Method::GET, CRD, &Value::Null).await;
    assert_eq!(status, StatusCode::OK);
}
