//! Raw HTTP requests to an in-process server's router, for tests that check status codes and
//! bodies exactly as a client sees them.

use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use fake_apiserver::FakeApiServer;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

/// Sends one request and returns the status and the body decoded as JSON (`Null` when it is
/// not JSON).
pub async fn call(
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
        .expect("a valid request");
    send(server, request).await
}

/// A GET with this `Accept` header; the status and the body decoded as JSON (`Null` when it is
/// not JSON).
#[allow(dead_code)]
pub async fn get_accepting(server: &FakeApiServer, uri: &str, accept: &str) -> (StatusCode, Value) {
    let request = Request::builder()
        .uri(uri)
        .header("accept", accept)
        .body(Body::empty())
        .expect("a valid request");
    send(server, request).await
}

/// Sends a built request to the server's router; the status and the body decoded as JSON
/// (`Null` when it is not JSON).
async fn send(server: &FakeApiServer, request: Request<Body>) -> (StatusCode, Value) {
    let (status, _, bytes) = send_raw(server, request).await;
    let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, value)
}

/// Sends a built request to the server's router; the status, the headers and the body as sent.
#[allow(dead_code)]
pub async fn send_raw(
    server: &FakeApiServer,
    request: Request<Body>,
) -> (StatusCode, HeaderMap, bytes::Bytes) {
    let response = server
        .router()
        .oneshot(request)
        .await
        .expect("the router answers");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    (status, headers, bytes)
}

/// Sends a JSON body (none for `Null`).
#[allow(dead_code)]
pub async fn json(
    server: &FakeApiServer,
    method: Method,
    uri: &str,
    body: &Value,
) -> (StatusCode, Value) {
    let bytes = if body.is_null() {
        Vec::new()
    } else {
        body.to_string().into_bytes()
    };
    call(server, method, uri, "application/json", bytes).await
}

/// Sends a JSON body (none for `Null`); the status, the `Warning` headers as sent and the body
/// decoded as JSON.
#[allow(dead_code)]
pub async fn json_with_warnings(
    server: &FakeApiServer,
    method: Method,
    uri: &str,
    body: &Value,
) -> (StatusCode, Vec<String>, Value) {
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .body(Body::from(if body.is_null() {
            Vec::new()
        } else {
            body.to_string().into_bytes()
        }))
        .expect("a valid request");
    send_with_warnings(server, request).await
}

/// Sends a built request; the status, the `Warning` headers as sent and the body decoded as
/// JSON (`Null` when it is not JSON).
#[allow(dead_code)]
pub async fn send_with_warnings(
    server: &FakeApiServer,
    request: Request<Body>,
) -> (StatusCode, Vec<String>, Value) {
    let (status, headers, bytes) = send_raw(server, request).await;
    let warnings = headers
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect();
    (
        status,
        warnings,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// Sends a request without a body and returns the status, the `Content-Type` and the body as
/// text, for answers that need not be JSON.
#[allow(dead_code)]
pub async fn raw(
    server: &FakeApiServer,
    method: Method,
    uri: &str,
) -> (StatusCode, String, String) {
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .body(Body::from("{}"))
        .expect("a valid request");
    let (status, headers, bytes) = send_raw(server, request).await;
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (
        status,
        content_type,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

/// The CRDs collection.
pub const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// A namespaced CRD `gizmos.ex.com` (kind `Gizmo`, version `v1`) whose schema keeps every field.
pub fn gizmo_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.ex.com"},
        "spec": {"group": "ex.com", "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    })
}

/// A new server serving [`gizmo_crd`]'s custom resources.
#[allow(dead_code)]
pub async fn with_gizmos() -> FakeApiServer {
    let server = FakeApiServer::new();
    let (status, answer) = json(&server, Method::POST, CRDS, &gizmo_crd()).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    server
}

/// A fresh server holding `server`'s saved state, the saved object of `resource` (the only one
/// saved for it) changed by `edit` first: the state's objects are stored as they are, without
/// the kind's checks, as restoring etcd would.
#[allow(dead_code)]
pub fn reloaded_with(
    server: &FakeApiServer,
    resource: &str,
    edit: impl FnOnce(&mut Value),
) -> FakeApiServer {
    let mut state = server.export_state();
    let saved = state["objects"]
        .as_array_mut()
        .expect("a list of objects")
        .iter_mut()
        .find(|o| o["resource"] == resource)
        .expect("the object is saved");
    edit(&mut saved["object"]);
    let loaded = FakeApiServer::new();
    loaded.import_state(state).expect("the state loads");
    loaded
}
