//! `POST /api/v1/namespaces/NS/serviceaccounts/NAME/token` (TokenRequest, what `kubectl create
//! token` sends): issues a token for the service account, as the real server's token
//! subresource does. `spec.expirationSeconds` defaults to an hour and must be between ten
//! minutes and 2^32 seconds; `spec.audiences` defaults to the server's API audience. The token
//! reads as kube-apiserver's: a JWT whose claims name the service account, its audiences and
//! its lifetime ([`service_account_jwt`]); the server authenticates it by looking it up (see
//! [`super::authn`]), so it works until it expires or the service account is deleted.

use serde_json::{json, Value};

use super::authn::{IssuedToken, API_AUDIENCE};
use crate::error::ApiError;
use crate::rules::validation::Cause;
use crate::FakeApiServer;

const GROUP: &str = "authentication.k8s.io";
const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
const MIN_EXPIRATION_SECONDS: i64 = 600;
const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;

/// Answers a TokenRequest for the service account `namespace/name`.
pub fn create_token(
    server: &FakeApiServer,
    namespace: &str,
    name: &str,
    mut request: Value,
) -> Result<Value, ApiError> {
    match (request["apiVersion"].as_str(), request["kind"].as_str()) {
        (None | Some(""), _) | (_, None | Some("")) => {}
        (Some("authentication.k8s.io/v1"), Some("TokenRequest")) => {}
        (Some(v), Some(k)) => {
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type TokenRequest): {k} in version {v:?}"
            )))
        }
    }
    let spec = &mut request["spec"];
    if !spec.is_object() {
        *spec = json!({});
    }
    let expiration = match &spec["expirationSeconds"] {
        Value::Null => DEFAULT_EXPIRATION_SECONDS,
        v => v
            .as_i64()
            .ok_or_else(|| ApiError::bad_request("spec.expirationSeconds must be an integer"))?,
    };
    let mut causes = Vec::new();
    if expiration < MIN_EXPIRATION_SECONDS {
        causes.push(Cause::invalid(
            "spec.expirationSeconds",
            &json!(expiration),
            "may not specify a duration less than 10 minutes",
        ));
    }
    if expiration > MAX_EXPIRATION_SECONDS {
        causes.push(Cause::invalid(
            "spec.expirationSeconds",
            &json!(expiration),
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid(GROUP, "TokenRequest", "", causes));
    }
    let mut audiences: Vec<String> = spec["audiences"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if audiences.is_empty() {
        audiences = vec![API_AUDIENCE.to_string()];
    }
    let shared = &server.shared;
    let account = shared
        .store
        .get_value("/serviceaccounts", namespace, name)
        .ok_or_else(|| ApiError::not_found("", "serviceaccounts", name))?;
    let uid = account["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let now = shared.now();
    let expires = now
        .checked_add(jiff::SignedDuration::from_secs(expiration))
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let jti = shared.new_uid();
    let token = service_account_jwt(
        server,
        &Claims {
            namespace,
            name,
            uid: &uid,
            audiences: &audiences,
            issued: now,
            expires,
            jti: &jti,
        },
    );
    shared.auth.issued.insert(
        token.clone(),
        IssuedToken {
            namespace: namespace.to_string(),
            name: name.to_string(),
            uid,
            audiences: audiences.clone(),
            expires,
            jti,
        },
    );
    let spec = &mut request["spec"];
    spec["audiences"] = json!(audiences);
    spec["expirationSeconds"] = json!(expiration);
    if spec.get("boundObjectRef").is_none() {
        spec["boundObjectRef"] = Value::Null;
    }
    request["apiVersion"] = json!("authentication.k8s.io/v1");
    request["kind"] = json!("TokenRequest");
    // (No `creationTimestamp`: a zero one is not written, `omitzero`.)
    request["metadata"] = json!({"name": name, "namespace": namespace});
    request["status"] = json!({
        "token": token,
        "expirationTimestamp": crate::registry::semantics::format_time(expires),
    });
    Ok(request)
}

/// What a service account token says.
struct Claims<'a> {
    namespace: &'a str,
    name: &'a str,
    uid: &'a str,
    audiences: &'a [String],
    issued: jiff::Timestamp,
    expires: jiff::Timestamp,
    jti: &'a str,
}

/// A token shaped as kube-apiserver issues it (`pkg/serviceaccount/claims.go`): a JWT,
/// `header.claims.signature` in unpadded base64url, with the issuer, subject
/// (`system:serviceaccount:NS:NAME`), audiences, issue, not-before and expiry times, a unique
/// id, and the `kubernetes.io` claim naming the namespace and service account. The signature
/// is seeded random bytes the size of an RS256 one: a client can decode the token but nobody
/// can verify it, and the server accepts it only because it issued it.
fn service_account_jwt(server: &FakeApiServer, claims: &Claims<'_>) -> String {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    let shared = &server.shared;
    let header = json!({"alg": "RS256", "kid": "fake-apiserver"});
    let body = json!({
        "aud": claims.audiences,
        "exp": claims.expires.as_second(),
        "iat": claims.issued.as_second(),
        "iss": API_AUDIENCE,
        "jti": claims.jti,
        "kubernetes.io": {
            "namespace": claims.namespace,
            "serviceaccount": {"name": claims.name, "uid": claims.uid},
        },
        "nbf": claims.issued.as_second(),
        "sub": format!("system:serviceaccount:{}:{}", claims.namespace, claims.name),
    });
    let mut signature = [0u8; 256];
    shared.fill_random(&mut signature);
    format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(body.to_string()),
        URL_SAFE_NO_PAD.encode(signature)
    )
}

/// Issues a token for `namespace/name` valid for `seconds`, for the in-process client.
pub(crate) fn issue(
    server: &FakeApiServer,
    namespace: &str,
    name: &str,
    seconds: i64,
) -> Result<String, ApiError> {
    let answer = create_token(
        server,
        namespace,
        name,
        json!({"spec": {"expirationSeconds": seconds}}),
    )?;
    answer["status"]["token"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| ApiError::internal("no token issued"))
}
