//! Authentication: who sent a request. A bearer token is looked up among the static tokens
//! (`--token-auth-file`) and the service account tokens this server issued; a token that is
//! neither (or expired, or whose service account is gone) is a `401 Unauthorized`, as on a real
//! server. A request without credentials is `system:anonymous` when authentication is on (or a
//! 401 when anonymous requests are off), and the cluster admin when it is off.
//!
//! Service account tokens are opaque strings the server remembers (not JWTs): each records the
//! service account (namespace, name, uid), its audiences and its expiry, and is checked against
//! all three on every use, as the real server checks a bound token's claims.

use std::collections::BTreeMap;
use std::sync::Mutex;

use http::{header, HeaderMap};

use super::user::UserInfo;
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
    if let Some(user) = config.static_tokens.lookup(token) {
        let mut user = user.clone();
        user.add_authenticated_group();
        return Ok(user);
    }
    let Some(issued) = shared.auth.issued.get(token) else {
        tracing::debug!("unknown bearer token");
        return Err(unauthorized());
    };
    service_account_user(shared, &issued).ok_or_else(unauthorized)
}

/// The user of a service account token, if it is still valid: not expired, for an audience of
/// this server, and its service account still the one it was issued for.
fn service_account_user(shared: &Shared, issued: &IssuedToken) -> Option<UserInfo> {
    if shared.now() >= issued.expires {
        tracing::debug!(sa = %issued.name, "service account token expired");
        return None;
    }
    if !issued.audiences.iter().any(|a| a == API_AUDIENCE) {
        tracing::debug!(sa = %issued.name, "service account token for another audience");
        return None;
    }
    let account = shared
        .store
        .get_value("/serviceaccounts", &issued.namespace, &issued.name)?;
    let uid = account["metadata"]["uid"].as_str().unwrap_or_default();
    if uid != issued.uid || account["metadata"].get("deletionTimestamp").is_some() {
        tracing::debug!(sa = %issued.name, "service account of a token was deleted");
        return None;
    }
    Some(UserInfo::service_account(
        &issued.namespace,
        &issued.name,
        uid,
    ))
}
