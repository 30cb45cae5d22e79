//! `privileged` (baseline, 1.0+): no container may set `securityContext.privileged=true`
//! (`check_privileged.go`).

use serde_json::Value;

use crate::admission::pod_security::helpers::{
    container_name, containers_phrase, is_true, visit_containers,
};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// The check.
pub(crate) const CHECK: Check = Check {
    id: "privileged",
    level: Level::Baseline,
    versions: &[VersionedCheck {
        minimum_version: 0,
        check_pod: privileged_1_0,
        override_check_ids: &[],
    }],
};

fn privileged_1_0(_metadata: &Value, spec: &Value) -> CheckResult {
    let mut bad_containers = Vec::new();
    visit_containers(spec, |container| {
        if is_true(&container["securityContext"]["privileged"]) {
            bad_containers.push(container_name(container));
        }
    });
    if bad_containers.is_empty() {
        return CheckResult::allowed();
    }
    CheckResult::forbidden(
        "privileged",
        format!(
            "{} must not set securityContext.privileged=true",
            containers_phrase(&bad_containers)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::one(
        json!({"containers": [{"name": "a"}, {"name": "b", "securityContext": {"privileged": true}}]}),
        Some("container \"b\" must not set securityContext.privileged=true")
    )]
    #[case::several(
        json!({
            "initContainers": [{"name": "i", "securityContext": {"privileged": true}}],
            "containers": [{"name": "a", "securityContext": {"privileged": false}}, {"name": "b", "securityContext": {"privileged": true}}],
        }),
        Some("containers \"i\", \"b\" must not set securityContext.privileged=true")
    )]
    #[case::none(json!({"containers": [{"name": "a", "securityContext": {"privileged": false}}]}), None)]
    fn privileged_containers_are_named(#[case] spec: Value, #[case] detail: Option<&str>) {
        let result = privileged_1_0(&json!({}), &spec);
        assert_eq!(result.allowed, detail.is_none());
        if let Some(detail) = detail {
            assert_eq!(result.forbidden_reason, "privileged");
            assert_eq!(result.forbidden_detail, detail);
        }
    }
}
