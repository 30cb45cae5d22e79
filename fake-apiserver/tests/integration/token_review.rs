//! `TokenReview` (`authentication.k8s.io/v1`), what admission webhooks and auth proxies ask the
//! API server about a bearer token: service account tokens the server issued and static tokens
//! authenticate for the audiences the review names, and a token that does not is answered with
//! the authenticator chain's error, not refused. Checked against
//! `pkg/registry/authentication/tokenreview/storage.go` and `pkg/serviceaccount/{jwt,claims}.go`.

use crate::http_support;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use axum::http::{Method, StatusCode};
use fake_apiserver::auth::StaticTokens;
use fake_apiserver::FakeApiServer;
use http_support::json;
use rstest::rstest;
use serde_json::{json, Value};

const REVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
const API_AUDIENCE: &str = "https://kubernetes.default.svc.cluster.local";

/// A server with one static token and a clock the test moves (seconds since the epoch).
fn server(now: Arc<AtomicI64>) -> FakeApiServer {
    FakeApiServer::builder()
        .static_tokens(
            StaticTokens::parse("tokens.csv", "alice-token,alice,u-alice,\"dev,qa\"\n")
                .expect("token file"),
        )
        .clock(move || {
            jiff::Timestamp::from_second(now.load(Ordering::SeqCst)).expect("a valid time")
        })
        .build()
}

/// Reviews `token` for `audiences` (none: the field is left out); the answer's status.
async fn review(server: &FakeApiServer, token: &str, audiences: &[&str]) -> Value {
    let mut spec = json!({"token": token});
    if !audiences.is_empty() {
        spec["audiences"] = json!(audiences);
    }
    let body =
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec});
    let (status, answer) = json(server, Method::POST, REVIEWS, &body).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["kind"], "TokenReview");
    assert_eq!(answer["spec"]["token"], token, "the review is echoed back");
    // A zero creationTimestamp is `omitzero`: the metadata is empty.
    assert_eq!(answer["metadata"], json!({}), "{answer}");
    answer["status"].clone()
}

/// Issues a token for `default/reviewer` for `audiences` (none: the API's).
async fn issue(server: &FakeApiServer, audiences: &[&str]) -> String {
    let (status, answer) = json(
        server,
        Method::POST,
        "/api/v1/namespaces/default/serviceaccounts/reviewer/token",
        &json!({"spec": {"audiences": audiences}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    answer["status"]["token"]
        .as_str()
        .expect("a token")
        .to_string()
}

/// The `jti` claim of a JWT.
fn jti_of(token: &str) -> String {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    let claims = token.split('.').nth(1).expect("a JWT");
    let claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).expect("base64url")).expect("JSON");
    claims["jti"].as_str().expect("a jti").to_string()
}

#[tokio::test]
async fn service_account_tokens_are_reviewed_for_their_audiences_and_lifetime() {
    let now = Arc::new(AtomicI64::new(1_800_000_000));
    let server = server(now.clone());
    let (status, account) = json(
        &server,
        Method::POST,
        "/api/v1/namespaces/default/serviceaccounts",
        &json!({"metadata": {"name": "reviewer"}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{account}");
    let uid = account["metadata"]["uid"]
        .as_str()
        .expect("a uid")
        .to_string();

    // A token for the API: the user is the service account's, with the token's id.
    let token = issue(&server, &[]).await;
    let status = review(&server, &token, &[]).await;
    assert_eq!(
        status,
        json!({
            "authenticated": true,
            "user": {
                "username": "system:serviceaccount:default:reviewer",
                "uid": uid,
                "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
                "extra": {"authentication.kubernetes.io/credential-id": [format!("JTI={}", jti_of(&token))]},
            },
            "audiences": [API_AUDIENCE],
        })
    );

    // A token for another audience is valid for that audience only; the answer names the
    // audiences both sides share.
    let vault = issue(&server, &["vault", "other"]).await;
    let status = review(&server, &vault, &["vault", "consul"]).await;
    assert_eq!(status["authenticated"], true);
    assert_eq!(status["audiences"], json!(["vault"]));
    let status = review(&server, &vault, &[]).await;
    assert_eq!(
        status,
        json!({
            "user": {},
            "error": format!("[invalid bearer token, token audiences [\"vault\" \"other\"] is invalid for the target audiences [\"{API_AUDIENCE}\"]]"),
        })
    );
    // ... and such a token does not authenticate requests to the API.
    let request = axum::http::Request::builder()
        .uri("/api/v1/namespaces")
        .header("authorization", format!("Bearer {vault}"))
        .body(axum::body::Body::empty())
        .expect("a request");
    let response = tower::ServiceExt::oneshot(server.router(), request)
        .await
        .expect("an answer");
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);

    // An hour later the first token has expired (the default lifetime is an hour).
    now.fetch_add(3600, Ordering::SeqCst);
    assert_eq!(
        review(&server, &token, &[]).await,
        json!({"user": {}, "error": "[invalid bearer token, service account token has expired]"})
    );

    // A fresh token dies with its service account.
    let fresh = issue(&server, &[]).await;
    assert_eq!(review(&server, &fresh, &[]).await["authenticated"], true);
    let (status, _) = json(
        &server,
        Method::DELETE,
        "/api/v1/namespaces/default/serviceaccounts/reviewer",
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        review(&server, &fresh, &[]).await,
        json!({"user": {}, "error": "[invalid bearer token, service account token has been invalidated]"})
    );
    // A new account of the same name is another account (another uid).
    json(
        &server,
        Method::POST,
        "/api/v1/namespaces/default/serviceaccounts",
        &json!({"metadata": {"name": "reviewer"}}),
    )
    .await;
    let error = review(&server, &fresh, &[]).await["error"].clone();
    assert!(
        error.as_str().is_some_and(|e| e
            .starts_with("[invalid bearer token, service account UID (")
            && e.ends_with(&format!("does not match claim ({uid})]"))),
        "{error}"
    );
}

#[rstest]
#[case::static_token_for_the_api("alice-token", &[], json!({
    "authenticated": true,
    "user": {"username": "alice", "uid": "u-alice", "groups": ["dev", "qa", "system:authenticated"]},
    "audiences": [API_AUDIENCE],
}))]
#[case::static_token_for_another_audience("alice-token", &["vault"], json!({"user": {}, "error": "invalid bearer token"}))]
#[case::unknown_token("no-such-token", &[], json!({"user": {}, "error": "invalid bearer token"}))]
#[tokio::test]
async fn other_tokens_are_answered_as_the_authenticator_chain_answers(
    #[case] token: &str,
    #[case] audiences: &[&str],
    #[case] expected: Value,
) {
    let server = server(Arc::new(AtomicI64::new(1_800_000_000)));
    assert_eq!(review(&server, token, audiences).await, expected);
}

#[tokio::test]
async fn a_review_without_a_token_is_a_bad_request_and_the_resource_is_discoverable() {
    let server = server(Arc::new(AtomicI64::new(1_800_000_000)));
    let (status, answer) = json(
        &server,
        Method::POST,
        REVIEWS,
        &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {}}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(answer["reason"], "BadRequest");
    assert_eq!(
        answer["message"],
        "token is required for TokenReview in authentication"
    );

    let (status, list) = json(
        &server,
        Method::GET,
        "/apis/authentication.k8s.io/v1",
        &Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let resource = list["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == "tokenreviews"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(resource["kind"], "TokenReview", "{list}");
    assert_eq!(resource["namespaced"], false);
    assert_eq!(resource["verbs"], json!(["create"]));
    // Only create is served.
    let (status, _) = json(&server, Method::GET, REVIEWS, &Value::Null).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
}
