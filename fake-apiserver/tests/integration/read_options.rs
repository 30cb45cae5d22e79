//! How reads and writes take `resourceVersion`, `continue` and integer options, as the real
//! server's handlers, watch cache and storage read them (apiserver v0.36.3): which verb
//! answers a malformed revision with which code, the continue token's own format, and the
//! order of a list across namespaces.

use crate::http_support;

use axum::http::{Method, StatusCode};
use fake_apiserver::FakeApiServer;
use rstest::rstest;
use serde_json::{json, Value};

const CMS: &str = "/api/v1/namespaces/default/configmaps";

async fn server_with(names: &[(&str, &str)]) -> FakeApiServer {
    let server = FakeApiServer::new();
    for (namespace, name) in names {
        if *namespace != "default" {
            let (status, _) = http_support::json(
                &server,
                Method::POST,
                "/api/v1/namespaces",
                &json!({"metadata": {"name": namespace}}),
            )
            .await;
            assert!(status.is_success() || status == StatusCode::CONFLICT);
        }
        let (status, body) = http_support::json(
            &server,
            Method::POST,
            &format!("/api/v1/namespaces/{namespace}/configmaps"),
            &json!({"metadata": {"name": name, "labels": {"set": "test"}}}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    server
}

fn status_of(body: &Value) -> (u64, &str, &str) {
    (
        body["code"].as_u64().unwrap_or_default(),
        body["reason"].as_str().unwrap_or_default(),
        body["message"].as_str().unwrap_or_default(),
    )
}

#[rstest]
// GET with a resourceVersion reads the watch cache: storage's `InvalidError` is passed on as a
// 500 without a reason; a revision not reached yet is the 504 `Too large resource version`.
#[case::get_malformed(
    "/api/v1/namespaces/default/configmaps/a?resourceVersion=abc",
    500,
    "",
    r#"resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax"#
)]
#[case::get_signed(
    "/api/v1/namespaces/default/configmaps/a?resourceVersion=%2B1",
    500,
    "",
    r#"resourceVersion: Invalid value: "+1": strconv.ParseUint: parsing "+1": invalid syntax"#
)]
// A list wraps the same error in a 400 (`ValidateListOptions` of storage).
#[case::list_malformed(
    "/api/v1/namespaces/default/configmaps?resourceVersion=abc",
    400,
    "BadRequest",
    r#"invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax"#
)]
// A watch passes it on, as a GET does.
#[case::watch_malformed(
    "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=abc",
    500,
    "",
    r#"resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax"#
)]
// Integer options go through the parameter codec: strconv's error is the whole message, and an
// empty value is malformed too.
#[case::timeout_malformed(
    "/api/v1/namespaces/default/configmaps?timeoutSeconds=soon",
    400,
    "BadRequest",
    r#"strconv.ParseInt: parsing "soon": invalid syntax"#
)]
#[case::limit_empty(
    "/api/v1/namespaces/default/configmaps?limit=",
    400,
    "BadRequest",
    r#"strconv.ParseInt: parsing "": invalid syntax"#
)]
#[case::limit_out_of_range(
    "/api/v1/namespaces/default/configmaps?limit=99999999999999999999",
    400,
    "BadRequest",
    r#"strconv.ParseInt: parsing "99999999999999999999": value out of range"#
)]
#[case::continue_garbage(
    "/api/v1/namespaces/default/configmaps?continue=not-a-token",
    400,
    "BadRequest",
    r"invalid continue token: continue key is not valid: invalid character '\u009e' looking for beginning of value"
)]
#[case::continue_padded(
    "/api/v1/namespaces/default/configmaps?continue=a%3D",
    400,
    "BadRequest",
    "invalid continue token: continue key is not valid: illegal base64 data at input byte 1"
)]
#[tokio::test]
async fn malformed_read_options_are_answered_as_the_real_server_answers_them(
    #[case] uri: &str,
    #[case] code: u64,
    #[case] reason: &str,
    #[case] message: &str,
) {
    let server = server_with(&[("default", "a")]).await;
    let (status, body) = http_support::json(&server, Method::GET, uri, &Value::Null).await;
    assert_eq!(status.as_u16() as u64, code, "{body}");
    assert_eq!(status_of(&body), (code, reason, message));
}

fn revision_of(list: &Value) -> u64 {
    list["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {list}"))
}

/// A GET or a LIST at a revision the store has not reached waits for it, as the watch cache
/// does, for 3 seconds, then is the `504` (time is paused: the wait costs nothing).
#[rstest]
#[case::get("/a?resourceVersion={}")]
#[case::list("?resourceVersion={}")]
#[case::list_not_older_than("?resourceVersion={}&resourceVersionMatch=NotOlderThan")]
#[case::list_exact("?resourceVersion={}&resourceVersionMatch=Exact")]
#[tokio::test(start_paused = true)]
async fn a_read_at_a_revision_not_reached_yet_waits_three_seconds_for_it_then_is_the_504(
    #[case] query: &str,
) {
    let server = server_with(&[("default", "a")]).await;
    let (_, list) = http_support::json(&server, Method::GET, CMS, &Value::Null).await;
    let current = revision_of(&list);
    let uri = format!("{CMS}{}", query.replace("{}", &(current + 10).to_string()));
    let started = tokio::time::Instant::now();
    let (status, body) = http_support::json(&server, Method::GET, &uri, &Value::Null).await;
    let waited = started.elapsed();
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT, "{body}");
    assert_eq!(
        body["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    assert_eq!(body["details"]["retryAfterSeconds"], 1);
    assert!(
        waited >= std::time::Duration::from_secs(3) && waited < std::time::Duration::from_secs(4),
        "waited {waited:?}"
    );
    // At or below the newest revision it is answered at once, and 0 means any (an exact
    // revision must be one).
    let below: &[String] = match query.contains("Exact") {
        true => &[current.to_string()],
        false => &[current.to_string(), "0".to_string(), "1".to_string()],
    };
    for rv in below {
        let started = tokio::time::Instant::now();
        let uri = format!("{CMS}{}", query.replace("{}", rv));
        let (status, body) = http_support::json(&server, Method::GET, &uri, &Value::Null).await;
        assert_eq!(status, StatusCode::OK, "{rv}: {body}");
        assert_eq!(started.elapsed(), std::time::Duration::ZERO);
    }
}

/// A write that lands while a read waits for its revision lets the read through (a list is
/// at least that new).
#[rstest]
#[case::get("/a?resourceVersion={}")]
#[case::list("?resourceVersion={}")]
#[case::list_exact("?resourceVersion={}&resourceVersionMatch=Exact")]
#[tokio::test(start_paused = true)]
async fn a_write_landing_while_a_read_waits_lets_it_through(#[case] query: &str) {
    let server = server_with(&[("default", "a")]).await;
    let (_, list) = http_support::json(&server, Method::GET, CMS, &Value::Null).await;
    let next = revision_of(&list) + 1;
    let uri = format!("{CMS}{}", query.replace("{}", &next.to_string()));
    let reader = {
        let server = server.clone();
        tokio::spawn(async move {
            let started = tokio::time::Instant::now();
            let answer = http_support::json(&server, Method::GET, &uri, &Value::Null).await;
            (answer, started.elapsed())
        })
    };
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let (status, _) = http_support::json(
        &server,
        Method::POST,
        CMS,
        &json!({"metadata": {"name": "b"}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let ((status, body), waited) = reader.await.expect("the read");
    assert_eq!(status, StatusCode::OK, "{body}");
    if body["kind"] == "ConfigMapList" {
        assert!(revision_of(&body) >= next, "{body}");
    }
    assert_eq!(waited, std::time::Duration::from_secs(1));
}

#[rstest]
#[case::list(
    "?resourceVersionMatch=Bogus&continue=x",
    &[
        "FieldValueForbidden: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        "FieldValueForbidden: Forbidden: resourceVersionMatch is forbidden when continue is provided",
        r#"FieldValueNotSupported: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", """#,
    ]
)]
#[case::list_send_initial_events(
    "?sendInitialEvents=true",
    &["FieldValueForbidden: Forbidden: sendInitialEvents is forbidden for list"]
)]
#[case::watch(
    "?watch=1&resourceVersionMatch=Exact",
    &[
        "FieldValueForbidden: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        r#"FieldValueNotSupported: Unsupported value: "Exact": supported values: "NotOlderThan""#,
    ]
)]
#[case::watch_send_initial_events(
    "?watch=1&sendInitialEvents=1",
    &["FieldValueForbidden: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"]
)]
#[tokio::test]
async fn list_options_are_validated_with_every_cause_in_one_422(
    #[case] query: &str,
    #[case] causes: &[&str],
) {
    let server = FakeApiServer::new();
    let (status, body) =
        http_support::json(&server, Method::GET, &format!("{CMS}{query}"), &Value::Null).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let got: Vec<String> = body["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}: {}",
                c["reason"].as_str().unwrap(),
                c["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(got, causes);
    assert_eq!(body["details"]["kind"], "ListOptions");
}

/// The token is storage's: base64url JSON with the revision and the next key after the list's
/// prefix, `namespace/name` across namespaces.
#[tokio::test]
async fn continue_tokens_are_storage_s_and_page_through_in_key_order() {
    let server = server_with(&[
        ("team", "b"),
        ("team-x", "a"),
        ("team", "a"),
        ("team-x", "b"),
    ])
    .await;
    let mut names = Vec::new();
    // The label leaves out what the server's own controllers write (`kube-root-ca.crt`).
    let list = "/api/v1/configmaps?limit=1&labelSelector=set%3Dtest";
    let mut uri = list.to_string();
    let mut first_token = None;
    loop {
        let (status, page) = http_support::json(&server, Method::GET, &uri, &Value::Null).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        for item in page["items"].as_array().unwrap() {
            let meta = &item["metadata"];
            names.push(format!(
                "{}/{}",
                meta["namespace"].as_str().unwrap(),
                meta["name"].as_str().unwrap()
            ));
        }
        let Some(token) = page["metadata"]["continue"]
            .as_str()
            .filter(|t| !t.is_empty())
        else {
            break;
        };
        first_token.get_or_insert_with(|| token.to_string());
        uri = format!("{list}&continue={token}");
    }
    // `-` sorts before `/`: a real server lists namespace `team-x` before `team`.
    assert_eq!(names, ["team-x/a", "team-x/b", "team/a", "team/b"]);
    let token = first_token.unwrap();
    use base64::Engine;
    let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(&token)
        .unwrap();
    let decoded: Value = serde_json::from_slice(&decoded).unwrap();
    assert_eq!(decoded["v"], "meta.k8s.io/v1");
    assert_eq!(decoded["start"], "team-x/a\u{0}");
    assert!(decoded["rv"].as_i64().unwrap() > 0);
    // A token and a resourceVersion other than 0 do not go together (storage's check, a 400).
    let (status, body) = http_support::json(
        &server,
        Method::GET,
        &format!("/api/v1/configmaps?limit=1&continue={token}&resourceVersion=5"),
        &Value::Null,
    )
    .await;
    assert_eq!(
        (status, status_of(&body).2),
        (
            StatusCode::BAD_REQUEST,
            "specifying resource version is not allowed when using continue"
        )
    );
}

/// A token whose revision was compacted away is etcd's 410 for paging, which carries a token
/// to go on from the same key at the newest revision.
#[tokio::test]
async fn an_expired_continue_token_comes_back_with_one_for_the_rest_at_the_newest_revision() {
    let server = server_with(&[("default", "a"), ("default", "b"), ("default", "c")]).await;
    let (_, page) = http_support::json(
        &server,
        Method::GET,
        &format!("{CMS}?limit=1"),
        &Value::Null,
    )
    .await;
    let token = page["metadata"]["continue"].as_str().unwrap().to_string();
    // A write after the first page, then a compaction: the page's revision is gone.
    let (status, _) = http_support::json(
        &server,
        Method::POST,
        CMS,
        &json!({"metadata": {"name": "d", "labels": {"set": "test"}}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    server.compact();
    let (status, expired) = http_support::json(
        &server,
        Method::GET,
        &format!("{CMS}?limit=1&labelSelector=set%3Dtest&continue={token}"),
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::GONE);
    assert_eq!(expired["reason"], "Expired");
    assert!(expired["message"]
        .as_str()
        .unwrap()
        .starts_with("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response"));
    let fresh = expired["metadata"]["continue"].as_str().unwrap();
    let (status, rest) = http_support::json(
        &server,
        Method::GET,
        &format!("{CMS}?labelSelector=set%3Dtest&continue={fresh}"),
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{rest}");
    let names: Vec<&str> = rest["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    // The rest, at the newest revision: the object written in between is there too.
    assert_eq!(names, ["b", "c", "d"]);
    // An exact read of a compacted revision is etcd's plain `expired`.
    let (status, body) = http_support::json(
        &server,
        Method::GET,
        &format!("{CMS}?resourceVersion=1&resourceVersionMatch=Exact"),
        &Value::Null,
    )
    .await;
    assert_eq!(
        (status, status_of(&body).2),
        (
            StatusCode::GONE,
            "The resourceVersion for the provided list is too old."
        )
    );
}

#[rstest]
// The registry reads the sent revision with `strconv.ParseUint` and compares numbers.
#[case::update_signed(Method::PUT, "/a", json!({"metadata": {"name": "a", "resourceVersion": "+1"}}), 500)]
#[case::update_malformed(Method::PUT, "/a", json!({"metadata": {"name": "a", "resourceVersion": "x"}}), 500)]
// etcd refuses a create only for a revision it reads as a number other than 0.
#[case::create_numbered(Method::POST, "", json!({"metadata": {"name": "n", "resourceVersion": "7"}}), 500)]
#[case::create_zero(Method::POST, "", json!({"metadata": {"name": "n", "resourceVersion": "0"}}), 201)]
#[case::create_malformed(Method::POST, "", json!({"metadata": {"name": "n", "resourceVersion": "x"}}), 201)]
#[tokio::test]
async fn written_resource_versions_are_read_as_storage_reads_them(
    #[case] method: Method,
    #[case] path: &str,
    #[case] body: Value,
    #[case] code: u16,
) {
    let server = server_with(&[("default", "a")]).await;
    let (status, answer) =
        http_support::json(&server, method, &format!("{CMS}{path}"), &body).await;
    assert_eq!(status.as_u16(), code, "{answer}");
    if code == 500 {
        assert_eq!(answer["reason"], Value::Null);
        assert!(
            answer["message"]
                .as_str()
                .unwrap()
                .starts_with("strconv.ParseUint")
                || answer["message"]
                    == "resourceVersion should not be set on objects to be created",
            "{answer}"
        );
    }
}

#[tokio::test]
async fn an_update_s_revision_is_compared_as_a_number() {
    let server = server_with(&[("default", "a")]).await;
    let (_, current) =
        http_support::json(&server, Method::GET, &format!("{CMS}/a"), &Value::Null).await;
    let rv = current["metadata"]["resourceVersion"].as_str().unwrap();
    let (status, body) = http_support::json(
        &server,
        Method::PUT,
        &format!("{CMS}/a"),
        &json!({"metadata": {"name": "a", "resourceVersion": format!("00{rv}")}, "data": {"k": "v"}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["k"], "v");
}

/// A `timeout` Go's `time.ParseDuration` cannot read is refused before anything is done
/// (`WithRequestDeadline`), with the filter's words and Go's; a readable one is taken.
#[tokio::test]
async fn an_unreadable_timeout_is_refused_before_the_request_runs() {
    let server = FakeApiServer::new();
    let configmaps = "/api/v1/namespaces/default/configmaps";
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"}});
    let (status, refusal) = http_support::json(
        &server,
        Method::POST,
        &format!("{configmaps}?timeout=abc"),
        &body,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refusal}");
    assert_eq!(refusal["reason"], "BadRequest");
    assert_eq!(
        refusal["message"],
        r#"invalid timeout specified in the request URL - time: invalid duration "abc""#
    );
    let (status, _) = http_support::json(
        &server,
        Method::GET,
        &format!("{configmaps}/t"),
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing was created");
    let (status, refusal) = http_support::json(
        &server,
        Method::GET,
        &format!("{configmaps}?timeout=1d"),
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        refusal["message"],
        r#"invalid timeout specified in the request URL - time: unknown unit "d" in duration "1d""#
    );
    let (status, created) = http_support::json(
        &server,
        Method::POST,
        &format!("{configmaps}?timeout=30s"),
        &body,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
}
