//! Pod updates that leave the spec as it was. The server skips the spec checks of such an update
//! only when it knows the stored spec passed them (it was created or last written through the
//! checks, or carried over unchanged from such a version); a pod stored without them (loaded
//! from saved state) is checked again on every update, and is refused as a real server refuses it.

use crate::http_support;

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use http_support::json as call;
use rstest::rstest;
use serde_json::{json, Value};

const PODS: &str = "/api/v1/namespaces/default/pods";
const POD: &str = "/api/v1/namespaces/default/pods/web";

fn pod(container_name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": container_name, "image": "nginx"}]}
    })
}

/// The causes' fields of a 422, in order.
fn fields(answer: &Value) -> Vec<String> {
    answer["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c["field"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A server holding `web` with this container name: created through the API, or loaded from
/// saved state as it is (the state's objects are stored without the kind's checks, as
/// restoring etcd would). The loaded pod is one a server created and defaulted, renamed after.
async fn server_with(container_name: &str, through_the_api: bool) -> FakeApiServer {
    let server = FakeApiServer::new();
    if through_the_api {
        let (status, answer) = call(&server, Method::POST, PODS, &pod(container_name)).await;
        assert_eq!(status, StatusCode::CREATED, "{answer}");
        return server;
    }
    let (status, answer) = call(&server, Method::POST, PODS, &pod("web")).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    http_support::reloaded_with(&server, "/pods", |pod| {
        pod["spec"]["containers"][0]["name"] = json!(container_name);
    })
}

/// The stored pod with a new label, sent back whole (the spec as read).
async fn relabelled(server: &FakeApiServer, value: &str) -> Value {
    let (status, mut current) = call(server, Method::GET, POD, &Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{current}");
    current["metadata"]["labels"] = json!({"round": value});
    current
}

/// Writes the pod's status through the status subresource (which does not check the spec).
async fn write_status(server: &FakeApiServer) {
    let (_, mut current) = call(server, Method::GET, POD, &Value::Null).await;
    current["status"] = json!({"phase": "Running"});
    let (status, answer) = call(server, Method::PUT, &format!("{POD}/status"), &current).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
}

#[rstest]
#[case::created_valid("web", true, StatusCode::OK)]
#[case::loaded_valid("web", false, StatusCode::OK)]
#[case::loaded_invalid("Bad_Name", false, StatusCode::UNPROCESSABLE_ENTITY)]
#[tokio::test]
async fn an_update_keeping_the_spec_is_checked_unless_the_spec_is_known_valid(
    #[case] container_name: &str,
    #[case] through_the_api: bool,
    #[case] expected: StatusCode,
) {
    let server = server_with(container_name, through_the_api).await;
    // Twice: the first write's outcome decides what the second may take as known.
    for round in ["1", "2"] {
        let body = relabelled(&server, round).await;
        let (status, answer) = call(&server, Method::PUT, POD, &body).await;
        assert_eq!(status, expected, "round {round}: {answer}");
        if expected == StatusCode::UNPROCESSABLE_ENTITY {
            assert_eq!(fields(&answer), ["spec.containers[0].name"], "{answer}");
        }
        // A merge patch of a label goes through the same checks.
        let patch = json!({"metadata": {"labels": {"patched": round}}});
        let (status, answer) = http_support::call(
            &server,
            Method::PATCH,
            POD,
            "application/merge-patch+json",
            patch.to_string().into_bytes(),
        )
        .await;
        assert_eq!(status, expected, "round {round}: {answer}");
    }
}

#[tokio::test]
async fn a_status_write_carries_no_knowledge_it_did_not_have() {
    // Loaded invalid, then its status written (a status write does not check the spec): the
    // next spec-keeping update is still checked.
    let server = server_with("Bad_Name", false).await;
    write_status(&server).await;
    let body = relabelled(&server, "after-status").await;
    let (status, answer) = call(&server, Method::PUT, POD, &body).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert_eq!(fields(&answer), ["spec.containers[0].name"]);
}

#[tokio::test]
async fn a_spec_change_after_known_valid_writes_is_checked() {
    let server = server_with("web", true).await;
    write_status(&server).await;
    let body = relabelled(&server, "1").await;
    let (status, answer) = call(&server, Method::PUT, POD, &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    // The image is one of the few fields an update may change; with whitespace it is invalid.
    let mut body = relabelled(&server, "2").await;
    body["spec"]["containers"][0]["image"] = json!(" nginx:2 ");
    let (status, answer) = call(&server, Method::PUT, POD, &body).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert!(
        fields(&answer).contains(&"spec.containers[0].image".to_string()),
        "{answer}"
    );
    // Refused: the stored pod is still the valid one, and still known valid.
    let body = relabelled(&server, "3").await;
    let (status, answer) = call(&server, Method::PUT, POD, &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["spec"]["containers"][0]["image"], "nginx");
}

/// The stored pod with these annotations, sent back whole.
async fn annotated(server: &FakeApiServer, annotations: Value) -> Value {
    let (status, mut current) = call(server, Method::GET, POD, &Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{current}");
    current["metadata"]["annotations"] = annotations;
    current
}

/// An update's annotation keys are checked as names unless they are kept from a stored
/// version that passed the check: a key it adds is checked, and so is every key of a pod
/// stored without the checks (an invalid one there refuses the update, as a real server
/// checks all of them on every update).
#[tokio::test]
async fn an_update_checks_the_annotation_keys_not_known_valid() {
    let server = FakeApiServer::new();
    let mut created = pod("web");
    created["metadata"]["annotations"] = json!({"a": "1"});
    let (status, answer) = call(&server, Method::POST, PODS, &created).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let kept = annotated(&server, json!({"a": "2", "b/c": "3"})).await;
    let (status, answer) = call(&server, Method::PUT, POD, &kept).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let added = annotated(&server, json!({"a": "2", "b/c": "3", "bad key": "x"})).await;
    let (status, answer) = call(&server, Method::PUT, POD, &added).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    // Reported by each of the four metadata checks of a pod update, as a real server does.
    assert_eq!(fields(&answer), ["metadata.annotations"; 4]);
    assert!(answer["message"]
        .as_str()
        .unwrap_or_default()
        .contains("\"bad key\""));

    let loaded = http_support::reloaded_with(&server, "/pods", |pod| {
        pod["metadata"]["annotations"]["bad key"] = json!("x");
    });
    let changed = annotated(&loaded, json!({"a": "4", "b/c": "3", "bad key": "x"})).await;
    let (status, answer) = call(&loaded, Method::PUT, POD, &changed).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert_eq!(fields(&answer), ["metadata.annotations"; 4]);
}
