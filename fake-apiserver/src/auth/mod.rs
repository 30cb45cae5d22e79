//! Authentication, authorization and the admission checks tied to them, as a real API server
//! applies them, all off by default (every request is the cluster admin and allowed, as before).
//!
//! - [`authn`]: bearer tokens (static ones from `--token-auth-file`, service account tokens the
//!   server issued through [`token_request`]), anonymous requests, `401 Unauthorized`.
//! - [`impersonation`]: `Impersonate-*` headers, each authorized with the `impersonate` verb.
//! - [`attributes`]: what a request asks to do, and the real `403 Forbidden` message.
//! - [`rbac`]: RBAC evaluation from the stored roles and bindings ([`policy_cache`] keeps the
//!   index), with `system:masters` always allowed as on a real server.
//! - [`escalation`]: writing a role or binding may not grant more than the writer holds
//!   (`escalate`, `bind`).
//! - [`reviews`]: `SelfSubjectAccessReview`, `SubjectAccessReview`,
//!   `LocalSubjectAccessReview`, `SelfSubjectRulesReview`, answered from the same rules.
//! - [`bootstrap`]: the roles and bindings a real server creates at start; [`aggregation`] the
//!   ClusterRole aggregation controller.
//! - [`admission`]: the ServiceAccount admission plugin.
//!
//! The [`filter`] runs before every request (one axum middleware); handlers read who the
//! request is from with [`request_user`].

pub mod admission;
pub mod aggregation;
pub mod attributes;
pub mod authn;
pub mod bootstrap;
pub mod escalation;
pub mod impersonation;
mod policy_cache;
pub mod rbac;
pub mod reviews;
pub mod token_file;
pub mod token_request;
pub mod user;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

pub use attributes::Attributes;
pub use rbac::Decision;
pub use token_file::StaticTokens;
pub use user::UserInfo;

use crate::context::{FakeApiServer, Shared};
use crate::http::request::Query;

/// How requests are authorized (the real `--authorization-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthorizationMode {
    /// Every request is allowed.
    #[default]
    AlwaysAllow,
    /// RBAC from the stored roles and bindings.
    Rbac,
}

impl std::str::FromStr for AuthorizationMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "AlwaysAllow" => Ok(Self::AlwaysAllow),
            "RBAC" => Ok(Self::Rbac),
            other => Err(format!(
                "authorization mode {other:?} is not supported (AlwaysAllow or RBAC)"
            )),
        }
    }
}

/// How the server authenticates, authorizes and admits requests.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// When on, a request without credentials is anonymous (or refused, see
    /// [`AuthConfig::anonymous_auth`]); when off (the default) it is the cluster admin
    /// (`system:admin` in `system:masters`). Tokens and impersonation are honoured either way.
    pub authentication: bool,
    /// Whether anonymous requests are let through as `system:anonymous` (the real
    /// `--anonymous-auth`, on by default) rather than refused with 401.
    pub anonymous_auth: bool,
    /// Static bearer tokens (`--token-auth-file`).
    pub static_tokens: StaticTokens,
    /// The authorizer.
    pub authorization_mode: AuthorizationMode,
    /// Whether the ServiceAccount admission plugin runs (pods must name an existing service
    /// account, `default` when they name none).
    pub service_account_admission: bool,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            authentication: false,
            anonymous_auth: true,
            static_tokens: StaticTokens::default(),
            authorization_mode: AuthorizationMode::AlwaysAllow,
            service_account_admission: false,
        }
    }
}

/// The server's authentication and authorization state.
pub(crate) struct AuthState {
    pub(crate) config: AuthConfig,
    pub(crate) issued: authn::IssuedTokens,
    policy: policy_cache::PolicyCache,
    /// The messages of the latest requests the authorizer refused, oldest first.
    denials: std::sync::Mutex<std::collections::VecDeque<String>>,
}

/// How many refusals [`AuthState`] remembers.
const KEPT_DENIALS: usize = 1000;

impl AuthState {
    pub(crate) fn new(config: AuthConfig) -> Self {
        Self {
            config,
            issued: Default::default(),
            policy: policy_cache::PolicyCache::new(),
            denials: Default::default(),
        }
    }

    /// Remembers a refusal.
    pub(crate) fn record_denial(&self, message: &str) {
        let mut denials = self.denials.lock().unwrap_or_else(|e| e.into_inner());
        if denials.len() == KEPT_DENIALS {
            denials.pop_front();
        }
        denials.push_back(message.to_string());
    }

    /// The remembered refusals, oldest first.
    pub(crate) fn denials(&self) -> Vec<String> {
        let denials = self.denials.lock().unwrap_or_else(|e| e.into_inner());
        denials.iter().cloned().collect()
    }

    /// Forgets cached RBAC state (after the store was replaced).
    pub(crate) fn invalidate(&self) {
        self.policy.invalidate();
    }
}

/// Who a request is from, as the filter found it; handlers read it with [`request_user`].
#[derive(Debug, Clone)]
pub(crate) struct RequestUser(pub(crate) Arc<UserInfo>);

/// An identity an in-process client sets on its requests (it cannot come over the network).
#[derive(Debug, Clone)]
pub(crate) struct InProcessUser(pub(crate) Arc<UserInfo>);

/// Who the request is from: the filter's answer, else (the filter let it through unexamined,
/// which it does only while authentication is off) the cluster admin.
pub(crate) fn request_user(extensions: &http::Extensions) -> Arc<UserInfo> {
    static ADMIN: std::sync::LazyLock<Arc<UserInfo>> =
        std::sync::LazyLock::new(|| Arc::new(UserInfo::admin()));
    match extensions.get::<RequestUser>() {
        Some(user) => user.0.clone(),
        None => ADMIN.clone(),
    }
}

/// Whether the configured authorizer allows the request.
pub(crate) fn authorize(shared: &Shared, attrs: &Attributes) -> Decision {
    authorizer(shared).authorize(attrs)
}

/// The configured authorizer as it stands now, kept to be asked later (the CEL `authorizer`
/// of an admission policy asks it while the write it judges holds the store).
pub(crate) fn authorizer(shared: &Shared) -> Authorizer {
    let rbac = (shared.auth.config.authorization_mode != AuthorizationMode::AlwaysAllow)
        .then(|| rbac_index(shared));
    Authorizer { rbac }
}

/// The server's authorizer chain: `system:masters` is allowed everything, then `AlwaysAllow`
/// or RBAC (as of when this was made).
#[derive(Clone)]
pub(crate) struct Authorizer {
    /// The RBAC index; `None` under `AlwaysAllow`.
    rbac: Option<Arc<rbac::RbacIndex>>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = if self.rbac.is_some() {
            "RBAC"
        } else {
            "AlwaysAllow"
        };
        f.debug_struct("Authorizer").field("mode", &mode).finish()
    }
}

impl Authorizer {
    /// An authorizer that allows everything (`AlwaysAllow`).
    #[cfg(test)]
    pub(crate) fn allow_all() -> Self {
        Authorizer { rbac: None }
    }

    /// Whether the request described by `attrs` is allowed, and why.
    pub(crate) fn authorize(&self, attrs: &Attributes) -> Decision {
        match &self.rbac {
            Some(index) if !attrs.user.in_group(user::MASTERS) => index.authorize(attrs),
            _ => Decision {
                allowed: true,
                reason: String::new(),
            },
        }
    }
}

/// The second check of a write that creates through `PATCH` (server-side apply on a missing
/// object) or `PUT`: the request was authorized as `patch`/`update`, and creating needs `create`
/// too, as the real handlers' `withAuthorization` asks. Refused with the real `403`:
/// `RESOURCE "NAME" is forbidden: REASON` (the authorizer's reason, empty from RBAC when no
/// binding failed to resolve).
pub(crate) fn authorize_create_on_update(
    shared: &Shared,
    user: &UserInfo,
    info: &crate::resource::ResourceInfo,
    namespace: &str,
    name: &str,
) -> Result<(), crate::error::ApiError> {
    let mut attrs =
        Attributes::resource(user, "create", &info.group, &info.plural, namespace, name);
    attrs.version = info.version.clone();
    let decision = authorize(shared, &attrs);
    if decision.allowed {
        return Ok(());
    }
    let refusal = attributes::forbidden_error(&info.group, &info.plural, name, &decision.reason);
    shared.auth.record_denial(&refusal.message);
    Err(refusal)
}

/// The current RBAC index.
pub(crate) fn rbac_index(shared: &Shared) -> Arc<rbac::RbacIndex> {
    shared.auth.policy.index(&shared.store)
}

/// The middleware in front of every request: authentication, impersonation, authorization.
/// With authentication off and `AlwaysAllow` a request without credentials or impersonation
/// headers passes untouched.
pub(crate) async fn filter(
    State(server): State<FakeApiServer>,
    mut request: Request,
    next: Next,
) -> Response {
    let shared = &server.shared;
    let config = &shared.auth.config;
    let in_process = request.extensions().get::<InProcessUser>().cloned();
    let has_token = request.headers().contains_key(http::header::AUTHORIZATION);
    let impersonating = impersonation::requested(request.headers());
    let always_allow = config.authorization_mode == AuthorizationMode::AlwaysAllow;
    if always_allow
        && !has_token
        && !impersonating
        && (in_process.is_some() || !config.authentication)
    {
        if let Some(user) = in_process {
            request.extensions_mut().insert(RequestUser(user.0));
        }
        return next.run(request).await;
    }
    let user = match in_process {
        Some(user) if !has_token => (*user.0).clone(),
        _ => match authn::authenticate(shared, config, request.headers()) {
            Ok(user) => user,
            Err(e) => return e.into_response(),
        },
    };
    let Some(path) = crate::http::request::decode_path(request.uri().path()).map(String::from)
    else {
        return crate::http::request::malformed_request();
    };
    let user = if impersonating {
        let checked = impersonation::impersonate(&user, request.headers(), &path, |attrs| {
            let decision = authorize(shared, attrs);
            (decision.allowed, decision.reason)
        });
        match checked {
            Ok(user) => user,
            Err(e) => {
                if e.code == 403 {
                    shared.auth.record_denial(&e.message);
                }
                return e.into_response();
            }
        }
    } else {
        user
    };
    let query = Query::parse(request.uri().query());
    let attrs = Attributes::from_request(&user, request.method(), &path, &query);
    let decision = authorize(shared, &attrs);
    if !decision.allowed {
        tracing::debug!(user = %user.name, verb = %attrs.verb, resource = %attrs.combined_resource(), path, "forbidden");
        let refusal = attrs.forbidden(&decision.reason);
        shared.auth.record_denial(&refusal.message);
        return refusal.into_response();
    }
    request.extensions_mut().insert(RequestUser(Arc::new(user)));
    next.run(request).await
}
