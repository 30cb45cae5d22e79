//! `StorageObjectInUseProtection` and the PVC / PV protection controllers through the API: new
//! claims and volumes carry their protection finalizer; a deleted claim goes once no scheduled
//! pod uses it, a deleted volume once it is not bound; a bare API server (no controllers)
//! leaves them `Terminating`, as a real one does.

use crate::http_support::{self, json as call};

use axum::http::{Method, StatusCode};
use fake_apiserver::controllers::ControllerConfig;
use fake_apiserver::FakeApiServer;
use serde_json::{json, Value};

const CLAIMS: &str = "/api/v1/namespaces/default/persistentvolumeclaims";
const PODS: &str = "/api/v1/namespaces/default/pods";
const VOLUMES: &str = "/api/v1/persistentvolumes";

async fn create(server: &FakeApiServer, uri: &str, object: Value) -> Value {
    let (status, answer) = call(server, Method::POST, uri, &object).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    answer
}

fn claim(name: &str) -> Value {
    json!({"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}}}})
}

fn pod_using(name: &str, claim: &str, node: Option<&str>) -> Value {
    let mut pod = json!({"metadata": {"name": name}, "spec": {
        "containers": [{"name": "app", "image": "nginx"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}});
    if let Some(node) = node {
        pod["spec"]["nodeName"] = json!(node);
    }
    pod
}

async fn get(server: &FakeApiServer, uri: &str) -> (StatusCode, Value) {
    call(server, Method::GET, uri, &Value::Null).await
}

async fn delete(server: &FakeApiServer, uri: &str) -> Value {
    let (status, answer) = call(server, Method::DELETE, uri, &Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

#[tokio::test]
async fn a_claim_in_use_waits_for_its_pod_and_an_unused_one_goes() {
    let server = FakeApiServer::new();
    let created = create(&server, CLAIMS, claim("data")).await;
    assert_eq!(
        created["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    create(&server, CLAIMS, claim("spare")).await;
    // An unscheduled pod does not hold a claim; a scheduled one does.
    create(&server, PODS, pod_using("pending", "spare", None)).await;
    create(&server, PODS, pod_using("web", "data", Some("node-1"))).await;

    delete(&server, &format!("{CLAIMS}/spare")).await;
    let (status, _) = get(&server, &format!("{CLAIMS}/spare")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let deleting = delete(&server, &format!("{CLAIMS}/data")).await;
    assert!(
        deleting["metadata"]["deletionTimestamp"].is_string(),
        "{deleting}"
    );
    let (status, kept) = get(&server, &format!("{CLAIMS}/data")).await;
    assert_eq!(status, StatusCode::OK, "in use: {kept}");
    assert_eq!(
        kept["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );

    // The pod goes (at once: grace period 0), and the claim with it.
    let (status, _) = http_support::call(
        &server,
        Method::DELETE,
        &format!("{PODS}/web"),
        "application/json",
        br#"{"gracePeriodSeconds":0}"#.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, left) = get(&server, &format!("{CLAIMS}/data")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{left}");
}

#[tokio::test]
async fn a_volume_waits_while_bound() {
    let server = FakeApiServer::new();
    let created = create(
        &server,
        VOLUMES,
        json!({"metadata": {"name": "pv1"}, "spec": {"capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}}),
    )
    .await;
    assert_eq!(
        created["metadata"]["finalizers"],
        json!(["kubernetes.io/pv-protection"])
    );
    let mut bound = created.clone();
    bound["status"] = json!({"phase": "Bound"});
    let (status, bound) = call(
        &server,
        Method::PUT,
        &format!("{VOLUMES}/pv1/status"),
        &bound,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{bound}");

    delete(&server, &format!("{VOLUMES}/pv1")).await;
    let (status, kept) = get(&server, &format!("{VOLUMES}/pv1")).await;
    assert_eq!(status, StatusCode::OK, "bound: {kept}");
    let mut released = kept.clone();
    released["status"] = json!({"phase": "Released"});
    let (status, answer) = call(
        &server,
        Method::PUT,
        &format!("{VOLUMES}/pv1/status"),
        &released,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, left) = get(&server, &format!("{VOLUMES}/pv1")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{left}");
}

#[tokio::test]
async fn without_controllers_a_deleted_claim_stays_terminating() {
    let server = FakeApiServer::builder()
        .controllers(ControllerConfig::none())
        .build();
    create(&server, CLAIMS, claim("data")).await;
    delete(&server, &format!("{CLAIMS}/data")).await;
    let (status, kept) = get(&server, &format!("{CLAIMS}/data")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(kept["metadata"]["deletionTimestamp"].is_string(), "{kept}");
}
