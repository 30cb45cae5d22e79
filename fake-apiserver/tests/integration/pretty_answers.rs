//! JSON answers are indented for people, as a real server's negotiation indents them: when
//! `?pretty=` says so, else when the `User-Agent` is `curl`, `Wget` or a browser; never for
//! watch streams; `/version` always (the real server writes it with `WriteRawJSON`).

use crate::http_support;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use fake_apiserver::FakeApiServer;
use rstest::rstest;

/// GETs `uri` as `user_agent`; the status and the body.
async fn get(server: &FakeApiServer, uri: &str, user_agent: &str) -> (StatusCode, String) {
    get_accepting(server, uri, user_agent, "application/json").await
}

/// GETs `uri` as `user_agent`, accepting `accept`; the status and the body.
async fn get_accepting(
    server: &FakeApiServer,
    uri: &str,
    user_agent: &str,
    accept: &str,
) -> (StatusCode, String) {
    let request = Request::builder()
        .uri(uri)
        .header("user-agent", user_agent)
        .header("accept", accept)
        .body(Body::empty())
        .expect("a valid request");
    let (status, _, body) = http_support::send_raw(server, request).await;
    (status, String::from_utf8(body.to_vec()).expect("UTF-8"))
}

const NAMESPACE: &str = "/api/v1/namespaces/default";
const MISSING: &str = "/api/v1/namespaces/default/configmaps/missing";

#[rstest]
#[case::curl(NAMESPACE, "curl/8.5.0", true)]
#[case::wget(NAMESPACE, "Wget/1.21", true)]
#[case::browser(NAMESPACE, "Mozilla/5.0 (X11; Linux x86_64)", true)]
#[case::kubectl(NAMESPACE, "kubectl/v1.32.0 (linux/amd64) kubernetes/abc", false)]
#[case::asked(&format!("{NAMESPACE}?pretty=true"), "kube-rs/1.0", true)]
#[case::asked_as_go_spells_true(&format!("{NAMESPACE}?pretty=1"), "kube-rs/1.0", true)]
#[case::refused_by_curl(&format!("{NAMESPACE}?pretty=false"), "curl/8.5.0", false)]
#[case::unparsable_is_false(&format!("{NAMESPACE}?pretty=yes"), "curl/8.5.0", false)]
#[case::empty_leaves_it_to_the_agent(&format!("{NAMESPACE}?pretty="), "curl/8.5.0", true)]
#[case::errors_too(MISSING, "curl/8.5.0", true)]
#[case::lists_too("/api/v1/namespaces?limit=1", "curl/8.5.0", true)]
#[case::discovery_too("/apis/apps/v1", "curl/8.5.0", true)]
#[tokio::test]
async fn json_is_indented_when_asked_or_for_people(
    #[case] uri: &str,
    #[case] user_agent: &str,
    #[case] indented: bool,
) {
    let server = FakeApiServer::new();
    let (_, body) = get(&server, uri, user_agent).await;
    assert_eq!(body.starts_with("{\n  \""), indented, "{body}");
    // The same document either way.
    let (_, compact) = get(&server, uri, "kube-rs/1.0").await;
    let a: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    let b: serde_json::Value = serde_json::from_str(&compact).expect("JSON");
    assert_eq!(a, b);
}

/// The media type's own `pretty=1` asks for it too, whatever the query and the agent say.
#[rstest]
#[case::asked("application/json;pretty=1", NAMESPACE, true)]
#[case::over_the_query("application/json;pretty=1", &format!("{NAMESPACE}?pretty=false"), true)]
#[case::only_1("application/json;pretty=true", NAMESPACE, false)]
#[case::of_the_clause_taken("text/html;pretty=1, application/json", NAMESPACE, false)]
#[tokio::test]
async fn the_media_type_may_ask_for_indented_json(
    #[case] accept: &str,
    #[case] uri: &str,
    #[case] indented: bool,
) {
    let server = FakeApiServer::new();
    let (status, body) = get_accepting(&server, uri, "kube-rs/1.0", accept).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body.starts_with("{\n  \""), indented, "{body}");
}

#[tokio::test]
async fn openapi_documents_are_never_indented() {
    let server = FakeApiServer::new();
    let (status, body) = get(&server, "/openapi/v3", "curl/8.5.0").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        body.starts_with("{\"paths\":"),
        "{}",
        &body[..body.len().min(80)]
    );
}

#[tokio::test]
async fn watch_streams_are_never_indented() {
    let server = FakeApiServer::new();
    let (status, body) = get(
        &server,
        "/api/v1/namespaces?watch=true&timeoutSeconds=1",
        "curl/8.5.0",
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let first = body.lines().next().expect("an event");
    assert!(first.starts_with("{\"type\":\"ADDED\""), "{first}");
}

#[rstest]
#[case::kubectl("kubectl/v1.32.0")]
#[case::curl("curl/8.5.0")]
#[tokio::test]
async fn version_is_always_indented_in_go_field_order(#[case] user_agent: &str) {
    let server = FakeApiServer::new();
    let (status, body) = get(&server, "/version", user_agent).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        body.starts_with("{\n  \"major\": \"1\",\n  \"minor\": \"36\",\n  \"emulationMajor\""),
        "{body}"
    );
    assert!(body.contains(",\n  \"platform\": \""), "{body}");
    assert!(body.ends_with("\"\n}"), "{body}");
}
