//! The `LimitRanger` admission plugin through the API: a LimitRange's defaults land on new
//! pods (with the annotation saying so), its bounds refuse pods and claims with the real
//! `403`, an update of a claim is held to them, and a pod update is not looked at.

use crate::http_support::{self, json as call};

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use serde_json::{json, Value};

const LIMIT_RANGES: &str = "/api/v1/namespaces/default/limitranges";
const PODS: &str = "/api/v1/namespaces/default/pods";
const CLAIMS: &str = "/api/v1/namespaces/default/persistentvolumeclaims";

async fn server_with(limits: Value) -> FakeApiServer {
    let server = FakeApiServer::new();
    let (status, answer) = call(
        &server,
        Method::POST,
        LIMIT_RANGES,
        &json!({"metadata": {"name": "limits"}, "spec": {"limits": limits}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    server
}

fn pod(name: &str, resources: Value) -> Value {
    json!({"metadata": {"name": name}, "spec": {"containers": [
        {"name": "app", "image": "nginx", "resources": resources}]}})
}

fn claim(name: &str, storage: &str) -> Value {
    json!({"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": storage}}}})
}

/// A default limit alone also becomes the default request (the LimitRange's own defaulting);
/// a new pod gets both, and the annotation names them.
#[tokio::test]
async fn a_new_pod_gets_the_defaults_and_the_annotation() {
    let server =
        server_with(json!([{"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"}}]))
            .await;
    let (_, stored) = call(
        &server,
        Method::GET,
        &format!("{LIMIT_RANGES}/limits"),
        &Value::Null,
    )
    .await;
    assert_eq!(
        stored["spec"]["limits"][0]["defaultRequest"],
        json!({"cpu": "500m", "memory": "256Mi"})
    );
    let (status, created) = call(
        &server,
        Method::POST,
        PODS,
        &pod("web", json!({"requests": {"cpu": "100m"}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(
        created["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "500m", "memory": "256Mi"},
               "requests": {"cpu": "100m", "memory": "256Mi"}})
    );
    assert_eq!(
        created["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: memory request for container app; cpu, memory limit for container app"
    );
    // Another namespace has no LimitRange: nothing is set.
    let (status, elsewhere) = call(
        &server,
        Method::POST,
        "/api/v1/namespaces/kube-public/pods",
        &pod("web", json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{elsewhere}");
    assert!(
        elsewhere["spec"]["containers"][0]
            .get("resources")
            .is_none_or(|r| r == &json!({})),
        "{elsewhere}"
    );
    assert!(
        elsewhere["metadata"].get("annotations").is_none(),
        "{elsewhere}"
    );
}

/// Bounds refuse a pod with the real `403`; the messages of one LimitRange come together.
#[tokio::test]
async fn a_pod_out_of_bounds_is_forbidden() {
    let server = server_with(json!([
        {"type": "Container", "max": {"cpu": "1"}, "min": {"memory": "64Mi"}},
        {"type": "Pod", "max": {"memory": "1Gi"}}
    ]))
    .await;
    let (status, answer) = call(
        &server,
        Method::POST,
        PODS,
        &pod("big", json!({"limits": {"cpu": "2", "memory": "2Gi"}})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert_eq!(answer["reason"], "Forbidden");
    assert_eq!(
        answer["message"],
        "pods \"big\" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, \
         maximum memory usage per Pod is 1Gi, but limit is 2Gi]"
    );
    assert_eq!(answer["details"], json!({"name": "big", "kind": "pods"}));
    let (status, _) = call(&server, Method::GET, &format!("{PODS}/big"), &Value::Null).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing is stored");

    // Within bounds (the default limit from `max` fills the missing cpu limit).
    let (status, created) = call(
        &server,
        Method::POST,
        PODS,
        &pod(
            "ok",
            json!({"requests": {"memory": "128Mi"}, "limits": {"memory": "512Mi"}}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(
        created["spec"]["containers"][0]["resources"]["limits"]["cpu"],
        "1"
    );

    // A pod update is not looked at, even once the LimitRange is tighter.
    let (_, mut range) = call(
        &server,
        Method::GET,
        &format!("{LIMIT_RANGES}/limits"),
        &Value::Null,
    )
    .await;
    range["spec"]["limits"][1]["max"]["memory"] = json!("100Mi");
    let (status, answer) = call(
        &server,
        Method::PUT,
        &format!("{LIMIT_RANGES}/limits"),
        &range,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, answer) = http_support::call(
        &server,
        Method::PATCH,
        &format!("{PODS}/ok"),
        "application/merge-patch+json",
        br#"{"metadata":{"labels":{"a":"b"}}}"#.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
}

/// A claim's storage request is held to the `PersistentVolumeClaim` item on create and update
/// (a status write is not looked at).
#[tokio::test]
async fn a_claim_out_of_bounds_is_forbidden_on_create_and_update() {
    let server = server_with(json!([{"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}])).await;
    let (status, answer) = call(&server, Method::POST, CLAIMS, &claim("tiny", "500Mi")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert_eq!(
        answer["message"],
        "persistentvolumeclaims \"tiny\" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"
    );
    let (status, created) = call(&server, Method::POST, CLAIMS, &claim("data", "5Gi")).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    // Bound (only a bound claim's request may change).
    let mut bound = created.clone();
    bound["status"] = json!({"phase": "Bound", "capacity": {"storage": "5Gi"}});
    let (status, bound) = call(
        &server,
        Method::PUT,
        &format!("{CLAIMS}/data/status"),
        &bound,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{bound}");
    let mut grown = bound.clone();
    grown["spec"]["resources"]["requests"]["storage"] = json!("20Gi");
    let (status, answer) = call(&server, Method::PUT, &format!("{CLAIMS}/data"), &grown).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert_eq!(
        answer["message"],
        "persistentvolumeclaims \"data\" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"
    );
}
