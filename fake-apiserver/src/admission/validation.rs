//! Validation of `MutatingWebhookConfiguration` and `ValidatingWebhookConfiguration`
//! (`pkg/apis/admissionregistration/validation`: `ValidateMutatingWebhookConfiguration`,
//! `ValidateValidatingWebhookConfiguration` and their `...Update` forms): fully qualified
//! webhook names, unique within a configuration; rules (operations, groups, versions,
//! resources, scope); the policies' supported values; `sideEffects` required and, for new
//! webhooks, `None` or `NoneOnDryRun`; `timeoutSeconds` 1..30; the selectors; exactly one of
//! `clientConfig.url` (https, no query or fragment) and `clientConfig.service`;
//! `admissionReviewVersions` naming one the server knows. Match condition expressions are not
//! compiled (the CEL module checks them).

use serde_json::Value;

use crate::rules::crd_validation::{validate_webhook_service, validate_webhook_url, Path};
use crate::rules::validation::{is_dns1035_label, is_dns1123_subdomain, Cause};

const REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];
const NO_SIDE_EFFECTS: [&str; 2] = ["None", "NoneOnDryRun"];
const ALL_SIDE_EFFECTS: [&str; 4] = ["None", "NoneOnDryRun", "Some", "Unknown"];

/// What an update keeps allowing because the stored configuration already had it.
struct Options {
    require_no_side_effects: bool,
    require_known_review_version: bool,
    require_unique_names: bool,
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

fn owned(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| s.to_string()).collect()
}

fn hooks(config: &Value) -> &[Value] {
    config["webhooks"].as_array().map_or(&[], Vec::as_slice)
}

/// The causes of creating a configuration of `kind`.
pub fn create_causes(kind: &str, config: &Value) -> Vec<Cause> {
    let options = Options {
        require_no_side_effects: true,
        require_known_review_version: true,
        require_unique_names: true,
    };
    configuration_causes(kind, config, &options)
}

/// The causes of updating `old` into `new`: what every stored webhook already had stays
/// allowed (side effects, unknown review versions, duplicate names).
pub fn update_causes(kind: &str, old: &Value, new: &Value) -> Vec<Cause> {
    let old_hooks = hooks(old);
    let mut names = std::collections::BTreeSet::new();
    let options = Options {
        require_no_side_effects: old_hooks
            .iter()
            .all(|h| NO_SIDE_EFFECTS.contains(&h["sideEffects"].as_str().unwrap_or_default())),
        require_known_review_version: old_hooks.iter().all(|h| {
            let versions = strings(&h["admissionReviewVersions"]);
            versions.is_empty() || versions.iter().any(|v| REVIEW_VERSIONS.contains(v))
        }),
        require_unique_names: old_hooks
            .iter()
            .all(|h| names.insert(h["name"].as_str().unwrap_or_default())),
    };
    configuration_causes(kind, new, &options)
}

fn configuration_causes(kind: &str, config: &Value, options: &Options) -> Vec<Cause> {
    let mutating = kind == "MutatingWebhookConfiguration";
    let mut causes = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for (i, hook) in hooks(config).iter().enumerate() {
        let path = Path::new("webhooks").index(i);
        causes.extend(webhook_causes(hook, mutating, options, &path));
        causes.extend(review_version_causes(
            &hook["admissionReviewVersions"],
            options.require_known_review_version,
            &path.child("admissionReviewVersions"),
        ));
        let name = hook["name"].as_str().unwrap_or_default();
        if options.require_unique_names && !name.is_empty() && !names.insert(name) {
            causes.push(Cause::duplicate(path.child("name"), &Value::from(name)));
        }
    }
    causes
}

/// `IsFullyQualifiedName`.
fn fully_qualified_name(path: &Path, name: &str) -> Option<Cause> {
    if name.is_empty() {
        return Some(Cause::required(path, ""));
    }
    let errors = is_dns1123_subdomain(name);
    if !errors.is_empty() {
        return Some(Cause::invalid_str(path, name, &errors.join(",")));
    }
    if name.split('.').count() < 3 {
        return Some(Cause::invalid_str(
            path,
            name,
            "should be a domain with at least three segments separated by dots",
        ));
    }
    None
}

fn supported(causes: &mut Vec<Cause>, hook: &Value, field: &str, path: &Path, valid: &[&str]) {
    if let Some(value) = hook.get(field).filter(|v| !v.is_null()) {
        if !value.as_str().is_some_and(|v| valid.contains(&v)) {
            causes.push(Cause::not_supported(
                path.child(field),
                value,
                &owned(valid),
            ));
        }
    }
}

fn webhook_causes(hook: &Value, mutating: bool, options: &Options, path: &Path) -> Vec<Cause> {
    let mut causes = Vec::new();
    causes.extend(fully_qualified_name(
        &path.child("name"),
        hook["name"].as_str().unwrap_or_default(),
    ));
    for (i, rule) in hook["rules"].as_array().into_iter().flatten().enumerate() {
        causes.extend(rule_causes(rule, &path.child("rules").index(i)));
    }
    supported(
        &mut causes,
        hook,
        "failurePolicy",
        path,
        &["Fail", "Ignore"],
    );
    supported(
        &mut causes,
        hook,
        "matchPolicy",
        path,
        &["Equivalent", "Exact"],
    );
    let side_effects: &[&str] = if options.require_no_side_effects {
        &NO_SIDE_EFFECTS
    } else {
        &ALL_SIDE_EFFECTS
    };
    if hook["sideEffects"].is_null() {
        causes.push(Cause::required(
            path.child("sideEffects"),
            &format!("must specify one of {}", side_effects.join(", ")),
        ));
    } else {
        supported(&mut causes, hook, "sideEffects", path, side_effects);
    }
    if let Some(timeout) = hook["timeoutSeconds"].as_i64() {
        if !(1..=30).contains(&timeout) {
            causes.push(Cause::invalid(
                path.child("timeoutSeconds"),
                &Value::from(timeout),
                "the timeout value must be between 1 and 30 seconds",
            ));
        }
    }
    for selector in ["namespaceSelector", "objectSelector"] {
        if hook[selector].is_object() {
            let field = path.child(selector);
            causes.extend(crate::rules::selector::causes(
                &hook[selector],
                field.as_str(),
            ));
        }
    }
    if mutating {
        supported(
            &mut causes,
            hook,
            "reinvocationPolicy",
            path,
            &["IfNeeded", "Never"],
        );
    }
    let client = &hook["clientConfig"];
    let client_path = path.child("clientConfig");
    let url = client.get("url").filter(|u| !u.is_null());
    let service = client.get("service").filter(|s| !s.is_null());
    match (url, service) {
        (Some(url), None) => causes.extend(validate_webhook_url(
            &client_path.child("url"),
            url.as_str().unwrap_or_default(),
        )),
        (None, Some(service)) => causes.extend(validate_webhook_service(
            &client_path.child("service"),
            service,
        )),
        _ => causes.push(Cause::required(
            &client_path,
            "exactly one of url or service is required",
        )),
    }
    causes
}

/// `validateRuleWithOperations` (subresources allowed).
fn rule_causes(rule: &Value, path: &Path) -> Vec<Cause> {
    let mut causes = Vec::new();
    let operations = strings(&rule["operations"]);
    if operations.is_empty() {
        causes.push(Cause::required(path.child("operations"), ""));
    }
    if operations.len() > 1 && operations.contains(&"*") {
        causes.push(Cause::invalid(
            path.child("operations"),
            &rule["operations"],
            "if '*' is present, must not specify other operations",
        ));
    }
    let valid_operations = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
    for (i, op) in operations.iter().enumerate() {
        if !valid_operations.contains(op) {
            causes.push(Cause::not_supported(
                path.child("operations").index(i),
                &Value::from(*op),
                &owned(&valid_operations),
            ));
        }
    }
    for (field, what) in [("apiGroups", "API groups"), ("apiVersions", "API versions")] {
        let values = strings(&rule[field]);
        if values.is_empty() {
            causes.push(Cause::required(path.child(field), ""));
        }
        if values.len() > 1 && values.contains(&"*") {
            causes.push(Cause::invalid(
                path.child(field),
                &rule[field],
                &format!("if '*' is present, must not specify other {what}"),
            ));
        }
        if field == "apiVersions" {
            for (i, v) in values.iter().enumerate() {
                if v.is_empty() {
                    causes.push(Cause::required(path.child(field).index(i), ""));
                }
            }
        }
    }
    causes.extend(resource_causes(
        &rule["resources"],
        &path.child("resources"),
    ));
    if let Some(scope) = rule.get("scope").filter(|s| !s.is_null()) {
        let valid = ["*", "Cluster", "Namespaced"];
        if !scope.as_str().is_some_and(|s| valid.contains(&s)) {
            causes.push(Cause::not_supported(
                path.child("scope"),
                scope,
                &owned(&valid),
            ));
        }
    }
    causes
}

/// `validateResources`.
fn resource_causes(resources: &Value, path: &Path) -> Vec<Cause> {
    let mut causes = Vec::new();
    let list = strings(resources);
    if list.is_empty() {
        causes.push(Cause::required(path, ""));
    }
    let mut wildcard_subresources = std::collections::BTreeSet::new();
    let mut wildcard_resources = std::collections::BTreeSet::new();
    let (mut double, mut single, mut plain) = (false, false, false);
    for (i, item) in list.iter().enumerate() {
        if item.is_empty() {
            causes.push(Cause::required(path.index(i), ""));
            continue;
        }
        double |= *item == "*/*";
        single |= *item == "*";
        let Some((res, sub)) = item.split_once('/') else {
            plain = *item != "*";
            continue;
        };
        if wildcard_subresources.contains(res) {
            causes.push(Cause::invalid_str(
                path.index(i),
                item,
                &format!("if '{res}/*' is present, must not specify {item}"),
            ));
        }
        if wildcard_resources.contains(sub) {
            causes.push(Cause::invalid_str(
                path.index(i),
                item,
                &format!("if '*/{sub}' is present, must not specify {item}"),
            ));
        }
        if sub == "*" {
            wildcard_subresources.insert(res);
        }
        if res == "*" {
            wildcard_resources.insert(sub);
        }
    }
    if list.len() > 1 && double {
        causes.push(Cause::invalid(
            path,
            resources,
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if single && plain {
        causes.push(Cause::invalid(
            path,
            resources,
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    causes
}

/// `validateAdmissionReviewVersions`.
fn review_version_causes(versions: &Value, require_known: bool, path: &Path) -> Vec<Cause> {
    let mut causes = Vec::new();
    let list = strings(versions);
    if list.is_empty() {
        causes.push(Cause::required(
            path,
            &format!("must specify one of {}", REVIEW_VERSIONS.join(", ")),
        ));
        return causes;
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut known = false;
    for (i, v) in list.iter().enumerate() {
        if !seen.insert(*v) {
            causes.push(Cause::invalid_str(path.index(i), v, "duplicate version"));
            continue;
        }
        for error in is_dns1035_label(v) {
            causes.push(Cause::invalid_str(path.index(i), v, &error));
        }
        known |= REVIEW_VERSIONS.contains(v);
    }
    if require_known && !known {
        causes.push(Cause::invalid(
            path,
            versions,
            &format!(
                "must include at least one of {}",
                REVIEW_VERSIONS.join(", ")
            ),
        ));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn valid_hook() -> Value {
        json!({
            "name": "check.example.com",
            "clientConfig": {"url": "https://hooks.example.com/check"},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods", "pods/status"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        })
    }

    fn messages(hook: Value) -> Vec<String> {
        create_causes(
            "MutatingWebhookConfiguration",
            &json!({"metadata": {"name": "c"}, "webhooks": [hook]}),
        )
        .iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect()
    }

    #[rstest]
    #[case::valid(json!({}), &[])]
    #[case::short_name(json!({"name": "check"}), &["webhooks[0].name: Invalid value: \"check\": should be a domain with at least three segments separated by dots"])]
    #[case::no_side_effects(json!({"sideEffects": null}), &["webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"])]
    #[case::side_effects_some(json!({"sideEffects": "Some"}), &["webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\""])]
    #[case::no_review_versions(json!({"admissionReviewVersions": []}), &["webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"])]
    #[case::unknown_review_version(json!({"admissionReviewVersions": ["v2"]}), &["webhooks[0].admissionReviewVersions: Invalid value: [\"v2\"]: must include at least one of v1, v1beta1"])]
    #[case::both_url_and_service(json!({"clientConfig": {"url": "https://a.b/c", "service": {"namespace": "n", "name": "s"}}}), &["webhooks[0].clientConfig: Required value: exactly one of url or service is required"])]
    #[case::http_url(json!({"clientConfig": {"url": "http://a.b/c"}}), &["webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]"])]
    #[case::timeout(json!({"timeoutSeconds": 31}), &["webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds"])]
    #[case::reinvocation(json!({"reinvocationPolicy": "Always"}), &["webhooks[0].reinvocationPolicy: Unsupported value: \"Always\": supported values: \"IfNeeded\", \"Never\""])]
    #[case::operation(json!({"rules": [{"operations": ["PATCH"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]}), &["webhooks[0].rules[0].operations[0]: Unsupported value: \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\""])]
    fn webhook_rules(#[case] change: Value, #[case] expected: &[&str]) {
        let mut hook = valid_hook();
        for (k, v) in change.as_object().unwrap() {
            hook[k] = v.clone();
        }
        assert_eq!(messages(hook), expected);
    }

    #[test]
    fn duplicate_names_and_relaxed_updates() {
        let config = json!({"webhooks": [valid_hook(), valid_hook()]});
        let causes = create_causes("ValidatingWebhookConfiguration", &config);
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].field, "webhooks[1].name");
        // A configuration that already has duplicates (or side effects) may keep them.
        let mut with_side_effects = config.clone();
        with_side_effects["webhooks"][0]["sideEffects"] = json!("Some");
        assert!(update_causes(
            "ValidatingWebhookConfiguration",
            &with_side_effects,
            &with_side_effects
        )
        .is_empty());
    }
}
