//! Answers are negotiated from `Accept` as the real handlers negotiate them: JSON by default and
//! for wildcards, YAML when asked, and a `406 NotAcceptable` Status, with nothing done, when the
//! request accepts none of JSON, YAML and protobuf.

use crate::http_support;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use fake_apiserver::FakeApiServer;
use serde_json::{json, Value};

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

async fn send(
    server: &FakeApiServer,
    method: Method,
    uri: &str,
    accept: &str,
    body: Option<&Value>,
) -> (StatusCode, String, String) {
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::ACCEPT, accept)
        .header(header::CONTENT_TYPE, "application/json")
        .body(body.map_or_else(Body::empty, |b| Body::from(b.to_string())))
        .expect("a valid request");
    let (status, headers, bytes) = http_support::send_raw(server, request).await;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (
        status,
        content_type,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

#[tokio::test]
async fn an_unacceptable_accept_is_a_406_and_changes_nothing() {
    let server = FakeApiServer::new();
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
    let (status, content_type, body) = send(
        &server,
        Method::POST,
        CONFIGMAPS,
        "text/plain",
        Some(&config_map),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(content_type, "application/json");
    let status_body: Value = serde_json::from_str(&body).expect("a Status");
    assert_eq!(status_body["reason"], "NotAcceptable");
    assert_eq!(status_body["code"], 406);
    assert_eq!(
        status_body["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    let (status, _, _) = send(
        &server,
        Method::GET,
        &format!("{CONFIGMAPS}/a"),
        "*/*",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "the create was not done");
    // A miss of the router is still the router's answer.
    let (status, _, _) = send(&server, Method::GET, "/api/v1/nothings", "text/plain", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn yaml_answers_hold_the_json_answers_object() {
    let server = FakeApiServer::new();
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
        "data": {"flag": "true", "text": "x: y"}});
    let (status, content_type, created) = send(
        &server,
        Method::POST,
        CONFIGMAPS,
        "application/yaml",
        Some(&config_map),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(content_type, "application/yaml");
    assert!(created.starts_with("apiVersion: v1\ndata:\n"), "{created}");
    let uri = format!("{CONFIGMAPS}/a");
    let (_, _, json_answer) = send(&server, Method::GET, &uri, "application/json", None).await;
    let (status, content_type, yaml_answer) = send(
        &server,
        Method::GET,
        &uri,
        "application/json;q=0.5, application/yaml",
        None,
    )
    .await;
    assert_eq!(
        (status, content_type.as_str()),
        (StatusCode::OK, "application/yaml")
    );
    let from_yaml: Value = serde_yaml::from_str(&yaml_answer).expect("YAML");
    let from_json: Value = serde_json::from_str(&json_answer).expect("JSON");
    assert_eq!(from_yaml, from_json);
    assert_eq!(from_yaml["data"]["flag"], "true", "a string stays a string");
    let (_, content_type, list) =
        send(&server, Method::GET, CONFIGMAPS, "application/yaml", None).await;
    assert_eq!(content_type, "application/yaml");
    assert!(list.contains("kind: ConfigMapList"), "{list}");
}

#[tokio::test]
async fn discovery_documents_are_negotiated_too() {
    let server = FakeApiServer::new();
    for path in ["/api", "/apis", "/api/v1", "/apis/apps", "/apis/apps/v1"] {
        let (status, _, _) = send(&server, Method::GET, path, "text/plain", None).await;
        assert_eq!(status, StatusCode::NOT_ACCEPTABLE, "{path}");
        let (status, content_type, body) =
            send(&server, Method::GET, path, "application/yaml", None).await;
        assert_eq!(
            (status, content_type.as_str()),
            (StatusCode::OK, "application/yaml"),
            "{path}"
        );
        assert!(body.contains("kind: "), "{path}: {body}");
    }
    // What kubectl asks for first is still the aggregated document.
    let (status, content_type, _) = send(
        &server,
        Method::GET,
        "/apis",
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        content_type.contains("apidiscovery.k8s.io"),
        "{content_type}"
    );
}

/// The transformation asked for is read with the clause that wins: `as`, `g` and `v` are
/// options of the clause (`acceptMediaTypeOptions`), and a clause whose transformation the
/// endpoint does not allow is passed over (`AllowsMediaTypeTransform`).
#[tokio::test]
async fn transformations_are_negotiated_with_their_clause() {
    let server = FakeApiServer::new();
    let namespace = "/api/v1/namespaces/default";
    let get = |accept: &'static str| {
        let server = server.clone();
        async move {
            let (status, _, body) = send(&server, Method::GET, namespace, accept, None).await;
            (
                status,
                serde_json::from_str::<Value>(&body).unwrap_or(Value::Null),
            )
        }
    };
    // `meta.k8s.io/v1beta1` Tables are still served, at that version, rows included.
    let (status, table) = get("application/json;as=Table;v=v1beta1;g=meta.k8s.io").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        table["rows"][0]["object"]["apiVersion"],
        "meta.k8s.io/v1beta1"
    );
    // A clause preferred by `q` wins though it comes last.
    let (status, table) =
        get("application/json;q=0.1, application/json;as=Table;v=v1;g=meta.k8s.io").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    // A Table of no known version, or of no group, is passed over for the next clause...
    let (status, plain) =
        get("application/json;as=Table;v=v2;g=meta.k8s.io, application/json").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(plain["kind"], "Namespace");
    // ...and with none left nothing is acceptable; nor is a Table as protobuf, or another kind.
    for accept in [
        "application/json;as=Table",
        "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io",
        "application/json;as=Foo;g=meta.k8s.io;v=v1",
        "application/yaml;stream=watch",
    ] {
        let (status, refusal) = get(accept).await;
        assert_eq!(status, StatusCode::NOT_ACCEPTABLE, "{accept}: {refusal}");
        assert_eq!(refusal["reason"], "NotAcceptable");
    }
    // A Table may be YAML.
    let (status, content_type, yaml) = send(
        &server,
        Method::GET,
        "/api/v1/namespaces",
        "application/yaml;as=Table;v=v1;g=meta.k8s.io",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type, "application/yaml");
    assert!(yaml.contains("kind: Table"), "{yaml}");
}

/// Custom resources are not written as protobuf (the CRD handler's standard serializers): a
/// client that accepts only protobuf gets a 406; client-go's `protobuf, */*` gets JSON.
#[tokio::test]
async fn custom_resources_are_not_answered_for_protobuf_alone() {
    let server = http_support::with_gizmos().await;
    let gizmos = "/apis/ex.com/v1/namespaces/default/gizmos";
    let protobuf = "application/vnd.kubernetes.protobuf";
    let (status, _, _) = send(&server, Method::GET, gizmos, protobuf, None).await;
    assert_eq!(status, StatusCode::NOT_ACCEPTABLE);
    let (status, content_type, _) = send(
        &server,
        Method::GET,
        gizmos,
        "application/vnd.kubernetes.protobuf, */*",
        None,
    )
    .await;
    assert_eq!(
        (status, content_type.as_str()),
        (StatusCode::OK, "application/json")
    );
    // A built-in kind's list is (answered as JSON here; see `negotiation`).
    let (status, _, _) = send(&server, Method::GET, CONFIGMAPS, protobuf, None).await;
    assert_eq!(status, StatusCode::OK);
}

/// A watch is negotiated before it starts: nothing acceptable is the usual 406, and a type
/// with no stream serializer (YAML) the stream types' 406.
#[tokio::test]
async fn watches_are_negotiated_before_they_start() {
    let server = FakeApiServer::new();
    let watch = "/api/v1/namespaces?watch=true&timeoutSeconds=1";
    for (accept, types) in [
        (
            "text/plain",
            "application/json, application/yaml, application/vnd.kubernetes.protobuf",
        ),
        (
            "application/yaml",
            "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch",
        ),
    ] {
        let (status, _, body) = send(&server, Method::GET, watch, accept, None).await;
        assert_eq!(status, StatusCode::NOT_ACCEPTABLE, "{accept}: {body}");
        let refusal: Value = serde_json::from_str(&body).expect("a Status");
        assert_eq!(
            refusal["message"],
            format!("only the following media types are accepted: {types}"),
            "{accept}"
        );
    }
}
