//! `pods/ephemeralcontainers`, as `kubectl debug` uses it: the pod with only its ephemeral
//! containers writable (`dropNonEphemeralContainerUpdates`), each checked as
//! `validateEphemeralContainers` checks it, and the existing ones neither removed nor changed
//! (`ValidatePodEphemeralContainersUpdate`).

use crate::http_support;

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use http_support::call;
use rstest::rstest;
use serde_json::{json, Value};

const PODS: &str = "/api/v1/namespaces/default/pods";
const SUBRESOURCE: &str = "/api/v1/namespaces/default/pods/p/ephemeralcontainers";

async fn server_with_pod() -> FakeApiServer {
    let server = FakeApiServer::new();
    let pod = json!({"metadata": {"name": "p", "labels": {"app": "p"}},
        "spec": {"containers": [{"name": "app", "image": "nginx"}], "initContainers": [{"name": "init", "image": "busybox"}]}});
    let (status, answer) = call(
        &server,
        Method::POST,
        PODS,
        "application/json",
        pod.to_string().into_bytes(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    server
}

async fn patch(server: &FakeApiServer, content_type: &str, body: Value) -> (StatusCode, Value) {
    call(
        server,
        Method::PATCH,
        SUBRESOURCE,
        content_type,
        body.to_string().into_bytes(),
    )
    .await
}

fn names(pod: &Value) -> Vec<String> {
    pod["spec"]["ephemeralContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn ephemeral_containers_are_added_and_nothing_else_changes() {
    let server = server_with_pod().await;
    let (status, added) = patch(
        &server,
        "application/strategic-merge-patch+json",
        json!({"metadata": {"labels": {"app": "changed"}},
            "spec": {"containers": [{"name": "app", "image": "changed"}],
                "ephemeralContainers": [{"name": "debug", "image": "busybox", "targetContainerName": "app", "stdin": true, "tty": true}]}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{added}");
    assert_eq!(added["kind"], "Pod");
    assert_eq!(names(&added), ["debug"]);
    // Defaulted as a container is.
    assert_eq!(
        added["spec"]["ephemeralContainers"][0]["terminationMessagePolicy"],
        "File"
    );
    // Everything else is the stored pod's.
    assert_eq!(added["metadata"]["labels"]["app"], "p");
    assert_eq!(added["spec"]["containers"][0]["image"], "nginx");
    let managers: Vec<&str> = added["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["subresource"].as_str())
        .collect();
    assert_eq!(managers, ["ephemeralcontainers"]);

    // GET serves the pod; DELETE is not a verb of the subresource.
    let (status, read) = call(
        &server,
        Method::GET,
        SUBRESOURCE,
        "application/json",
        vec![],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(names(&read), ["debug"]);
    let (status, _) = call(
        &server,
        Method::DELETE,
        SUBRESOURCE,
        "application/json",
        vec![],
    )
    .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn existing_ephemeral_containers_are_neither_removed_nor_changed() {
    let server = server_with_pod().await;
    let (status, _) = patch(
        &server,
        "application/strategic-merge-patch+json",
        json!({"spec": {"ephemeralContainers": [{"name": "debug", "image": "busybox"}]}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    for (ops, message) in [
        (
            json!([{"op": "remove", "path": "/spec/ephemeralContainers/0"}]),
            "Pod \"p\" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers \"debug\" may not be removed\n",
        ),
        (
            json!([{"op": "replace", "path": "/spec/ephemeralContainers/0/image", "value": "alpine"}]),
            "Pod \"p\" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers \"debug\" may not be changed\n",
        ),
    ] {
        let (status, refused) = patch(&server, "application/json-patch+json", ops).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
        assert_eq!(refused["message"], message);
    }
}

#[rstest]
#[case::name_taken(json!({"name": "app", "image": "busybox"}), "spec.ephemeralContainers[0].name: Duplicate value: \"app\"")]
#[case::init_name_taken(json!({"name": "init", "image": "busybox"}), "spec.ephemeralContainers[0].name: Duplicate value: \"init\"")]
#[case::no_image(json!({"name": "d"}), "spec.ephemeralContainers[0].image: Required value")]
#[case::unknown_target(json!({"name": "d", "image": "busybox", "targetContainerName": "nope"}), "spec.ephemeralContainers[0].targetContainerName: Not found: \"nope\"")]
#[case::ports(json!({"name": "d", "image": "busybox", "ports": [{"containerPort": 80}]}), "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container")]
#[case::probe(json!({"name": "d", "image": "busybox", "readinessProbe": {"exec": {"command": ["true"]}}}), "spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container")]
#[case::resources(json!({"name": "d", "image": "busybox", "resources": {"limits": {"cpu": "1"}}}), "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container")]
#[tokio::test]
async fn an_ephemeral_container_is_checked_as_the_real_validation_checks_it(
    #[case] container: Value,
    #[case] cause: &str,
) {
    let server = server_with_pod().await;
    let (status, refused) = patch(
        &server,
        "application/strategic-merge-patch+json",
        json!({"spec": {"ephemeralContainers": [container]}}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    let message = refused["message"].as_str().unwrap_or_default();
    assert!(message.contains(cause), "{message}");
    let (_, stored) = call(
        &server,
        Method::GET,
        &format!("{PODS}/p"),
        "application/json",
        vec![],
    )
    .await;
    assert!(names(&stored).is_empty(), "{stored}");
}

#[tokio::test]
async fn discovery_lists_the_subresource() {
    let server = FakeApiServer::new();
    let (status, core) = call(&server, Method::GET, "/api/v1", "application/json", vec![]).await;
    assert_eq!(status, StatusCode::OK);
    let entry = core["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == "pods/ephemeralcontainers")
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(entry["kind"], "Pod", "{core}");
    assert_eq!(entry["verbs"], json!(["get", "patch", "update"]));
}
