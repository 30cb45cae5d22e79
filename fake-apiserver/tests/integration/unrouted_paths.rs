//! Paths nothing serves are answered as a real server's handler chain answers them: inside the
//! built-in API's routes (`/api/...`, `/apis/{built-in group}/...`) the router's `Status` (404
//! for no route, 405 for a route without the method, both with an empty `details`); anywhere
//! else, including every custom resource request the CRD handler passes on (no such CRD, the
//! wrong scope, an unserved version), Go's plain-text `404 page not found`.

use crate::http_support;

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use http_support::json as call;
use rstest::rstest;
use serde_json::{json, Value};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// A CRD of group `ex.com` with only `v1` served.
fn crd(plural: &str, kind: &str, scope: &str) -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.ex.com")},
        "spec": {"group": "ex.com", "scope": scope,
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
            "versions": [
                {"name": "v1", "served": true, "storage": true, "schema": schema},
                {"name": "v2", "served": false, "storage": false, "schema": schema}
            ]}
    })
}

/// A server with a namespaced CRD (`gizmos`) and a cluster-scoped one (`gadgets`).
async fn server() -> FakeApiServer {
    let server = FakeApiServer::new();
    for (plural, kind, scope) in [
        ("gizmos", "Gizmo", "Namespaced"),
        ("gadgets", "Gadget", "Cluster"),
    ] {
        let (status, body) = call(&server, Method::POST, CRDS, &crd(plural, kind, scope)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    server
}

/// What a miss looks like.
#[derive(Debug, Clone, Copy)]
enum Miss {
    /// Go's `http.NotFound`.
    PageNotFound,
    /// The router's 404 `Status`.
    NoRoute,
    /// The router's 405 `Status`.
    NoMethod,
}

#[rstest]
#[case::outside_the_api(Method::GET, "/foo", Miss::PageNotFound)]
#[case::unknown_group(Method::GET, "/apis/nope.example.com", Miss::PageNotFound)]
#[case::unknown_group_version(Method::GET, "/apis/nope.example.com/v1", Miss::PageNotFound)]
#[case::unknown_group_resource(Method::GET, "/apis/nope.example.com/v1/things", Miss::PageNotFound)]
#[case::custom_resource_of_no_crd(Method::GET, "/apis/ex.com/v1/widgets", Miss::PageNotFound)]
#[case::unserved_version(
    Method::GET,
    "/apis/ex.com/v2/namespaces/default/gizmos",
    Miss::PageNotFound
)]
#[case::cluster_scoped_custom_resource_in_a_namespace(
    Method::POST,
    "/apis/ex.com/v1/namespaces/default/gadgets",
    Miss::PageNotFound
)]
#[case::cluster_scoped_custom_resources_listed_in_a_namespace(
    Method::GET,
    "/apis/ex.com/v1/namespaces/default/gadgets",
    Miss::PageNotFound
)]
#[case::namespaced_custom_resource_without_namespace(
    Method::GET,
    "/apis/ex.com/v1/gizmos/g1",
    Miss::PageNotFound
)]
#[case::namespaced_custom_resource_created_without_namespace(
    Method::POST,
    "/apis/ex.com/v1/gizmos",
    Miss::PageNotFound
)]
#[case::unknown_core_version(Method::GET, "/api/v2", Miss::NoRoute)]
#[case::unknown_builtin_version(Method::GET, "/apis/apps/v9", Miss::NoRoute)]
#[case::unknown_builtin_resource(
    Method::GET,
    "/api/v1/namespaces/default/widgetsnotreal",
    Miss::NoRoute
)]
#[case::cluster_scoped_builtin_in_a_namespace(
    Method::GET,
    "/api/v1/namespaces/default/nodes",
    Miss::NoRoute
)]
#[case::namespaced_builtin_object_without_namespace(
    Method::GET,
    "/api/v1/configmaps/c1",
    Miss::NoRoute
)]
#[case::unknown_builtin_subresource(
    Method::GET,
    "/api/v1/namespaces/default/configmaps/c1/nope",
    Miss::NoRoute
)]
#[case::create_across_namespaces(Method::POST, "/api/v1/configmaps", Miss::NoMethod)]
#[case::delete_across_namespaces(Method::DELETE, "/apis/apps/v1/deployments", Miss::NoMethod)]
#[case::put_to_a_collection(Method::PUT, "/api/v1/namespaces/default/configmaps", Miss::NoMethod)]
#[case::delete_of_a_status(
    Method::DELETE,
    "/api/v1/namespaces/default/pods/p1/status",
    Miss::NoMethod
)]
#[tokio::test]
async fn misses_are_answered_as_the_real_handler_chain_answers_them(
    #[case] method: Method,
    #[case] path: &str,
    #[case] miss: Miss,
) {
    let server = server().await;
    let (status, content_type, body) = http_support::raw(&server, method, path).await;
    match miss {
        Miss::PageNotFound => {
            assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
            assert_eq!(content_type, "text/plain; charset=utf-8");
            assert_eq!(body, "404 page not found\n");
        }
        Miss::NoRoute | Miss::NoMethod => {
            let (code, reason, message) = match miss {
                Miss::NoRoute => (
                    404,
                    "NotFound",
                    "the server could not find the requested resource",
                ),
                _ => (
                    405,
                    "MethodNotAllowed",
                    "the server does not allow this method on the requested resource",
                ),
            };
            assert_eq!(status.as_u16(), code, "{body}");
            assert_eq!(content_type, "application/json");
            let status: Value = serde_json::from_str(&body).expect("a Status");
            assert_eq!(
                status,
                json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": message, "reason": reason, "details": {}, "code": code})
            );
        }
    }
}

#[rstest]
#[case::namespaced_custom_resources_across_namespaces("/apis/ex.com/v1/gizmos")]
#[case::namespaced_builtins_across_namespaces("/api/v1/configmaps")]
#[case::cluster_scoped_custom_resources("/apis/ex.com/v1/gadgets")]
#[tokio::test]
async fn lists_in_the_right_scope_are_served(#[case] path: &str) {
    let server = server().await;
    let (status, list) = call(&server, Method::GET, path, &Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert!(list["items"].is_array(), "{list}");
}

/// The CRD handler answers a subresource its CRD does not define as a missing object.
#[tokio::test]
async fn a_custom_resources_missing_subresource_is_a_missing_object() {
    let server = server().await;
    let path = "/apis/ex.com/v1/namespaces/default/gizmos/g1";
    let (status, body) = call(
        &server,
        Method::POST,
        "/apis/ex.com/v1/namespaces/default/gizmos",
        &json!({"apiVersion": "ex.com/v1", "kind": "Gizmo", "metadata": {"name": "g1"}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, answer) = call(
        &server,
        Method::GET,
        &format!("{path}/status"),
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
    assert_eq!(answer["reason"], "NotFound");
    assert_eq!(answer["message"], "gizmos.ex.com \"g1\" not found");
    assert_eq!(
        answer["details"],
        json!({"name": "g1", "group": "ex.com", "kind": "gizmos"})
    );
}

/// A CRD group's discovery documents are served by the CRD handler, which does not look at the
/// method; the health checks do not either.
#[rstest]
#[case::crd_group(Method::POST, "/apis/ex.com", "APIGroup")]
#[case::crd_group_version(Method::DELETE, "/apis/ex.com/v1", "APIResourceList")]
#[tokio::test]
async fn crd_discovery_answers_any_method(
    #[case] method: Method,
    #[case] path: &str,
    #[case] kind: &str,
) {
    let server = server().await;
    let (status, answer) = call(&server, method, path, &Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["kind"], kind);
}

#[rstest]
#[case::healthz(Method::POST, "/healthz")]
#[case::livez(Method::DELETE, "/livez")]
#[case::readyz_check(Method::PUT, "/readyz/ping")]
#[tokio::test]
async fn health_checks_answer_any_method(#[case] method: Method, #[case] path: &str) {
    let server = FakeApiServer::new();
    let (status, _, body) = http_support::raw(&server, method, path).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, "ok");
}
