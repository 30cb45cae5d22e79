//! Bad input gets a `metav1.Status` with the real code, and nothing makes the server panic.

use crate::http_support;

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use http_support::call;
use rstest::rstest;

#[rstest]
#[case(Method::POST, "/api/v1/namespaces/default/configmaps", "application/json", b"{not json".to_vec(), 400, "BadRequest")]
#[case(Method::POST, "/api/v1/namespaces/default/configmaps", "application/json", b"[1,2]".to_vec(), 400, "BadRequest")]
#[case(Method::POST, "/api/v1/namespaces/default/configmaps", "application/json", b"".to_vec(), 400, "BadRequest")]
#[case(Method::POST, "/api/v1/namespaces/default/configmaps", "text/plain", b"kind: ConfigMap".to_vec(), 415, "UnsupportedMediaType")]
#[case(Method::POST, "/api/v1/namespaces/default/configmaps/x", "application/json", b"{}".to_vec(), 405, "MethodNotAllowed")]
#[case(Method::PUT, "/api/v1/namespaces/default/configmaps", "application/json", b"{}".to_vec(), 405, "MethodNotAllowed")]
#[case(Method::GET, "/api/v1/namespaces/default/widgets", "application/json", vec![], 404, "NotFound")]
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

/// A `dryRun` other than `All` (say `dryRun=true`, a common slip) or an unknown
/// `fieldValidation` is a 422 naming the options kind, on every verb, and nothing is written:
/// before, such a request was served as a real write.
#[rstest]
#[case(
    Method::POST,
    "/api/v1/namespaces/default/configmaps?dryRun=true",
    "application/json",
    r#"{"metadata":{"name":"new"}}"#,
    "CreateOptions",
    "dryRun: Unsupported value: [\"true\"]: supported values: \"All\""
)]
#[case(
    Method::POST,
    "/api/v1/namespaces/default/configmaps?dryRun=All&dryRun=x",
    "application/json",
    r#"{"metadata":{"name":"new"}}"#,
    "CreateOptions",
    "dryRun: Unsupported value: [\"All\",\"x\"]: supported values: \"All\""
)]
#[case(Method::POST, "/api/v1/namespaces/default/configmaps?fieldValidation=strict", "application/json", r#"{"metadata":{"name":"new"}}"#, "CreateOptions", "fieldValidation: Unsupported value: \"strict\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"")]
#[case(
    Method::PUT,
    "/api/v1/namespaces/default/configmaps/kept?dryRun=1",
    "application/json",
    r#"{"metadata":{"name":"kept"},"data":{"a":"2"}}"#,
    "UpdateOptions",
    "dryRun: Unsupported value: [\"1\"]: supported values: \"All\""
)]
#[case(
    Method::PATCH,
    "/api/v1/namespaces/default/configmaps/kept?dryRun=yes",
    "application/merge-patch+json",
    r#"{"data":{"a":"2"}}"#,
    "PatchOptions",
    "dryRun: Unsupported value: [\"yes\"]: supported values: \"All\""
)]
#[case(
    Method::DELETE,
    "/api/v1/namespaces/default/configmaps/kept?dryRun=true",
    "application/json",
    "",
    "DeleteOptions",
    "dryRun: Unsupported value: [\"true\"]: supported values: \"All\""
)]
#[case(
    Method::DELETE,
    "/api/v1/namespaces/default/configmaps/kept",
    "application/json",
    r#"{"dryRun":["true"]}"#,
    "DeleteOptions",
    "dryRun: Unsupported value: [\"true\"]: supported values: \"All\""
)]
#[case(
    Method::DELETE,
    "/api/v1/namespaces/default/configmaps?dryRun=true",
    "application/json",
    "",
    "DeleteOptions",
    "dryRun: Unsupported value: [\"true\"]: supported values: \"All\""
)]
#[tokio::test]
async fn bad_write_options_are_refused_and_write_nothing(
    #[case] method: Method,
    #[case] uri: &str,
    #[case] content_type: &str,
    #[case] body: &str,
    #[case] kind: &str,
    #[case] cause: &str,
) {
    let server = FakeApiServer::new();
    let kept = r#"{"metadata":{"name":"kept"},"data":{"a":"1"}}"#;
    let (created, _) = call(
        &server,
        Method::POST,
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        kept.as_bytes().to_vec(),
    )
    .await;
    assert_eq!(created, StatusCode::CREATED);
    let revision = server.revision();
    let (status, answer) = call(&server, method, uri, content_type, body.as_bytes().to_vec()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert_eq!(answer["reason"], "Invalid");
    assert_eq!(
        answer["message"],
        format!("{kind}.meta.k8s.io \"\" is invalid: {cause}")
    );
    assert_eq!(answer["details"]["kind"], kind);
    assert_eq!(answer["details"]["group"], "meta.k8s.io");
    assert_eq!(server.revision(), revision, "the request wrote something");
    let (status, stored) = call(
        &server,
        Method::GET,
        "/api/v1/namespaces/default/configmaps/kept",
        "application/json",
        vec![],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(stored["data"]["a"], "1");
}

/// A delete reads its options from the body when there is one and then ignores the query, as
/// the real handler does; without a body, the query's `dryRun=All` makes it a dry run.
#[tokio::test]
async fn delete_options_come_from_the_body_or_else_the_query() {
    let server = FakeApiServer::new();
    for name in ["a", "b", "c"] {
        let body = format!(r#"{{"metadata":{{"name":"{name}"}}}}"#);
        let (created, _) = call(
            &server,
            Method::POST,
            "/api/v1/namespaces/default/configmaps",
            "application/json",
            body.into_bytes(),
        )
        .await;
        assert_eq!(created, StatusCode::CREATED);
    }
    let exists = |name: &'static str| {
        let server = server.clone();
        async move {
            let uri = format!("/api/v1/namespaces/default/configmaps/{name}");
            call(&server, Method::GET, &uri, "application/json", vec![])
                .await
                .0
                == StatusCode::OK
        }
    };
    let path = "/api/v1/namespaces/default/configmaps";
    // Body dry run: kept.
    let (status, _) = call(
        &server,
        Method::DELETE,
        &format!("{path}/a"),
        "application/json",
        br#"{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}"#.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(exists("a").await);
    // Query dry run, no body: kept.
    let (status, _) = call(
        &server,
        Method::DELETE,
        &format!("{path}/a?dryRun=All"),
        "application/json",
        vec![],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(exists("a").await);
    // A body without dryRun wins over the query's dryRun: deleted.
    let (status, _) = call(
        &server,
        Method::DELETE,
        &format!("{path}/b?dryRun=All"),
        "application/json",
        br#"{"propagationPolicy":"Background"}"#.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(!exists("b").await);
    // A collection delete as a dry run keeps everything.
    let (status, listed) = call(
        &server,
        Method::DELETE,
        path,
        "application/json",
        br#"{"dryRun":["All"]}"#.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        listed["items"]
            .as_array()
            .is_some_and(|items| items.len() >= 2),
        "{listed}"
    );
    assert!(exists("a").await && exists("c").await);
}

/// `BindingREST.Create`: the Binding must name the pod of the URL (400); `ValidatePodBinding`'s
/// errors come back as the registry's plain aggregate (a 500 without a reason); a bound pod
/// conflicts. Nothing is written by a refused binding.
#[rstest]
#[case(
    r#"{"metadata":{"name":"other"},"target":{"kind":"Node","name":"n1"}}"#,
    400,
    Some("BadRequest"),
    "name in URL does not match name in Binding object"
)]
#[case(
    r#"{"target":{"kind":"Node","name":"n1"}}"#,
    400,
    Some("BadRequest"),
    "name in URL does not match name in Binding object"
)]
#[case(
    r#"{"metadata":{"name":"p"},"target":{"kind":"Node"}}"#,
    500,
    None,
    "target.name: Required value"
)]
#[case(r#"{"metadata":{"name":"p"},"target":{"kind":"Pod"}}"#, 500, None, "[target.kind: Unsupported value: \"Pod\": supported values: \"Node\", \"<empty>\", target.name: Required value]")]
#[tokio::test]
async fn bindings_are_checked_as_the_pod_registry_checks_them(
    #[case] binding: &str,
    #[case] code: u16,
    #[case] reason: Option<&str>,
    #[case] message: &str,
) {
    let server = FakeApiServer::new();
    let pod = br#"{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}"#;
    let (created, _) = call(
        &server,
        Method::POST,
        "/api/v1/namespaces/default/pods",
        "application/json",
        pod.to_vec(),
    )
    .await;
    assert_eq!(created, StatusCode::CREATED);
    let revision = server.revision();
    let uri = "/api/v1/namespaces/default/pods/p/binding";
    let (status, answer) = call(
        &server,
        Method::POST,
        uri,
        "application/json",
        binding.as_bytes().to_vec(),
    )
    .await;
    assert_eq!(status.as_u16(), code, "{answer}");
    assert_eq!(answer["reason"].as_str(), reason, "{answer}");
    assert_eq!(answer["message"], message);
    assert_eq!(server.revision(), revision);
    // A proper binding still works afterwards, once.
    let good = br#"{"metadata":{"name":"p"},"target":{"kind":"Node","name":"n1"}}"#;
    let (status, _) = call(
        &server,
        Method::POST,
        uri,
        "application/json",
        good.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, conflict) = call(
        &server,
        Method::POST,
        uri,
        "application/json",
        good.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{conflict}");
}
