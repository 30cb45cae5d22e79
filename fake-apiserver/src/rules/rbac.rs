//! Rules of the RBAC kinds, from `pkg/apis/rbac/validation/validation.go`: policy rules need
//! verbs and either resources (with groups) or non-resource URLs; bindings reference a Role or
//! ClusterRole in `rbac.authorization.k8s.io` that they may never change; subjects are a
//! ServiceAccount, User or Group.

use serde_json::Value;

use super::str_of;
use crate::rules::validation::{validate_path_segment_name, Cause, NameRule};

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// The causes of creating an RBAC object of `kind` (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "Role" => rules(obj, true),
        "ClusterRole" => rules(obj, false),
        "RoleBinding" => binding(obj, true),
        "ClusterRoleBinding" => binding(obj, false),
        _ => Vec::new(),
    }
}

/// The causes of updating an RBAC object: `Validate*Update` re-validates the object, and a
/// binding's `roleRef` may not change.
pub fn update_causes(kind: &str, old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = create_causes(kind, new);
    if kind.ends_with("Binding") {
        let key = |r: &Value| {
            (
                str_of(r, "apiGroup").to_string(),
                str_of(r, "kind").to_string(),
                str_of(r, "name").to_string(),
            )
        };
        if key(&old["roleRef"]) != key(&new["roleRef"]) {
            causes.push(Cause::invalid(
                "roleRef",
                &new["roleRef"],
                "cannot change roleRef",
            ));
        }
    }
    causes
}

fn list_len(v: &Value, key: &str) -> usize {
    v[key].as_array().map_or(0, Vec::len)
}

/// `validatePolicyRule` for each of `rules` (a ClusterRole with an aggregation rule has its
/// rules filled by the controller, but the given ones are still checked).
fn rules(obj: &Value, namespaced: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, rule) in obj["rules"].as_array().into_iter().flatten().enumerate() {
        let at = format!("rules[{i}]");
        if list_len(rule, "verbs") == 0 {
            causes.push(Cause::required(
                format!("{at}.verbs"),
                "verbs must contain at least one value",
            ));
        }
        if list_len(rule, "nonResourceURLs") > 0 {
            if namespaced {
                causes.push(Cause::invalid(
                    format!("{at}.nonResourceURLs"),
                    &rule["nonResourceURLs"],
                    "namespaced rules cannot apply to non-resource URLs",
                ));
            }
            if list_len(rule, "apiGroups") > 0
                || list_len(rule, "resources") > 0
                || list_len(rule, "resourceNames") > 0
            {
                causes.push(Cause::invalid(
                    format!("{at}.nonResourceURLs"),
                    &rule["nonResourceURLs"],
                    "rules cannot apply to both regular resources and non-resource URLs",
                ));
            }
            continue;
        }
        if list_len(rule, "apiGroups") == 0 {
            causes.push(Cause::required(
                format!("{at}.apiGroups"),
                "resource rules must supply at least one api group",
            ));
        }
        if list_len(rule, "resources") == 0 {
            causes.push(Cause::required(
                format!("{at}.resources"),
                "resource rules must supply at least one resource",
            ));
        }
        if list_len(rule, "resourceNames") > 0 && list_len(rule, "resources") > 1 {
            causes.push(Cause::required(
                format!("{at}.resourceNames"),
                "resource names cannot apply to multiple resources",
            ));
        }
    }
    causes
}

/// `ValidateRoleBinding` / `ValidateClusterRoleBinding`.
fn binding(obj: &Value, namespaced: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    let role_ref = &obj["roleRef"];
    let group = str_of(role_ref, "apiGroup");
    if group != RBAC_GROUP {
        causes.push(Cause::not_supported(
            "roleRef.apiGroup",
            &Value::from(group),
            &[RBAC_GROUP.into()],
        ));
    }
    let kind = str_of(role_ref, "kind");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        causes.push(Cause::not_supported(
            "roleRef.kind",
            &Value::from(kind),
            &kinds.iter().map(|k| k.to_string()).collect::<Vec<_>>(),
        ));
    }
    let name = str_of(role_ref, "name");
    if name.is_empty() {
        causes.push(Cause::required("roleRef.name", ""));
    } else {
        for msg in validate_path_segment_name(name) {
            causes.push(Cause::invalid_str("roleRef.name", name, &msg));
        }
    }
    for (i, subject) in obj["subjects"].as_array().into_iter().flatten().enumerate() {
        causes.extend(subject_causes(
            subject,
            namespaced,
            &format!("subjects[{i}]"),
        ));
    }
    causes
}

/// `validateRoleBindingSubject`. `apiGroup` of a User or Group defaults to
/// `rbac.authorization.k8s.io` (`SetDefaults_Subject`), so an absent one is accepted.
fn subject_causes(subject: &Value, namespaced: bool, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let name = str_of(subject, "name");
    let group = str_of(subject, "apiGroup");
    if name.is_empty() {
        causes.push(Cause::required(format!("{at}.name"), ""));
    }
    match str_of(subject, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                for msg in NameRule::Dns1123Subdomain.check(name, false) {
                    causes.push(Cause::invalid_str(format!("{at}.name"), name, &msg));
                }
            }
            if !group.is_empty() {
                causes.push(Cause::not_supported(
                    format!("{at}.apiGroup"),
                    &Value::from(group),
                    &[String::new()],
                ));
            }
            if !namespaced && str_of(subject, "namespace").is_empty() {
                causes.push(Cause::required(format!("{at}.namespace"), ""));
            }
        }
        kind @ ("User" | "Group") => {
            if name.is_empty() {
                let what = if kind == "User" { "user" } else { "group" };
                causes.push(Cause::invalid_str(
                    format!("{at}.name"),
                    name,
                    &format!("{what} name cannot be empty"),
                ));
            }
            if !group.is_empty() && group != RBAC_GROUP {
                causes.push(Cause::not_supported(
                    format!("{at}.apiGroup"),
                    &Value::from(group),
                    &[RBAC_GROUP.into()],
                ));
            }
        }
        other => causes.push(Cause::not_supported(
            format!("{at}.kind"),
            &Value::from(other),
            &["ServiceAccount".into(), "User".into(), "Group".into()],
        )),
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    use crate::rules::validation::error_texts as texts;

    #[rstest]
    #[case::ok(json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]), vec![])]
    #[case::no_verbs(json!([{"apiGroups": [""], "resources": ["pods"]}]), vec!["rules[0].verbs: Required value: verbs must contain at least one value"])]
    #[case::no_groups(json!([{"resources": ["pods"], "verbs": ["get"]}]), vec!["rules[0].apiGroups: Required value: resource rules must supply at least one api group"])]
    #[case::urls_in_role(json!([{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]), vec!["rules[0].nonResourceURLs: Invalid value: [\"/healthz\"]: namespaced rules cannot apply to non-resource URLs"])]
    fn role_rules(#[case] rules: Value, #[case] errors: Vec<&str>) {
        assert_eq!(
            texts(create_causes("Role", &json!({"rules": rules}))),
            errors
        );
    }

    fn binding(kind: &str) -> Value {
        json!({"roleRef": {"apiGroup": RBAC_GROUP, "kind": kind, "name": "view"},
            "subjects": [{"kind": "User", "name": "jane"}, {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]})
    }

    #[test]
    fn bindings() {
        assert!(create_causes("RoleBinding", &binding("Role")).is_empty());
        assert_eq!(
            texts(create_causes("ClusterRoleBinding", &binding("Role"))),
            vec!["roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\""]
        );
        let mut bad = binding("ClusterRole");
        bad["subjects"] = json!([{"kind": "Robot", "name": "r"}]);
        assert_eq!(
            texts(create_causes("RoleBinding", &bad)),
            vec!["subjects[0].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\""]
        );
    }

    #[test]
    fn role_ref_is_immutable() {
        let old = binding("ClusterRole");
        let mut new = old.clone();
        new["roleRef"]["name"] = json!("edit");
        let causes = update_causes("RoleBinding", &old, &new);
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].field, "roleRef");
        assert!(causes[0].message.ends_with(": cannot change roleRef"));
    }
}
