//! Hooks for tests and the race harness: a request gate that can hold any request until released,
//! fault rules that answer matching requests with an error, and a switch that drops open watches.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use crate::error::ApiError;

/// What a request is, as the hooks see it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestInfo {
    /// HTTP method.
    pub method: String,
    /// Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection, or
    /// `nonresource` for discovery and health paths.
    pub verb: String,
    /// API group of the resource (empty for core).
    pub group: String,
    /// Resource plural (empty for non-resource requests).
    pub resource: String,
    /// Subresource, e.g. `status`.
    pub subresource: Option<String>,
    /// Namespace from the URL.
    pub namespace: Option<String>,
    /// Object name from the URL.
    pub name: Option<String>,
    /// The request path.
    pub path: String,
    /// Which client sent it (its `User-Agent`), when known.
    pub user_agent: String,
}

/// A boxed future, as the gate returns.
pub type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Decides when a request may proceed. The future it returns holds the request until it resolves.
pub trait RequestGate: Send + Sync + 'static {
    /// Called once per request before it is handled.
    fn admit(&self, request: &RequestInfo) -> BoxFuture;
}

/// Which requests a fault rule applies to; `None` fields match anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestMatcher {
    /// Verb to match.
    pub verb: Option<String>,
    /// Resource plural to match.
    pub resource: Option<String>,
    /// Subresource to match (`Some("")` matches only requests without one).
    pub subresource: Option<String>,
    /// Namespace to match.
    pub namespace: Option<String>,
    /// Name to match.
    pub name: Option<String>,
    /// User agent prefix to match.
    pub user_agent_prefix: Option<String>,
}

impl RequestMatcher {
    /// Whether `request` matches.
    pub fn matches(&self, request: &RequestInfo) -> bool {
        let eq = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        eq(&self.verb, &request.verb)
            && eq(&self.resource, &request.resource)
            && eq(
                &self.subresource,
                request.subresource.as_deref().unwrap_or_default(),
            )
            && eq(
                &self.namespace,
                request.namespace.as_deref().unwrap_or_default(),
            )
            && eq(&self.name, request.name.as_deref().unwrap_or_default())
            && self
                .user_agent_prefix
                .as_deref()
                .is_none_or(|p| request.user_agent.starts_with(p))
    }
}

/// A rule: answer matching requests with `error`, `times` times (or forever).
#[derive(Debug, Clone)]
pub struct FaultRule {
    /// Which requests it applies to.
    pub matcher: RequestMatcher,
    /// The answer.
    pub error: ApiError,
    /// How many more requests it applies to; `None` for every one.
    pub times: Option<u32>,
}

/// The set of active fault rules.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    rules: Arc<Mutex<Vec<FaultRule>>>,
}

impl Faults {
    /// Adds a rule.
    pub fn add(&self, rule: FaultRule) {
        self.rules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(rule);
    }

    /// Removes every rule.
    pub fn clear(&self) {
        self.rules.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// The error to answer `request` with, consuming one use of the first matching rule.
    pub fn take(&self, request: &RequestInfo) -> Option<ApiError> {
        let mut rules = self.rules.lock().unwrap_or_else(|e| e.into_inner());
        let index = rules.iter().position(|r| r.matcher.matches(request))?;
        let error = rules[index].error.clone();
        if let Some(times) = rules[index].times.as_mut() {
            *times = times.saturating_sub(1);
            if *times == 0 {
                rules.remove(index);
            }
        }
        Some(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counted_rule_runs_out() {
        let faults = Faults::default();
        faults.add(FaultRule {
            matcher: RequestMatcher {
                verb: Some("update".into()),
                resource: Some("pods".into()),
                ..Default::default()
            },
            error: ApiError::internal("boom"),
            times: Some(2),
        });
        let req = RequestInfo {
            verb: "update".into(),
            resource: "pods".into(),
            ..Default::default()
        };
        let other = RequestInfo {
            verb: "get".into(),
            resource: "pods".into(),
            ..Default::default()
        };
        assert!(faults.take(&other).is_none());
        assert!(faults.take(&req).is_some());
        assert!(faults.take(&req).is_some());
        assert!(faults.take(&req).is_none());
    }

    #[test]
    fn subresource_matching() {
        let m = RequestMatcher {
            subresource: Some(String::new()),
            ..Default::default()
        };
        let main = RequestInfo::default();
        let status = RequestInfo {
            subresource: Some("status".into()),
            ..Default::default()
        };
        assert!(m.matches(&main));
        assert!(!m.matches(&status));
    }
}
