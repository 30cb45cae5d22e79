//! Authentication: who sent a request. A bearer token is looked up among the static tokens
//! (`--token-auth-file`) and the service account tokens this server issued; a token that is
//! neither (or expired, or whose service account is gone) is a `401 Unauthorized`, as on a real
//! server. A request without credentials is `system:anonymous` when authentication is on (or a
//! 401 when anonymous requests are off), and the cluster admin when it is off.
//!
//! Service account tokens are JWT-shaped strings the server remembers (their signature is not
//! verifiable): each records the service account (namespace, name, uid), its audiences, its
//! expiry and its unique id, and is checked against them on every use, as the real server checks
//! a bound token's claims. The same check answers a `TokenReview` ([`authenticate_token`]),
//! for the audiences the review asks about.

use std::collections::BTreeMap;
use std::sync::Mutex;

use http::{header, HeaderMap};

use super::user::{go_quote_list, UserInfo};
use super::AuthConfig;
use crate::context::Shared;
use crate::error::ApiError;

/// The audience the server's API accepts when a TokenRequest names none (the real server's
/// default `--api-audiences`, its service account issuer).
pub const API_AUDIENCE: &str = "https://kubernetes.default.svc.cluster.local";

/// A service account token the server issued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedToken {
    /// Namespace of the service account.
    pub namespace: String,
    /// Name of the service account.
    pub name: String,
    /// Uid of the service account when the token was issued.
    pub uid: String,
    /// Audiences the token is for.
    pub audiences: Vec<String>,
    /// When it stops being valid.
    pub expires: jiff::Timestamp,
    /// The token's unique id (its `jti` claim), which the user carries as its credential id.
    pub jti: String,
}

/// The tokens issued so far.
#[derive(Debug, Default)]
pub(crate) struct IssuedTokens {
    tokens: Mutex<BTreeMap<String, IssuedToken>>,
}

impl IssuedTokens {
    /// Remembers a token.
    pub(crate) fn insert(&self, token: String, issued: IssuedToken) {
        self.tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token, issued);
    }

    fn get(&self, token: &str) -> Option<IssuedToken> {
        self.tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(token)
            .cloned()
    }
}

/// `401 Unauthorized`, the real server's body.
pub fn unauthorized() -> ApiError {
    ApiError::new(401, "Unauthorized", "Unauthorized")
}

/// The bearer token of a request: `Some(Ok(token))`, `Some(Err)` for `Bearer` with no token, or
/// `None` when the request carries no bearer token (no opinion, as the real authenticator).
fn bearer_token(headers: &HeaderMap) -> Option<Result<&str, ApiError>> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = token.trim();
    if token.is_empty() {
        return Some(Err(unauthorized()));
    }
    Some(Ok(token))
}

/// Authenticates a request from its headers.
pub(crate) fn authenticate(
    shared: &Shared,
    config: &AuthConfig,
    headers: &HeaderMap,
) -> Result<UserInfo, ApiError> {
    let Some(token) = bearer_token(headers) else {
        if !config.authentication {
            return Ok(UserInfo::admin());
        }
        if config.anonymous_auth {
            return Ok(UserInfo::anonymous());
        }
        return Err(unauthorized());
    };
    let token = token?;
    match authenticate_token(shared, config, token, &[API_AUDIENCE.to_string()]) {
        Ok(authenticated) => Ok(authenticated.user),
        Err(error) => {
            tracing::debug!(%error, "bearer token refused");
            Err(unauthorized())
        }
    }
}

/// Who a bearer token is, for the audiences it was checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TokenUser {
    /// The user, `system:authenticated` included.
    pub user: UserInfo,
    /// The asked-for audiences the token is valid for (for a static token, which has none of
    /// its own, the API's audience when it was asked for).
    pub audiences: Vec<String>,
}

/// The error of a token nobody knows (the bearer token authenticator's `invalidToken`).
const INVALID_TOKEN: &str = "invalid bearer token";

/// Authenticates a bearer token for the `requested` audiences, as the real authenticator chain
/// does for a request (the API's audience) or a `TokenReview` (the audiences it names). The
/// error is the chain's message: `invalid bearer token` for a token nobody issued, and for a
/// service account token that fails its checks the union's two messages, e.g.
/// `[invalid bearer token, service account token has expired]`.
pub(crate) fn authenticate_token(
    shared: &Shared,
    config: &AuthConfig,
    token: &str,
    requested: &[String],
) -> Result<TokenUser, String> {
    if let Some(user) = config.static_tokens.lookup(token) {
        // An audience-agnostic authenticator answers only for the API's own audience.
        if !requested.iter().any(|a| a == API_AUDIENCE) {
            return Err(INVALID_TOKEN.into());
        }
        let mut user = user.clone();
        user.add_authenticated_group();
        return Ok(TokenUser {
            user,
            audiences: vec![API_AUDIENCE.to_string()],
        });
    }
    let Some(issued) = shared.auth.issued.get(token) else {
        return Err(INVALID_TOKEN.into());
    };
    service_account_user(shared, &issued, requested)
        .map_err(|reason| format!("[{INVALID_TOKEN}, {reason}]"))
}

/// The user of a service account token, if it is valid for one of the `requested` audiences,
/// not expired, and its service account still the one it was issued for; otherwise the
/// service account authenticator's reason (`pkg/serviceaccount/jwt.go` checks the audiences
/// first, then `claims.go` the expiry and the account).
fn service_account_user(
    shared: &Shared,
    issued: &IssuedToken,
    requested: &[String],
) -> Result<TokenUser, String> {
    let audiences: Vec<String> = issued
        .audiences
        .iter()
        .filter(|a| requested.contains(a))
        .cloned()
        .collect();
    if audiences.is_empty() {
        return Err(format!(
            "token audiences {} is invalid for the target audiences {}",
            go_quote_list(&issued.audiences),
            go_quote_list(requested)
        ));
    }
    if shared.now() >= issued.expires {
        return Err("service account token has expired".into());
    }
    let invalidated = || "service account token has been invalidated".to_string();
    let account = shared
        .store
        .get_value("/serviceaccounts", &issued.namespace, &issued.name)
        .ok_or_else(invalidated)?;
    let uid = account["metadata"]["uid"].as_str().unwrap_or_default();
    if account["metadata"].get("deletionTimestamp").is_some() {
        return Err(invalidated());
    }
    if uid != issued.uid {
        return Err(format!(
            "service account UID ({uid}) does not match claim ({})",
            issued.uid
        ));
    }
    let mut user = UserInfo::service_account(&issued.namespace, &issued.name, uid);
    user.extra.insert(
        CREDENTIAL_ID_KEY.to_string(),
        vec![format!("JTI={}", issued.jti)],
    );
    Ok(TokenUser { user, audiences })
}

/// The extra key under which a service account token's user carries the token's id.
pub const CREDENTIAL_ID_KEY: &str = "authentication.kubernetes.io/credential-id";
