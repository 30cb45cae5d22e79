//! API errors and their `metav1.Status` bodies.
//!
//! Every failure the server reports leaves as a `Status` object with the code, reason and message a
//! real kube-apiserver gives for the same request, so kube-rs and kubectl report it the same way.

use serde_json::Value;

pub use crate::rules::validation::Cause as StatusCause;

/// An error answered to a client as a `metav1.Status`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `metav1.StatusReason`; empty for errors a real server reports without one (e.g. some 500s).
    pub reason: String,
    /// Human-readable message.
    pub message: String,
    /// `details.name`.
    pub name: Option<String>,
    /// `details.group`.
    pub group: Option<String>,
    /// `details.kind`.
    pub kind: Option<String>,
    /// `details.causes`.
    pub causes: Vec<StatusCause>,
    /// `details.retryAfterSeconds`.
    pub retry_after_seconds: Option<u32>,
    /// `details` is written even when it holds nothing (`"details":{}`), as Go writes a `Status`
    /// whose `Details` pointer is set but empty (`NewGenericServerResponse`).
    pub details_set: bool,
    /// `metadata.continue` of the `Status` (a list's ListMeta): the token a `410` for an expired
    /// continue token carries to go on with the rest of the list at the newest revision.
    pub list_continue: Option<String>,
}

impl ApiError {
    /// An error with a code, a reason and a message and no details.
    pub fn new(code: u16, reason: &str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.to_string(),
            message: message.into(),
            name: None,
            group: None,
            kind: None,
            causes: Vec::new(),
            retry_after_seconds: None,
            details_set: false,
            list_continue: None,
        }
    }

    /// Sets `details` to name the object (group, kind — which is the resource's plural for most
    /// errors, as the real server does — and name).
    pub fn with_details(mut self, group: &str, kind: &str, name: &str) -> Self {
        self.group = Some(group.to_string());
        self.kind = Some(kind.to_string());
        self.name = Some(name.to_string());
        self
    }

    /// Replaces the message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    /// `404 NotFound` for an object: `configmaps "x" not found`.
    pub fn not_found(group: &str, plural: &str, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", qualified(group, plural)),
        )
        .with_details(group, plural, name)
    }

    /// `404 NotFound` for a path inside one of the built-in API's routes (`/api/...`,
    /// `/apis/{built-in group}/...`) that no route of it matches: the real server's router answers
    /// it through `NewGenericServerResponse`, whose `Status` carries an empty `details`.
    pub fn no_route() -> Self {
        let mut error = Self::no_such_resource();
        error.details_set = true;
        error
    }

    /// `404 NotFound` for a path the server does not serve.
    pub fn no_such_resource() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// `409 AlreadyExists`.
    pub fn already_exists(group: &str, plural: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", qualified(group, plural)),
        )
        .with_details(group, plural, name)
    }

    /// `409 Conflict` with the message a stale resourceVersion gets.
    pub fn conflict_modified(group: &str, plural: &str, name: &str) -> Self {
        Self::conflict(
            group,
            plural,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// `409 Conflict`: `Operation cannot be fulfilled on <resource> "<name>": <why>`.
    pub fn conflict(group: &str, plural: &str, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                qualified(group, plural)
            ),
        )
        .with_details(group, plural, name)
    }

    /// `400 BadRequest`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// `405 MethodNotAllowed` for a method no route of the path takes, as the real server's
    /// router answers it (`NewGenericServerResponse`: a fixed message and an empty `details`).
    pub fn method_not_allowed() -> Self {
        let mut error = Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        );
        error.details_set = true;
        error
    }

    /// `410 Expired` (`too old resource version`), as sent for stale watches and continue tokens.
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// `413 RequestEntityTooLarge`.
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
        )
    }

    /// `415 UnsupportedMediaType`.
    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf ({content_type})"),
        )
    }

    /// `422 Invalid` for an object, rendered as `<Kind> "<name>" is invalid: <causes>`.
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<StatusCause>) -> Self {
        crate::rules::validation::InvalidError::new(group, kind, name, causes).into()
    }

    /// `500 InternalError`.
    pub fn internal(message: impl Into<String>) -> Self {
        let message = message.into();
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {message}"),
        )
    }

    /// A 500 with no reason, as the real server answers some malformed requests.
    pub fn plain_500(message: impl Into<String>) -> Self {
        Self::new(500, "", message)
    }

    /// The `metav1.Status` body, as a value: [`ApiError::to_status_json`] read back, so that
    /// the written and the built forms cannot drift apart.
    pub fn to_status(&self) -> Value {
        serde_json::from_str(&self.to_status_json()).unwrap_or(Value::Null)
    }
}

impl ApiError {
    /// The `Status` as the real server writes it: its fields in Go's field order (`kind`, `apiVersion`, `metadata`, `status`, `message`, `reason`, `details`
    /// with `name`, `group`, `kind`, `causes` (`reason`, `message`, `field`) and
    /// `retryAfterSeconds`, then `code`), strings escaped as Go escapes them.
    pub fn to_status_json(&self) -> String {
        let string = |s: &str| crate::rules::validation::go_json(&Value::String(s.to_string()));
        let mut out = String::from(r#"{"kind":"Status","apiVersion":"v1","metadata":{"#);
        if let Some(token) = &self.list_continue {
            out.push_str(&format!(r#""continue":{}"#, string(token)));
        }
        out.push_str(r#"},"status":"Failure","#);
        out.push_str(&format!(r#""message":{}"#, string(&self.message)));
        if !self.reason.is_empty() {
            out.push_str(&format!(r#","reason":{}"#, string(&self.reason)));
        }
        let mut details = Vec::new();
        if let Some(name) = &self.name {
            details.push(format!(r#""name":{}"#, string(name)));
        }
        if let Some(group) = self.group.as_ref().filter(|g| !g.is_empty()) {
            details.push(format!(r#""group":{}"#, string(group)));
        }
        if let Some(kind) = &self.kind {
            details.push(format!(r#""kind":{}"#, string(kind)));
        }
        if !self.causes.is_empty() {
            let causes: Vec<String> = self
                .causes
                .iter()
                .map(|c| {
                    let mut cause = Vec::new();
                    if !c.reason.is_empty() {
                        cause.push(format!(r#""reason":{}"#, string(&c.reason)));
                    }
                    cause.push(format!(r#""message":{}"#, string(&c.message)));
                    if !c.field.is_empty() {
                        cause.push(format!(r#""field":{}"#, string(&c.field)));
                    }
                    format!("{{{}}}", cause.join(","))
                })
                .collect();
            details.push(format!(r#""causes":[{}]"#, causes.join(",")));
        }
        if let Some(secs) = self.retry_after_seconds {
            details.push(format!(r#""retryAfterSeconds":{secs}"#));
        }
        if !details.is_empty() || self.details_set {
            out.push_str(&format!(r#","details":{{{}}}"#, details.join(",")));
        }
        out.push_str(&format!(r#","code":{}}}"#, self.code));
        out
    }
}

/// `plural` or `plural.group`, as resources are named in messages.
pub fn qualified(group: &str, plural: &str) -> String {
    if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    }
}

impl From<crate::rules::validation::InvalidError> for ApiError {
    fn from(e: crate::rules::validation::InvalidError) -> Self {
        let kind = e.kind.split('.').next().unwrap_or_default().to_string();
        let mut err = Self::new(422, "Invalid", e.message()).with_details(&e.group, &kind, &e.name);
        err.causes = e.causes;
        err
    }
}

impl From<crate::patch::PatchError> for ApiError {
    fn from(e: crate::patch::PatchError) -> Self {
        let mut err = Self::new(e.code(), e.reason(), e.to_string());
        err.causes = e.causes();
        err
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn not_found_renders_like_the_real_server() {
        let status = ApiError::not_found("", "configmaps", "nope").to_status();
        assert_eq!(status["message"], "configmaps \"nope\" not found");
        assert_eq!(status["reason"], "NotFound");
        assert_eq!(status["code"], 404);
        assert_eq!(status["details"]["kind"], "configmaps");
        assert!(status["details"].get("group").is_none());
        assert_eq!(status["metadata"], json!({}));
    }

    #[test]
    fn conflict_message_is_exact() {
        let err = ApiError::conflict_modified("", "configmaps", "cm");
        assert_eq!(err.message, "Operation cannot be fulfilled on configmaps \"cm\": the object has been modified; please apply your changes to the latest version and try again");
    }

    #[test]
    fn invalid_joins_causes() {
        let cause = |f: &str| StatusCause {
            reason: "FieldValueForbidden".into(),
            message: "Forbidden: x".into(),
            field: f.into(),
        };
        let one = ApiError::invalid("example.com", "Widget", "w", vec![cause("a")]);
        assert_eq!(
            one.message,
            "Widget.example.com \"w\" is invalid: a: Forbidden: x"
        );
        let two = ApiError::invalid("", "ConfigMap", "c", vec![cause("a"), cause("b")]);
        assert_eq!(
            two.message,
            "ConfigMap \"c\" is invalid: [a: Forbidden: x, b: Forbidden: x]"
        );
        assert_eq!(two.to_status()["details"]["causes"][1]["field"], "b");
    }

    #[rstest::rstest]
    #[case::not_found(ApiError::not_found("apps", "deployments", "web"))]
    #[case::no_route(ApiError::no_route())]
    #[case::reasonless(ApiError::new(500, "", "boom <x> & \"y\""))]
    #[case::invalid(ApiError::invalid("", "ConfigMap", "c", vec![
        StatusCause { reason: "FieldValueInvalid".into(), message: "Invalid value: \"<nil>\"".into(), field: "data".into() },
        StatusCause { reason: String::new(), message: "m".into(), field: String::new() },
    ]))]
    #[case::retry(ApiError { retry_after_seconds: Some(3), ..ApiError::new(429, "TooManyRequests", "later") })]
    fn the_written_status_is_the_status_in_go_order(#[case] error: ApiError) {
        let written = error.to_status_json();
        let parsed: Value = serde_json::from_str(&written).expect("JSON");
        assert_eq!(parsed, error.to_status());
        assert!(
            written.starts_with(
                r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"#
            ),
            "{written}"
        );
        assert!(
            written.ends_with(&format!(r#""code":{}}}"#, error.code)),
            "{written}"
        );
        assert!(
            !written.contains('<') && !written.contains('&'),
            "{written}"
        );
    }
}
