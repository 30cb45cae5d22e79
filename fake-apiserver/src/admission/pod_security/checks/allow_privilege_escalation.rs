//! `allowPrivilegeEscalation` (restricted, 1.8+): every container must set
//! `securityContext.allowPrivilegeEscalation=false`; from 1.25 Windows pods are exempt
//! (`check_allowPrivilegeEscalation.go`).

use serde_json::Value;

use crate::admission::pod_security::helpers::{
    container_name, containers_phrase, visit_containers,
};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// The check.
pub(crate) const CHECK: Check = Check {
    id: "allowPrivilegeEscalation",
    level: Level::Restricted,
    versions: &[
        VersionedCheck {
            minimum_version: 8,
            check_pod: allow_privilege_escalation_1_8,
            override_check_ids: &[],
        },
        VersionedCheck {
            minimum_version: 25,
            check_pod: allow_privilege_escalation_1_25,
            override_check_ids: &[],
        },
    ],
};

fn allow_privilege_escalation_1_8(_metadata: &Value, spec: &Value) -> CheckResult {
    let mut bad_containers = Vec::new();
    visit_containers(spec, |container| {
        if container["securityContext"]["allowPrivilegeEscalation"].as_bool() != Some(false) {
            bad_containers.push(container_name(container));
        }
    });
    if bad_containers.is_empty() {
        return CheckResult::allowed();
    }
    CheckResult::forbidden(
        "allowPrivilegeEscalation != false",
        format!(
            "{} must set securityContext.allowPrivilegeEscalation=false",
            containers_phrase(&bad_containers)
        ),
    )
}

/// Validation refuses the field on Windows pods, so they pass without it.
fn allow_privilege_escalation_1_25(metadata: &Value, spec: &Value) -> CheckResult {
    if spec["os"]["name"].as_str() == Some("windows") {
        return CheckResult::allowed();
    }
    allow_privilege_escalation_1_8(metadata, spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::unset_nil_and_true(
        json!({"containers": [
            {"name": "a"},
            {"name": "b", "securityContext": {}},
            {"name": "c", "securityContext": {"allowPrivilegeEscalation": true}},
            {"name": "d", "securityContext": {"allowPrivilegeEscalation": false}},
        ]}),
        Some("containers \"a\", \"b\", \"c\" must set securityContext.allowPrivilegeEscalation=false")
    )]
    #[case::one(
        json!({"containers": [{"name": "a", "securityContext": {"allowPrivilegeEscalation": null}}]}),
        Some("container \"a\" must set securityContext.allowPrivilegeEscalation=false")
    )]
    #[case::all_false(json!({"containers": [{"name": "a", "securityContext": {"allowPrivilegeEscalation": false}}]}), None)]
    fn containers_must_refuse_escalation(#[case] spec: Value, #[case] detail: Option<&str>) {
        let result = allow_privilege_escalation_1_8(&json!({}), &spec);
        assert_eq!(result.allowed, detail.is_none());
        if let Some(detail) = detail {
            assert_eq!(result.forbidden_reason, "allowPrivilegeEscalation != false");
            assert_eq!(result.forbidden_detail, detail);
        }
    }

    #[test]
    fn windows_pods_pass_from_1_25() {
        let spec = json!({"os": {"name": "windows"}, "containers": [{"name": "a"}]});
        assert!(allow_privilege_escalation_1_25(&json!({}), &spec).allowed);
        assert!(!allow_privilege_escalation_1_8(&json!({}), &spec).allowed);
        let linux = json!({"os": {"name": "linux"}, "containers": [{"name": "a"}]});
        assert!(!allow_privilege_escalation_1_25(&json!({}), &linux).allowed);
    }
}
