//! Names in request paths as the real server reads them: Go's `net/http` decodes the path's
//! `%XX` escapes before anything routes it (a malformed escape is refused with a plain-text
//! `400 Bad Request` before any handler), and every keyed operation of the registry first checks
//! the name is a valid path segment (`NamespaceKeyFunc` / `NoNamespaceKeyFunc`:
//! `Name parameter invalid: "..": may not be '..'`).

use crate::http_support;

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use http_support::json as call;
use rstest::rstest;
use serde_json::{json, Value};

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "b"}})
}

/// A server holding the ConfigMap `cm` in `default`.
async fn server() -> FakeApiServer {
    let server = FakeApiServer::new();
    let (status, body) = call(&server, Method::POST, CONFIGMAPS, &configmap("cm")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    server
}

/// Every verb that names an object refuses a name that cannot be a path segment, with the
/// registry's message, before reading or writing anything.
#[rstest]
#[case::get_dot_dot(Method::GET, "/..", Value::Null, r#""..": may not be '..'"#)]
#[case::get_dot(Method::GET, "/.", Value::Null, r#"".": may not be '.'"#)]
#[case::get_percent(Method::GET, "/%25", Value::Null, r#""%": may not contain '%'"#)]
#[case::get_encoded_dots(Method::GET, "/%2e%2E", Value::Null, r#""..": may not be '..'"#)]
#[case::delete(Method::DELETE, "/..", Value::Null, r#""..": may not be '..'"#)]
#[case::update(Method::PUT, "/..", configmap(".."), r#""..": may not be '..'"#)]
#[case::patch(Method::PATCH, "/a%25b", json!({"data": {"c": "d"}}), r#""a%b": may not contain '%'"#)]
#[tokio::test]
async fn names_that_are_no_path_segment_are_refused(
    #[case] method: Method,
    #[case] tail: &str,
    #[case] body: Value,
    #[case] problem: &str,
) {
    let server = server().await;
    let uri = format!("{CONFIGMAPS}{tail}");
    let (status, answer) = if method == Method::PATCH {
        http_support::call(
            &server,
            method,
            &uri,
            "application/merge-patch+json",
            body.to_string().into_bytes(),
        )
        .await
    } else {
        call(&server, method, &uri, &body).await
    };
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["reason"], "BadRequest", "{answer}");
    let message = format!("Name parameter invalid: {problem}");
    assert_eq!(answer["message"], message.as_str(), "{answer}");
    // Nothing was written: the stored object is as created.
    let (status, stored) = call(
        &server,
        Method::GET,
        &format!("{CONFIGMAPS}/cm"),
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(stored["data"], json!({"a": "b"}));
}

/// Cluster-scoped objects (`NoNamespaceKeyFunc`) and custom resources check the same.
/// A subresource served by the object's own storage (`status`) checks it too.
#[rstest]
#[case::namespace("/api/v1/namespaces/..", r#""..": may not be '..'"#)]
#[case::namespace_status("/api/v1/namespaces/%25/status", r#""%": may not contain '%'"#)]
#[case::cluster_role(
    "/apis/rbac.authorization.k8s.io/v1/clusterroles/..",
    r#""..": may not be '..'"#
)]
#[tokio::test]
async fn every_kind_checks_the_name(#[case] uri: &str, #[case] problem: &str) {
    let server = FakeApiServer::new();
    let (status, answer) = call(&server, Method::GET, uri, &Value::Null).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let message = format!("Name parameter invalid: {problem}");
    assert_eq!(answer["message"], message.as_str());
}

/// Custom resources are stored by the same registry code.
#[tokio::test]
async fn custom_resources_check_the_name() {
    let server = http_support::with_gizmos().await;
    let uri = "/apis/ex.com/v1/namespaces/default/gizmos/%25";
    let (status, answer) = call(&server, Method::GET, uri, &Value::Null).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        answer["message"],
        r#"Name parameter invalid: "%": may not contain '%'"#
    );
}

/// An escaped name is the decoded name: found when it is the stored one, and a miss names it
/// decoded.
#[tokio::test]
async fn escaped_names_are_read_decoded() {
    let server = server().await;
    let (status, found) = call(
        &server,
        Method::GET,
        &format!("{CONFIGMAPS}/%63m"),
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found["metadata"]["name"], "cm");
    let (status, missing) = call(
        &server,
        Method::GET,
        &format!("{CONFIGMAPS}/a%20b"),
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
    assert_eq!(missing["message"], r#"configmaps "a b" not found"#);
    assert_eq!(missing["details"]["name"], "a b");
    // An escaped slash is a slash: `cm/b` asks for a subresource ConfigMaps do not have.
    let (status, miss) = call(
        &server,
        Method::GET,
        &format!("{CONFIGMAPS}/cm%2Fb"),
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{miss}");
    assert_eq!(
        miss["message"],
        "the server could not find the requested resource"
    );
}

/// A malformed escape never reaches a handler: Go's server answers it in plain text.
#[rstest]
#[case::not_hex("/api/v1/namespaces/default/configmaps/%zz")]
#[case::cut_short("/api/v1/namespaces/default/configmaps/a%4")]
#[case::outside_the_api("/version%")]
#[tokio::test]
async fn malformed_escapes_are_refused_before_any_handler(#[case] uri: &str) {
    let server = server().await;
    let (status, content_type, body) = http_support::raw(&server, Method::GET, uri).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(content_type, "text/plain; charset=utf-8");
    assert_eq!(body, "400 Bad Request");
}
