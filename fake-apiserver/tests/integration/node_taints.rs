//! `TaintNodesByCondition` and the node lifecycle controller's tainting pass through the API: a
//! new Node is created with `node.kubernetes.io/not-ready:NoSchedule`, which stays on a server
//! without controllers and follows the Node's conditions (and `spec.unschedulable`) with them.

use crate::http_support::{self, json as call};

use axum::http::{Method, StatusCode};
use fake_apiserver::controllers::ControllerConfig;
use fake_apiserver::FakeApiServer;
use serde_json::{json, Value};

const NODES: &str = "/api/v1/nodes";

async fn merge(server: &FakeApiServer, uri: &str, patch: Value) -> Value {
    let (status, answer) = http_support::call(
        server,
        Method::PATCH,
        uri,
        "application/merge-patch+json",
        patch.to_string().into_bytes(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

async fn taint_keys(server: &FakeApiServer, name: &str) -> Vec<String> {
    let (status, node) = call(
        server,
        Method::GET,
        &format!("{NODES}/{name}"),
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{node}");
    node["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            format!(
                "{}:{}",
                t["key"].as_str().unwrap_or_default(),
                t["effect"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

#[tokio::test]
async fn a_new_node_is_created_not_ready_and_keeps_it_without_controllers() {
    let server = FakeApiServer::builder()
        .controllers(ControllerConfig::none())
        .build();
    let (status, created) = call(
        &server,
        Method::POST,
        NODES,
        &json!({"metadata": {"name": "n1"}, "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(
        created["spec"]["taints"],
        json!([{"key": "gpu", "effect": "NoSchedule"},
               {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}])
    );
    // Nobody looks at its conditions: the taint stays, even once the Node is Ready.
    merge(
        &server,
        &format!("{NODES}/n1/status"),
        json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
    )
    .await;
    assert_eq!(
        taint_keys(&server, "n1").await,
        ["gpu:NoSchedule", "node.kubernetes.io/not-ready:NoSchedule"]
    );
    // An update is not a create: a taint removed by a client stays removed.
    merge(
        &server,
        &format!("{NODES}/n1"),
        json!({"spec": {"taints": null}}),
    )
    .await;
    assert!(taint_keys(&server, "n1").await.is_empty());
}

#[tokio::test]
async fn the_taints_follow_the_conditions() {
    let server = FakeApiServer::new();
    let (status, created) = call(
        &server,
        Method::POST,
        NODES,
        &json!({"metadata": {"name": "n1"}, "status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    // A Node created NotReady keeps the admission's taint (no timeAdded: the plugin's own).
    let (_, node) = call(&server, Method::GET, &format!("{NODES}/n1"), &Value::Null).await;
    assert_eq!(
        node["spec"]["taints"],
        json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}])
    );

    // Ready: the taint goes.
    merge(
        &server,
        &format!("{NODES}/n1/status"),
        json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
    )
    .await;
    assert!(taint_keys(&server, "n1").await.is_empty());

    // Unreachable with disk pressure: both taints, stamped.
    merge(
        &server,
        &format!("{NODES}/n1/status"),
        json!({"status": {"conditions": [{"type": "Ready", "status": "Unknown"}, {"type": "DiskPressure", "status": "True"}]}}),
    )
    .await;
    let (_, node) = call(&server, Method::GET, &format!("{NODES}/n1"), &Value::Null).await;
    let taints = node["spec"]["taints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let keys: Vec<&str> = taints.iter().filter_map(|t| t["key"].as_str()).collect();
    assert_eq!(
        keys,
        [
            "node.kubernetes.io/unreachable",
            "node.kubernetes.io/disk-pressure"
        ]
    );
    assert!(
        taints
            .iter()
            .all(|t| t["timeAdded"].is_string() && t["effect"] == "NoSchedule"),
        "{node}"
    );

    // Cordoned: the unschedulable taint.
    merge(
        &server,
        &format!("{NODES}/n1"),
        json!({"spec": {"unschedulable": true}}),
    )
    .await;
    assert!(taint_keys(&server, "n1")
        .await
        .contains(&"node.kubernetes.io/unschedulable:NoSchedule".to_string()));
}

/// A Node that reports no condition yet loses the admission's taint at once (upstream's pass
/// derives taints only from conditions present).
#[tokio::test]
async fn a_node_without_conditions_loses_the_not_ready_taint() {
    let server = FakeApiServer::new();
    let (status, _) = call(
        &server,
        Method::POST,
        NODES,
        &json!({"metadata": {"name": "n1"}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(taint_keys(&server, "n1").await.is_empty());
}
