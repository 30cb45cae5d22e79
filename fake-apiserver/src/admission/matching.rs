//! Which webhooks a request calls, as the real `ShouldCallHook` decides it
//! (`admission/plugin/webhook/generic/webhook.go` and `predicates/{rules,namespace,object}`): the
//! namespace selector, the object selector (new or old object), then the rules — operations,
//! API groups, versions, resources with `resource/subresource` and `*` forms, scope — with
//! `matchPolicy: Equivalent` trying the other served versions of the same resource, and last
//! the match conditions.

use serde_json::Value;

use super::config::Webhook;
use super::Attributes;
use crate::error::ApiError;
use crate::http::server::Shared;
use crate::rules::selectors::LabelSelector;

/// The resource and kind a webhook is called with (the request's own, or an equivalent one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invocation {
    /// API group of the resource and kind.
    pub group: String,
    /// Version the webhook gets the object in.
    pub version: String,
    /// Resource (plural).
    pub resource: String,
    /// Subresource, empty for the main resource.
    pub subresource: String,
    /// The kind of the object the webhook gets.
    pub kind: Gvk,
}

/// A group, version and kind.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Gvk {
    /// API group, empty for the core group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

impl Gvk {
    /// `apiVersion` of objects of this kind.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// What a rule is matched against: the request's operation and resource.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RuleTarget<'a> {
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: &'a str,
    /// API group.
    pub group: &'a str,
    /// API version.
    pub version: &'a str,
    /// Resource (plural).
    pub resource: &'a str,
    /// Subresource, empty for the main resource.
    pub subresource: &'a str,
    /// The request's namespace (a namespace's own name for namespace requests).
    pub namespace: &'a str,
}

fn strings(v: &Value) -> impl Iterator<Item = &str> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str)
}

fn exact_or_wildcard(items: &Value, requested: &str) -> bool {
    strings(items).any(|i| i == "*" || i == requested)
}

/// Whether one `RuleWithOperations` matches (`rules.Matcher.Matches`).
pub(crate) fn rule_matches(rule: &Value, t: &RuleTarget<'_>) -> bool {
    let is_namespace = t.group.is_empty() && t.version == "v1" && t.resource == "namespaces";
    let scope = match rule["scope"].as_str() {
        None | Some("*") => true,
        Some("Namespaced") => !is_namespace && !t.namespace.is_empty(),
        Some("Cluster") => is_namespace || t.namespace.is_empty(),
        Some(_) => false,
    };
    let resource = strings(&rule["resources"]).any(|r| {
        let (res, sub) = r.split_once('/').unwrap_or((r, ""));
        (res == "*" || res == t.resource) && (sub == "*" || sub == t.subresource)
    });
    scope
        && strings(&rule["operations"]).any(|op| op == "*" || op == t.operation)
        && exact_or_wildcard(&rule["apiGroups"], t.group)
        && exact_or_wildcard(&rule["apiVersions"], t.version)
        && resource
}

/// The invocation a webhook's rules select for the request, if any: a rule matching the
/// request's own resource first; under `matchPolicy: Equivalent` (the default), rules in order
/// against the other served versions of the same resource.
/// `equivalents` are the other served versions of the resource, with their kinds.
pub(crate) fn invocation(
    hook: &Webhook,
    t: &RuleTarget<'_>,
    kind: &Gvk,
    equivalents: &[(String, String)],
) -> Option<Invocation> {
    let rules = hook.spec["rules"].as_array()?;
    if rules.iter().any(|r| rule_matches(r, t)) {
        return Some(Invocation {
            group: t.group.to_string(),
            version: t.version.to_string(),
            resource: t.resource.to_string(),
            subresource: t.subresource.to_string(),
            kind: kind.clone(),
        });
    }
    if hook.spec["matchPolicy"] == "Exact" {
        return None;
    }
    for rule in rules {
        for (version, equivalent_kind) in equivalents {
            let other = RuleTarget { version, ..*t };
            if rule_matches(rule, &other) {
                return Some(Invocation {
                    group: t.group.to_string(),
                    version: version.clone(),
                    resource: t.resource.to_string(),
                    subresource: t.subresource.to_string(),
                    kind: Gvk {
                        group: t.group.to_string(),
                        version: version.clone(),
                        kind: equivalent_kind.clone(),
                    },
                });
            }
        }
    }
    None
}

/// The namespace selector's decision (`MatchNamespaceSelector`): cluster-scoped requests other
/// than namespaces always match; a namespace's own create or update is matched on the labels it
/// is written with; other requests on their namespace's labels (a missing namespace is a 404).
fn namespace_matches(shared: &Shared, hook: &Webhook, a: &Attributes) -> Result<bool, ApiError> {
    let is_namespaces = a.resource_is_namespaces();
    if a.namespace.is_empty() && !is_namespaces {
        return Ok(true);
    }
    let selector = LabelSelector::from_label_selector_json(&hook.spec["namespaceSelector"])
        .map_err(|e| super::dispatch::internal_error(&e.to_string()))?;
    if selector.is_empty() {
        return Ok(true);
    }
    if is_namespaces && a.subresource.is_empty() && matches!(a.operation, "CREATE" | "UPDATE") {
        let labels = a.object.as_ref().map(|o| &o["metadata"]["labels"]);
        return Ok(selector.matches(labels.and_then(Value::as_object)));
    }
    let namespace = shared
        .store
        .get_value("/namespaces", "", &a.namespace)
        .ok_or_else(|| ApiError::not_found("", "namespaces", &a.namespace))?;
    Ok(selector.matches(namespace["metadata"]["labels"].as_object()))
}

/// The object selector's decision (`MatchObjectSelector`): the new or the old object matches.
fn object_matches(hook: &Webhook, a: &Attributes) -> Result<bool, ApiError> {
    let selector = LabelSelector::from_label_selector_json(&hook.spec["objectSelector"])
        .map_err(|e| super::dispatch::internal_error(&e.to_string()))?;
    if selector.is_empty() {
        return Ok(true);
    }
    let matches = |o: &Option<Value>| {
        o.as_ref()
            .is_some_and(|o| selector.matches(o["metadata"]["labels"].as_object()))
    };
    Ok(matches(&a.object) || matches(&a.old_object))
}

/// `ShouldCallHook`: the invocation when the webhook is to be called, `None` when it is not, an
/// error when a selector could not be evaluated for a webhook whose rules match.
pub(crate) fn should_call(
    shared: &Shared,
    hook: &Webhook,
    a: &Attributes,
    equivalents: &[(String, String)],
) -> Result<Option<Invocation>, ApiError> {
    let namespace = namespace_matches(shared, hook, a);
    if matches!(namespace, Ok(false)) {
        return Ok(None);
    }
    let object = object_matches(hook, a);
    if matches!(object, Ok(false)) {
        return Ok(None);
    }
    let Some(invocation) = invocation(hook, &a.rule_target(), &a.kind, equivalents) else {
        return Ok(None);
    };
    namespace?;
    object?;
    if !match_conditions(shared, hook, a, &invocation)? {
        return Ok(None);
    }
    Ok(Some(invocation))
}

/// The webhook's `matchConditions` (`matchconditions.matcher.Match`): CEL expressions over
/// `object`, `oldObject`, `request` (the `AdmissionRequest` the webhook would get) and
/// `authorizer` with `authorizer.requestResource` (the server's authorizer asking about the
/// requesting user). One `false` skips the webhook; otherwise errors (compilation or
/// evaluation) follow the failure policy: `Ignore` skips the webhook, `Fail` refuses the
/// request with a `403` (`ShouldCallHook`'s `NewForbidden`).
fn match_conditions(
    shared: &Shared,
    hook: &Webhook,
    a: &Attributes,
    invocation: &Invocation,
) -> Result<bool, ApiError> {
    let conditions = &hook.spec["matchConditions"];
    if conditions.as_array().is_none_or(|c| c.is_empty()) {
        return Ok(true);
    }
    let review = super::review::request(super::review::ReviewVersion::V1, "", a, invocation);
    let request = &review["request"];
    let authorizer =
        crate::cel::authz::CelAuthorizer::new(a.user.clone(), crate::auth::authorizer(shared));
    let request_resource = authorizer.request_resource(
        &a.info.group,
        &a.info.plural,
        &a.subresource,
        &a.namespace,
        &a.name,
    );
    let errors = match crate::cel::conditions::match_conditions(conditions, |expr| {
        let mut vars = vec![
            ("object", crate::cel::json_to_val(&request["object"])),
            ("oldObject", crate::cel::json_to_val(&request["oldObject"])),
            ("request", crate::cel::json_to_val(request)),
        ];
        vars.extend(crate::cel::authz::values(&authorizer, &request_resource));
        crate::cel::conditions::run(
            expr,
            &[
                "object",
                "oldObject",
                "request",
                "authorizer",
                "authorizer.requestResource",
            ],
            crate::cel::ResultKind::Bool,
            vars,
        )
    }) {
        Ok(matched) => return Ok(matched),
        Err(errors) => errors,
    };
    if hook.ignores_failures() {
        return Ok(false);
    }
    Err(crate::auth::attributes::forbidden_error(
        &a.info.group,
        &a.info.plural,
        &a.name,
        &crate::rules::validation::aggregate_message(&errors),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn target<'a>(op: &'a str, resource: &'a str, sub: &'a str, ns: &'a str) -> RuleTarget<'a> {
        RuleTarget {
            operation: op,
            group: "",
            version: "v1",
            resource,
            subresource: sub,
            namespace: ns,
        }
    }

    #[rstest]
    #[case::exact(json!({"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}), target("CREATE", "pods", "", "d"), true)]
    #[case::other_operation(json!({"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}), target("CREATE", "pods", "", "d"), false)]
    #[case::all_operations(json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}), target("DELETE", "pods", "", "d"), true)]
    #[case::star_skips_subresources(json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}), target("UPDATE", "pods", "status", "d"), false)]
    #[case::star_slash_star(json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}), target("UPDATE", "pods", "status", "d"), true)]
    #[case::status_only(json!({"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/status"]}), target("UPDATE", "pods", "status", "d"), true)]
    #[case::status_not_main(json!({"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/status"]}), target("UPDATE", "pods", "", "d"), false)]
    #[case::any_status(json!({"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["*/status"]}), target("UPDATE", "nodes", "status", ""), true)]
    #[case::other_group(json!({"operations": ["*"], "apiGroups": ["apps"], "apiVersions": ["*"], "resources": ["*"]}), target("CREATE", "pods", "", "d"), false)]
    #[case::namespaced_scope(json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": "Namespaced"}), target("CREATE", "nodes", "", ""), false)]
    #[case::cluster_scope(json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": "Cluster"}), target("CREATE", "nodes", "", ""), true)]
    #[case::namespace_is_cluster(json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": "Cluster"}), target("CREATE", "namespaces", "", "team"), true)]
    #[case::namespace_not_namespaced(json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": "Namespaced"}), target("CREATE", "namespaces", "", "team"), false)]
    fn rules(#[case] rule: Value, #[case] t: RuleTarget<'_>, #[case] expected: bool) {
        assert_eq!(rule_matches(&rule, &t), expected);
    }
}
