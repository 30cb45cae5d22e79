//! Bad input gets a `metav1.Status` with the real code, and nothing makes the server panic.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use fake_apiserver::FakeApiServer;
use http_body_util::BodyExt;
use rstest::rstest;
use serde_json::Value;
use tower::ServiceExt;

async fn call(
    server: &FakeApiServer,
    method: Method,
    uri: &str,
    content_type: &str,
    body: Vec<u8>,
) -> (StatusCode, Value) {
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(Body::from(body))
        .unwrap();
    let response = server.router().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, value)
}

#[rstest]
#[case(Method::POST, "/api/v1/namespaces/default/configmaps", "application/json", b"{not json".to_vec(), 400, "BadRequest")]
#[case(Method::POST, "/api/v1/namespaces/default/configmaps", "application/json", b"[1,2]".to_vec(), 400, "BadRequest")]
#[case(Method::POST, "/api/v1/namespaces/default/configmaps", "application/json", b"".to_vec(), 400, "BadRequest")]
#[case(Method::POST, "/api/v1/namespaces/default/configmaps", "text/plain", b"kind: ConfigMap".to_vec(), 415, "UnsupportedMediaType")]
#[case(Method::POST, "/api/v1/namespaces/default/configmaps/x", "application/json", b"{}".to_vec(), 405, "MethodNotAllowed")]
#[case(Method::PUT, "/api/v1/namespaces/default/configmaps", "application/json", b"{}".to_vec(), 405, "MethodNotAllowed")]
#[case(Method::GET, "/api/v1/namespaces/default/widgets", "application/json", vec![], 404, "NotFound")]
#[case(Method::GET, "/apis/nope.example.com/v1/things", "application/json", vec![], 404, "NotFound")]
#[case(Method::POST, "/api/v1/namespaces/default/configmaps", "application/json", br#"{"metadata":{"name":"Bad_Name"}}"#.to_vec(), 422, "Invalid")]
#[case(Method::POST, "/api/v1/namespaces/default/configmaps", "application/json", vec![b' '; 4 * 1024 * 1024], 413, "RequestEntityTooLarge")]
#[case(Method::PATCH, "/api/v1/namespaces/default/configmaps/x", "application/apply-patch+yaml", b"{}".to_vec(), 422, "Invalid")]
#[case(Method::PATCH, "/api/v1/namespaces/default/configmaps/x?fieldManager=m", "application/apply-patch+yaml", b"a: [".to_vec(), 400, "BadRequest")]
#[case(Method::PATCH, "/api/v1/namespaces/default/configmaps/x?fieldManager=m", "application/apply-patch+yaml", b"- 1".to_vec(), 400, "BadRequest")]
#[case(Method::PATCH, "/api/v1/namespaces/default/configmaps/x?fieldManager=m", "application/apply-patch+yaml", b"kind: Secret\napiVersion: v1".to_vec(), 400, "BadRequest")]
#[case(Method::PATCH, "/api/v1/namespaces/default/configmaps/x?force=true", "application/merge-patch+json", b"{}".to_vec(), 422, "Invalid")]
#[case(Method::GET, "/api/v1/namespaces/default/configmaps?labelSelector=a+in+(", "application/json", vec![], 400, "BadRequest")]
#[case(Method::GET, "/api/v1/namespaces/default/configmaps?limit=abc", "application/json", vec![], 400, "BadRequest")]
#[case(Method::GET, "/api/v1/namespaces/default/configmaps?continue=zzz", "application/json", vec![], 400, "BadRequest")]
#[tokio::test]
async fn bad_requests_get_a_status(
    #[case] method: Method,
    #[case] uri: &str,
    #[case] content_type: &str,
    #[case] body: Vec<u8>,
    #[case] code: u16,
    #[case] reason: &str,
) {
    let server = FakeApiServer::new();
    let (status, body) = call(&server, method, uri, content_type, body).await;
    assert_eq!(status.as_u16(), code, "{body}");
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["code"], code);
    assert_eq!(body["reason"], reason);
}

/// A deterministic stream of awkward bytes and JSON shapes.
fn garbage(seed: u64) -> Vec<u8> {
    let shapes: [&[u8]; 10] = [
        br#"{"metadata": 5}"#,
        br#"{"metadata": {"name": ["x"]}}"#,
        br#"{"metadata": {"name": "a", "labels": {"k": 5}}}"#,
        br#"{"metadata": {"name": "a", "finalizers": "x"}}"#,
        br#"{"apiVersion": 7, "kind": null, "metadata": {"name": "a"}}"#,
        br#"{"metadata": {"name": "a", "resourceVersion": "abc"}, "spec": null}"#,
        br#"{"metadata": {"name": "a"}, "spec": {"containers": [null, 5, {"name": 1}]}}"#,
        b"\xff\xfe\x00",
        br#"[{"op": "remove", "path": "/nope/0"}]"#,
        br#"{"metadata": {"name": "a", "ownerReferences": [{"uid": 1}]}}"#,
    ];
    let mut bytes = shapes[(seed % shapes.len() as u64) as usize].to_vec();
    // Truncate some of them.
    if seed.is_multiple_of(3) {
        bytes.truncate(bytes.len() / 2);
    }
    bytes
}

#[tokio::test]
async fn garbage_never_panics() {
    let server = FakeApiServer::new();
    let targets = [
        (Method::POST, "/api/v1/namespaces/default/pods"),
        (Method::POST, "/api/v1/namespaces/default/configmaps"),
        (Method::POST, "/api/v1/nodes"),
        (
            Method::POST,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        ),
        (Method::PUT, "/api/v1/namespaces/default/configmaps/a"),
        (Method::PUT, "/api/v1/namespaces/default/pods/a/status"),
        (Method::DELETE, "/api/v1/namespaces/default/configmaps/a"),
        (
            Method::POST,
            "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        ),
    ];
    let patch_types = [
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/strategic-merge-patch+json",
    ];
    // Something to patch and update.
    call(
        &server,
        Method::POST,
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        br#"{"metadata":{"name":"a"}}"#.to_vec(),
    )
    .await;
    for seed in 0..60u64 {
        for (method, uri) in &targets {
            let (status, body) = call(
                &server,
                method.clone(),
                uri,
                "application/json",
                garbage(seed),
            )
            .await;
            assert!(
                status.is_client_error() || status.is_success() || status.as_u16() == 500,
                "{uri}: {status}"
            );
            if !status.is_success() {
                assert_eq!(body["kind"], "Status", "{uri}: {body}");
            }
        }
        for ct in patch_types {
            let (status, body) = call(
                &server,
                Method::PATCH,
                "/api/v1/namespaces/default/configmaps/a",
                ct,
                garbage(seed),
            )
            .await;
            if !status.is_success() {
                assert_eq!(body["kind"], "Status", "{ct}: {body}");
            }
        }
    }
    // The server still works.
    let (status, _) = call(
        &server,
        Method::POST,
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        br#"{"metadata":{"name":"still-works"}}"#.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = call(
        &server,
        Method::GET,
        "/api/v1/namespaces/default/configmaps/still-works",
        "application/json",
        vec![],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

/// A namespaced path for a cluster-scoped kind is not a route: 404 with a `NotFound` Status, for
/// custom resources too (where a real server's catch-all sends plain text; clients here always
/// get a Status they can parse).
#[tokio::test]
async fn a_path_in_the_wrong_scope_is_not_found() {
    let server = FakeApiServer::new();
    let crd = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Cluster",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    });
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let (status, _) = call(
        &server,
        Method::POST,
        crds,
        "application/json",
        serde_json::to_vec(&crd).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let gadget = br#"{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"}}"#;
    let (status, body) = call(
        &server,
        Method::POST,
        "/apis/example.com/v1/namespaces/default/gadgets",
        "application/json",
        gadget.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["reason"], "NotFound");
    // The cluster-scoped path serves it.
    let (status, _) = call(
        &server,
        Method::POST,
        "/apis/example.com/v1/gadgets",
        "application/json",
        gadget.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body) = call(
        &server,
        Method::GET,
        "/api/v1/namespaces/default/nodes",
        "application/json",
        vec![],
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["reason"], "NotFound");
}
