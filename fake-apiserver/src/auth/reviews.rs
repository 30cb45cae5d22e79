//! The `authorization.k8s.io` reviews, answered from the same authorizer as requests (what
//! `kubectl auth can-i` and `--list` use): `SelfSubjectAccessReview` (may I?),
//! `SubjectAccessReview` (may this user?), `LocalSubjectAccessReview` (the same in a
//! namespace) and `SelfSubjectRulesReview` (what may I do in this namespace?); and
//! `authentication.k8s.io`'s `SelfSubjectReview` (who am I? what `kubectl auth whoami` asks)
//! and `TokenReview` (who is this bearer token? what webhooks and auth proxies ask).
//! Nothing is stored; the answer is the request with its `status` filled in (and, as Go writes
//! it, no `creationTimestamp`: a zero one is `omitzero`).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::attributes::Attributes;
use super::rbac::{aggregate, PolicyRule};
use super::user::{UserInfo, MASTERS};
use super::AuthorizationMode;
use crate::context::Shared;
use crate::error::ApiError;
use crate::rules::validation::Cause;

const GROUP: &str = "authorization.k8s.io";

/// A user as `authentication.k8s.io/v1` `UserInfo` writes it (empty fields left out).
fn user_info(user: &UserInfo) -> Value {
    let mut info = json!({"username": user.name});
    if !user.uid.is_empty() {
        info["uid"] = json!(user.uid);
    }
    if !user.groups.is_empty() {
        info["groups"] = json!(user.groups);
    }
    if !user.extra.is_empty() {
        info["extra"] = json!(user.extra);
    }
    info
}

/// Fills in the `status` of a review of kind `kind` sent by `requestor` (for the local review:
/// to `namespace`).
pub(crate) fn answer(
    shared: &Shared,
    requestor: &UserInfo,
    kind: &str,
    namespace: Option<&str>,
    mut review: Value,
) -> Result<Value, ApiError> {
    let status = match kind {
        "SelfSubjectReview" => json!({"userInfo": user_info(requestor)}),
        "TokenReview" => token_review(shared, &review["spec"])?,
        "SelfSubjectRulesReview" => rules_review(shared, requestor, &review)?,
        "SelfSubjectAccessReview" => {
            validate_access_spec(kind, &review["spec"], false)?;
            access_status(shared, attributes(requestor, &review["spec"]))
        }
        "SubjectAccessReview" | "LocalSubjectAccessReview" => {
            validate_access_spec(kind, &review["spec"], true)?;
            if kind == "LocalSubjectAccessReview" {
                let namespace = namespace.unwrap_or_default();
                let asked = review["spec"]["resourceAttributes"]["namespace"]
                    .as_str()
                    .unwrap_or_default();
                if review["spec"].get("resourceAttributes").is_some() && asked != namespace {
                    return Err(ApiError::bad_request(format!(
                        "spec.resourceAttributes.namespace must match namespace: {namespace}"
                    )));
                }
            }
            let subject = subject_of(&review["spec"]);
            access_status(shared, attributes(&subject, &review["spec"]))
        }
        other => return Err(ApiError::bad_request(format!("{other} is not a review"))),
    };
    review["status"] = status;
    if !review["metadata"].is_object() {
        review["metadata"] = json!({});
    }
    Ok(review)
}

/// The status of a `TokenReview` (`pkg/registry/authentication/tokenreview/storage.go`): the
/// token is authenticated as a request's would be, for the audiences the review names (the
/// API's own when it names none). A token that does not authenticate is answered, not refused:
/// `authenticated` stays unset and `error` says why; only a review without a token is a 400.
fn token_review(shared: &Shared, spec: &Value) -> Result<Value, ApiError> {
    let token = spec["token"].as_str().unwrap_or_default();
    if token.is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let mut audiences: Vec<String> = spec["audiences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect();
    if audiences.is_empty() {
        audiences = vec![super::authn::API_AUDIENCE.to_string()];
    }
    let config = &shared.auth.config;
    Ok(
        match super::authn::authenticate_token(shared, config, token, &audiences) {
            Ok(authenticated) => json!({
                "authenticated": true,
                "user": user_info(&authenticated.user),
                "audiences": authenticated.audiences,
            }),
            // `user` is a struct: Go writes it even when empty.
            Err(error) => json!({"user": {}, "error": error}),
        },
    )
}

/// The refusals of the real validation: exactly one of resource and non-resource attributes,
/// and (for reviews about another subject) a user or a group.
fn validate_access_spec(kind: &str, spec: &Value, needs_subject: bool) -> Result<(), ApiError> {
    let present = |key: &str| spec.get(key).is_some_and(|v| !v.is_null());
    let mut causes = Vec::new();
    if present("resourceAttributes") && present("nonResourceAttributes") {
        causes.push(Cause::invalid(
            "spec.nonResourceAttributes",
            &spec["nonResourceAttributes"],
            "cannot be specified in combination with resourceAttributes",
        ));
    }
    if !present("resourceAttributes") && !present("nonResourceAttributes") {
        causes.push(Cause::invalid(
            "spec.resourceAttributes",
            &Value::Null,
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
    let user = spec["user"].as_str().unwrap_or_default();
    let no_groups = spec["groups"].as_array().is_none_or(|g| g.is_empty());
    if needs_subject && user.is_empty() && no_groups {
        causes.push(Cause::invalid(
            "spec.user",
            &json!(user),
            "at least one of user or group must be specified",
        ));
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(GROUP, kind, "", causes))
    }
}

fn string_list(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The user a SubjectAccessReview asks about (as given: no groups are added).
fn subject_of(spec: &Value) -> UserInfo {
    let extra: BTreeMap<String, Vec<String>> = spec["extra"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), string_list(v))).collect())
        .unwrap_or_default();
    UserInfo {
        name: spec["user"].as_str().unwrap_or_default().to_string(),
        uid: spec["uid"].as_str().unwrap_or_default().to_string(),
        groups: string_list(&spec["groups"]),
        extra,
    }
}

/// The question a review's spec asks.
fn attributes(user: &UserInfo, spec: &Value) -> Attributes {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    if let Some(r) = spec.get("resourceAttributes").filter(|r| !r.is_null()) {
        return Attributes {
            user: user.clone(),
            verb: text(&r["verb"]),
            resource_request: true,
            path: String::new(),
            group: text(&r["group"]),
            version: text(&r["version"]),
            resource: text(&r["resource"]),
            subresource: text(&r["subresource"]),
            namespace: text(&r["namespace"]),
            name: text(&r["name"]),
        };
    }
    let n = &spec["nonResourceAttributes"];
    Attributes::non_resource(user, &text(&n["verb"]), &text(&n["path"]))
}

fn access_status(shared: &Shared, attrs: Attributes) -> Value {
    let decision = super::authorize(shared, &attrs);
    let mut status = json!({"allowed": decision.allowed});
    if !decision.reason.is_empty() {
        status["reason"] = json!(decision.reason);
    }
    status
}

/// `SelfSubjectRulesReview`: every rule that applies to the requestor in `spec.namespace`.
fn rules_review(shared: &Shared, user: &UserInfo, review: &Value) -> Result<Value, ApiError> {
    let namespace = review["spec"]["namespace"].as_str().unwrap_or_default();
    if namespace.is_empty() {
        return Err(ApiError::bad_request("no namespace on request"));
    }
    let everything = || {
        vec![
            PolicyRule {
                verbs: vec!["*".into()],
                api_groups: vec!["*".into()],
                resources: vec!["*".into()],
                ..Default::default()
            },
            PolicyRule {
                verbs: vec!["*".into()],
                non_resource_urls: vec!["*".into()],
                ..Default::default()
            },
        ]
    };
    let (rules, errors) = if shared.auth.config.authorization_mode == AuthorizationMode::AlwaysAllow
    {
        (everything(), Vec::new())
    } else {
        let (mut rules, errors) = super::rbac_index(shared).rules_for(user, namespace);
        if user.in_group(MASTERS) {
            let mut all = everything();
            all.append(&mut rules);
            rules = all;
        }
        (rules, errors)
    };
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for rule in &rules {
        if !rule.resources.is_empty() {
            let mut r = json!({"verbs": rule.verbs});
            if !rule.api_groups.is_empty() {
                r["apiGroups"] = json!(rule.api_groups);
            }
            r["resources"] = json!(rule.resources);
            if !rule.resource_names.is_empty() {
                r["resourceNames"] = json!(rule.resource_names);
            }
            resource_rules.push(r);
        }
        if !rule.non_resource_urls.is_empty() {
            non_resource_rules
                .push(json!({"verbs": rule.verbs, "nonResourceURLs": rule.non_resource_urls}));
        }
    }
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": !errors.is_empty(),
    });
    if !errors.is_empty() {
        status["evaluationError"] = json!(aggregate(&errors));
    }
    Ok(status)
}
