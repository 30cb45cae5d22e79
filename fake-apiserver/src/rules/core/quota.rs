//! ResourceQuotas and LimitRanges: `ValidateResourceQuota(Update)` and `ValidateLimitRange`
//! (`pkg/apis/core/validation/validation.go`): resource names a quota or limit may hold,
//! non-negative quantities, immutable quota scopes, and consistent min/max/default limits.

use std::collections::BTreeSet;

use serde_json::Value;

use super::super::quantity::Quantity;
use super::super::{same, str_of, Target};
use super::pod_spec::{container_resource_name, STANDARD_RESOURCES};
use crate::rules::validation::{is_qualified_name, Cause, FieldErrorType};

const STANDARD_QUOTA_RESOURCES: [&str; 19] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

const STANDARD_SCOPES: [&str; 7] = [
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
];

fn huge_pages(name: &str) -> bool {
    ["hugepages-", "requests.hugepages-", "limits.hugepages-"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// `validateResourceName`: a qualified name, standard when it has no domain.
fn resource_name(name: &str, path: &str) -> Vec<Cause> {
    let mut causes: Vec<Cause> = is_qualified_name(name)
        .into_iter()
        .map(|msg| Cause::invalid_str(path, name, &msg))
        .collect();
    if causes.is_empty()
        && !name.contains('/')
        && !STANDARD_RESOURCES.contains(&name)
        && !huge_pages(name)
    {
        causes.push(Cause::invalid_str(
            path,
            name,
            "must be a standard resource type or fully qualified",
        ));
    }
    causes
}

/// `ValidateResourceQuotaResourceName`.
fn quota_resource_name(name: &str, path: &str) -> Vec<Cause> {
    let mut causes = resource_name(name, path);
    if !name.contains('/') && !STANDARD_QUOTA_RESOURCES.contains(&name) && !huge_pages(name) {
        causes.push(Cause::invalid_str(
            path,
            name,
            "must be a standard resource for quota",
        ));
    }
    causes
}

/// `ValidateNonnegativeQuantity` of a resource list's value.
fn nonnegative_quantity(v: &Value, path: &str) -> Vec<Cause> {
    match Quantity::from_value(v) {
        Some(q) if q.is_negative() => vec![Cause::invalid_str(
            path,
            &q.canonical(),
            "must be greater than or equal to 0",
        )],
        _ => Vec::new(),
    }
}

fn resource_list(list: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (name, v) in list.as_object().into_iter().flatten() {
        let at = format!("{path}[{name}]");
        causes.extend(quota_resource_name(name, &at));
        causes.extend(nonnegative_quantity(v, &at));
    }
    causes
}

/// Go's `%#v` of a scope list.
fn go_scopes(scopes: &Value) -> String {
    let items: Vec<String> = scopes
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| crate::rules::validation::go_quote(s.as_str().unwrap_or_default()))
        .collect();
    format!("[]core.ResourceQuotaScope{{{}}}", items.join(", "))
}

/// The causes of creating a quota or limit range (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Option<Vec<Cause>> {
    Some(match kind {
        "ResourceQuota" => {
            let mut causes = quota_spec(&obj["spec"]);
            causes.extend(resource_list(&obj["status"]["hard"], "status.hard"));
            causes.extend(resource_list(&obj["status"]["used"], "status.used"));
            causes
        }
        "LimitRange" => limit_range(&obj["spec"]),
        _ => return None,
    })
}

/// The causes of updating one: a quota's scopes are fixed.
pub fn update_causes(kind: &str, old: &Value, new: &Value, target: Target) -> Option<Vec<Cause>> {
    Some(match (kind, target) {
        ("ResourceQuota", Target::Main) => {
            let mut causes = quota_spec(&new["spec"]);
            let scopes = |o: &Value| -> BTreeSet<String> {
                o["spec"]["scopes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            };
            if scopes(old) != scopes(new) {
                causes.push(Cause::new(
                    FieldErrorType::Invalid,
                    "spec.scopes",
                    Some(go_scopes(&new["spec"]["scopes"])),
                    "field is immutable",
                ));
            }
            causes
        }
        ("ResourceQuota", Target::Status) => {
            let mut causes = resource_list(&new["status"]["hard"], "status.hard");
            causes.extend(resource_list(&new["status"]["used"], "status.used"));
            causes
        }
        ("LimitRange", Target::Main) => limit_range(&new["spec"]),
        _ => return None,
    })
}

/// `ValidateResourceQuotaSpec`: hard limits and scopes.
fn quota_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = resource_list(&spec["hard"], "spec.hard");
    let scopes = spec["scopes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut seen = BTreeSet::new();
    for scope in scopes {
        let s = scope.as_str().unwrap_or_default();
        if !STANDARD_SCOPES.contains(&s) {
            causes.push(Cause::new(
                FieldErrorType::Invalid,
                "spec.scopes",
                Some(go_scopes(&spec["scopes"])),
                "unsupported scope",
            ));
        }
        seen.insert(s);
    }
    for (a, b) in [
        ("BestEffort", "NotBestEffort"),
        ("Terminating", "NotTerminating"),
    ] {
        if seen.contains(a) && seen.contains(b) {
            causes.push(Cause::new(
                FieldErrorType::Invalid,
                "spec.scopes",
                Some(go_scopes(&spec["scopes"])),
                "conflicting scopes",
            ));
        }
    }
    let _ = same;
    causes
}

/// `ValidateLimitRange`: known limit types once each, resource names for the type, no defaults
/// for `Pod` limits, storage bounds for claims, and min <= default request <= default <= max.
fn limit_range(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut types = BTreeSet::new();
    for (i, limit) in spec["limits"].as_array().into_iter().flatten().enumerate() {
        let at = format!("spec.limits[{i}]");
        let t = str_of(limit, "type");
        let type_errors: Vec<String> = is_qualified_name(t);
        if !type_errors.is_empty() {
            for msg in type_errors {
                causes.push(Cause::invalid_str(format!("{at}.type"), t, &msg));
            }
        } else if !t.contains('/') && !matches!(t, "Pod" | "Container" | "PersistentVolumeClaim") {
            causes.push(Cause::invalid_str(
                format!("{at}.type"),
                t,
                "must be a standard limit type or fully qualified",
            ));
        }
        if !types.insert(t) {
            causes.push(Cause::duplicate(format!("{at}.type"), &Value::from(t)));
        }
        let name_check = |name: &str, path: &str| -> Vec<Cause> {
            if matches!(t, "Pod" | "Container") {
                container_resource_name(name, &path)
            } else {
                resource_name(name, path)
            }
        };
        let mut keys = BTreeSet::new();
        for field in ["max", "min"] {
            for (name, _) in limit[field].as_object().into_iter().flatten() {
                causes.extend(name_check(name, &format!("{at}.{field}[{name}]")));
                keys.insert(name.clone());
            }
        }
        if t == "Pod" {
            for field in ["default", "defaultRequest"] {
                if limit[field].as_object().is_some_and(|m| !m.is_empty()) {
                    causes.push(Cause::forbidden(
                        format!("{at}.{field}"),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
            }
        } else {
            for field in ["default", "defaultRequest"] {
                for (name, _) in limit[field].as_object().into_iter().flatten() {
                    causes.extend(name_check(name, &format!("{at}.{field}[{name}]")));
                    keys.insert(name.clone());
                }
            }
        }
        if t == "PersistentVolumeClaim"
            && limit["min"].get("storage").is_none()
            && limit["max"].get("storage").is_none()
        {
            causes.push(Cause::required(
                format!("{at}.limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            ));
        }
        for (name, _) in limit["maxLimitRequestRatio"]
            .as_object()
            .into_iter()
            .flatten()
        {
            causes.extend(name_check(
                name,
                &format!("{at}.maxLimitRequestRatio[{name}]"),
            ));
            keys.insert(name.clone());
        }
        for k in &keys {
            let get = |field: &str| limit[field].get(k.as_str()).and_then(Quantity::from_value);
            let (min, max, default, request) = (
                get("min"),
                get("max"),
                get("default"),
                get("defaultRequest"),
            );
            let invalid = |field: &str, q: &Quantity, detail: String| {
                // Upstream passes the quantity struct; its text stands in.
                Cause::invalid_str(format!("{at}.{field}[{k}]"), &q.canonical(), &detail)
            };
            if let (Some(mn), Some(mx)) = (min, max) {
                if mn > mx {
                    causes.push(invalid(
                        "min",
                        &mn,
                        format!(
                            "min value {} is greater than max value {}",
                            mn.canonical(),
                            mx.canonical()
                        ),
                    ));
                }
            }
            if let (Some(r), Some(mn)) = (request, min) {
                if mn > r {
                    causes.push(invalid(
                        "defaultRequest",
                        &r,
                        format!(
                            "min value {} is greater than default request value {}",
                            mn.canonical(),
                            r.canonical()
                        ),
                    ));
                }
            }
            if let (Some(r), Some(mx)) = (request, max) {
                if r > mx {
                    causes.push(invalid(
                        "defaultRequest",
                        &r,
                        format!(
                            "default request value {} is greater than max value {}",
                            r.canonical(),
                            mx.canonical()
                        ),
                    ));
                }
            }
            if let (Some(r), Some(d)) = (request, default) {
                if r > d {
                    causes.push(invalid(
                        "defaultRequest",
                        &r,
                        format!(
                            "default request value {} is greater than default limit value {}",
                            r.canonical(),
                            d.canonical()
                        ),
                    ));
                }
            }
            if let (Some(d), Some(mn)) = (default, min) {
                if mn > d {
                    causes.push(invalid(
                        "default",
                        &mn,
                        format!(
                            "min value {} is greater than default value {}",
                            mn.canonical(),
                            d.canonical()
                        ),
                    ));
                }
            }
            if let (Some(d), Some(mx)) = (default, max) {
                if d > mx {
                    causes.push(invalid(
                        "default",
                        &mx,
                        format!(
                            "default value {} is greater than max value {}",
                            d.canonical(),
                            mx.canonical()
                        ),
                    ));
                }
            }
            if let Some(ratio) = get("maxLimitRequestRatio") {
                if ratio < Quantity::parse("1").unwrap_or(ratio) {
                    causes.push(invalid(
                        "maxLimitRequestRatio",
                        &ratio,
                        format!("ratio {} is less than 1", ratio.canonical()),
                    ));
                }
            }
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    fn texts(causes: Option<Vec<Cause>>) -> Vec<String> {
        causes
            .unwrap_or_default()
            .iter()
            .map(Cause::error_text)
            .collect()
    }

    #[rstest]
    #[case::ok(json!({"hard": {"pods": "10", "requests.cpu": "4", "count/deployments.apps": "3"}}), vec![])]
    #[case::unknown(json!({"hard": {"widgets": "1"}}),
        vec!["spec.hard[widgets]: Invalid value: \"widgets\": must be a standard resource type or fully qualified",
             "spec.hard[widgets]: Invalid value: \"widgets\": must be a standard resource for quota"])]
    #[case::negative(json!({"hard": {"pods": "-1"}}),
        vec!["spec.hard[pods]: Invalid value: \"-1\": must be greater than or equal to 0"])]
    #[case::scope(json!({"scopes": ["Sometimes"]}),
        vec!["spec.scopes: Invalid value: []core.ResourceQuotaScope{\"Sometimes\"}: unsupported scope"])]
    fn quotas(#[case] spec: Value, #[case] expected: Vec<&str>) {
        assert_eq!(
            texts(create_causes("ResourceQuota", &json!({"spec": spec}))),
            expected
        );
    }

    #[rstest]
    #[case::ok(json!({"limits": [{"type": "Container", "max": {"cpu": "2"}, "default": {"cpu": "1"}}]}), vec![])]
    #[case::min_over_max(json!({"limits": [{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]}),
        vec!["spec.limits[0].min[cpu]: Invalid value: \"2\": min value 2 is greater than max value 1"])]
    #[case::pod_default(json!({"limits": [{"type": "Pod", "default": {"cpu": "1"}}]}),
        vec!["spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"])]
    #[case::bad_type(json!({"limits": [{"type": "Node"}]}),
        vec!["spec.limits[0].type: Invalid value: \"Node\": must be a standard limit type or fully qualified"])]
    fn limit_ranges(#[case] spec: Value, #[case] expected: Vec<&str>) {
        assert_eq!(
            texts(create_causes("LimitRange", &json!({"spec": spec}))),
            expected
        );
    }
}
