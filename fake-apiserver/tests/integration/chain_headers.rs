//! Every answer carries the headers the real server's handler chain adds: `Audit-Id` (the
//! request's own, echoed, else a new one) and `Cache-Control: no-cache, private`.

use crate::http_support;

use axum::body::Body;
use axum::http::{HeaderMap, Request};
use fake_apiserver::FakeApiServer;
use rstest::rstest;

async fn headers(server: &FakeApiServer, uri: &str, audit_id: Option<&str>) -> HeaderMap {
    let mut request = Request::builder().uri(uri);
    if let Some(id) = audit_id {
        request = request.header("Audit-ID", id);
    }
    let request = request.body(Body::empty()).expect("a valid request");
    http_support::send_raw(server, request).await.1
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

#[rstest]
#[case::object("/api/v1/namespaces/default")]
#[case::status("/api/v1/namespaces/default/configmaps/missing")]
#[case::page_not_found("/nowhere")]
#[case::discovery("/apis")]
#[case::version("/version")]
#[case::health("/readyz")]
#[tokio::test]
async fn every_answer_carries_an_audit_id_and_no_cache(#[case] uri: &str) {
    let server = FakeApiServer::new();
    let first = headers(&server, uri, None).await;
    let second = headers(&server, uri, None).await;
    assert_eq!(header(&first, "cache-control"), "no-cache, private");
    let (a, b) = (header(&first, "audit-id"), header(&second, "audit-id"));
    assert!(uuid::Uuid::parse_str(a).is_ok(), "{a}");
    assert_ne!(a, b, "each request has its own id");
    // Sent ids are echoed as sent.
    let echoed = headers(&server, uri, Some("my-trace-42")).await;
    assert_eq!(header(&echoed, "audit-id"), "my-trace-42");
}

#[tokio::test]
async fn new_audit_ids_do_not_depend_on_chance() {
    let ids = |server: FakeApiServer| async move {
        let mut ids = Vec::new();
        for _ in 0..3 {
            let h = headers(&server, "/api/v1/namespaces", None).await;
            ids.push(header(&h, "audit-id").to_string());
        }
        ids
    };
    let one = ids(FakeApiServer::builder().seed(7).build()).await;
    let two = ids(FakeApiServer::builder().seed(7).build()).await;
    assert_eq!(one, two);
}
