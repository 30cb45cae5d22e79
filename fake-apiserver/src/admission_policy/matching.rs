//! Which requests a policy's `matchConstraints` (or a binding's `matchResources`) select
//! (`policy/matching`): resource rules with their operations, groups, versions, resources and
//! subresources, names and scope, excluded rules, and the namespace and object selectors.

use serde_json::Value;

use super::Attributes;
use crate::rules::selectors::LabelSelector;

/// Whether `constraints` (a `MatchResources`) select the request; `object`/`old` are the
/// request's objects and `namespace` the request namespace's object. `rules_required`: an
/// empty rule list selects nothing (a policy's constraints) rather than everything (a
/// binding's).
pub(crate) fn matches(
    constraints: Option<&Value>,
    attrs: &Attributes<'_>,
    object: Option<&Value>,
    old: Option<&Value>,
    namespace: Option<&Value>,
    rules_required: bool,
) -> Result<bool, String> {
    let empty = Value::Null;
    let c = constraints.unwrap_or(&empty);
    if !namespace_matches(c.get("namespaceSelector"), attrs, object, old, namespace)? {
        return Ok(false);
    }
    if !object_matches(c.get("objectSelector"), object, old)? {
        return Ok(false);
    }
    let rules = c
        .get("resourceRules")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let included = if rules.is_empty() {
        !rules_required
    } else {
        rules.iter().any(|r| rule_matches(r, attrs))
    };
    if !included {
        return Ok(false);
    }
    let excluded = c
        .get("excludeResourceRules")
        .and_then(Value::as_array)
        .is_some_and(|rs| rs.iter().any(|r| rule_matches(r, attrs)));
    Ok(!excluded)
}

fn selector(s: Option<&Value>) -> Result<Option<LabelSelector>, String> {
    match s {
        None | Some(Value::Null) => Ok(None),
        Some(v) => LabelSelector::from_label_selector_json(v)
            .map(Some)
            .map_err(|e| e.to_string()),
    }
}

fn labels(o: Option<&Value>) -> Option<&serde_json::Map<String, Value>> {
    o.and_then(|o| o.pointer("/metadata/labels"))
        .and_then(Value::as_object)
}

/// The namespace selector: a namespaced request is matched by its namespace's labels; a
/// Namespace by its own; any other cluster-scoped request always matches.
fn namespace_matches(
    s: Option<&Value>,
    attrs: &Attributes<'_>,
    object: Option<&Value>,
    old: Option<&Value>,
    namespace: Option<&Value>,
) -> Result<bool, String> {
    let Some(sel) = selector(s)? else {
        return Ok(true);
    };
    if attrs.info.group.is_empty() && attrs.info.kind == "Namespace" {
        return Ok(sel.matches(labels(object.or(old))));
    }
    if attrs.namespace.is_empty() {
        return Ok(true);
    }
    Ok(sel.matches(labels(namespace)))
}

/// The object selector matches when the new or the old object's labels match.
fn object_matches(
    s: Option<&Value>,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Result<bool, String> {
    let Some(sel) = selector(s)? else {
        return Ok(true);
    };
    Ok([object, old]
        .into_iter()
        .flatten()
        .any(|o| sel.matches(labels(Some(o)))))
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// One `NamedRuleWithOperations`.
fn rule_matches(rule: &Value, attrs: &Attributes<'_>) -> bool {
    let any_or = |list: Vec<String>, value: &str| list.iter().any(|x| x == "*" || x == value);
    if !any_or(strings(rule, "operations"), attrs.operation.as_str()) {
        return false;
    }
    if !any_or(strings(rule, "apiGroups"), &attrs.info.group) {
        return false;
    }
    if !any_or(strings(rule, "apiVersions"), &attrs.info.version) {
        return false;
    }
    let resource_ok = strings(rule, "resources")
        .iter()
        .any(|r| resource_matches(r, &attrs.info.plural, attrs.subresource));
    if !resource_ok {
        return false;
    }
    let names = strings(rule, "resourceNames");
    if !names.is_empty() && !names.iter().any(|n| n == attrs.name) {
        return false;
    }
    match rule.get("scope").and_then(Value::as_str).unwrap_or("*") {
        "Cluster" => !attrs.info.namespaced,
        "Namespaced" => attrs.info.namespaced,
        _ => true,
    }
}

/// `resources` entries: `pods` (the resource only), `pods/status`, `pods/*` (every
/// subresource), `*` (every resource, no subresource), `*/status`, `*/*` (everything).
fn resource_matches(entry: &str, plural: &str, subresource: Option<&str>) -> bool {
    let (res, sub) = match entry.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (entry, None),
    };
    let res_ok = res == "*" || res == plural;
    let sub_ok = match (sub, subresource) {
        (None, None) => true,
        (None, Some(_)) => false,
        // `*/*` is every resource and subresource; `pods/*` only the subresources.
        (Some("*"), None) => res == "*",
        (Some("*"), Some(_)) => true,
        (Some(_), None) => false,
        (Some(s), Some(actual)) => s == actual,
    };
    res_ok && sub_ok
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::resource_matches;

    #[rstest]
    #[case("pods", "pods", None, true)]
    #[case("pods", "pods", Some("status"), false)]
    #[case("pods/status", "pods", Some("status"), true)]
    #[case("pods/*", "pods", Some("log"), true)]
    #[case("pods/*", "pods", None, false)]
    #[case("*/*", "pods", None, true)]
    #[case("*", "deployments", None, true)]
    #[case("*", "deployments", Some("scale"), false)]
    #[case("*/scale", "deployments", Some("scale"), true)]
    #[case("*/*", "deployments", Some("status"), true)]
    #[case("configmaps", "secrets", None, false)]
    fn resources_select_resources_and_subresources(
        #[case] entry: &str,
        #[case] plural: &str,
        #[case] sub: Option<&str>,
        #[case] expected: bool,
    ) {
        assert_eq!(resource_matches(entry, plural, sub), expected);
    }
}
