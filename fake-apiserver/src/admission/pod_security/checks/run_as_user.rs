//! `runAsUser` (restricted, 1.23+): neither the pod (`spec.securityContext.runAsUser`) nor any
//! container (`securityContext.runAsUser`) may explicitly run as user 0; leaving it unset is
//! fine. From 1.35 a pod in a user namespace (`hostUsers: false`) may set any value
//! (`check_runAsUser.go`).

use serde_json::Value;

use crate::admission::pod_security::helpers::{
    container_name, containers_phrase, relax_policy_for_user_namespace_pod, visit_containers,
};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// Forbids an explicit `runAsUser: 0`; from 1.35 only outside a user namespace
/// (`CheckRunAsUser`).
pub(crate) const CHECK: Check = Check {
    id: "runAsUser",
    level: Level::Restricted,
    versions: &[
        VersionedCheck {
            minimum_version: 23,
            check_pod: run_as_user_1_23,
            override_check_ids: &[],
        },
        VersionedCheck {
            minimum_version: 35,
            check_pod: run_as_user_1_35,
            override_check_ids: &[],
        },
    ],
};

/// Whether a security context (pod or container; absent or null is none) sets `runAsUser: 0`.
fn sets_root(security_context: &Value) -> bool {
    security_context["runAsUser"].as_i64() == Some(0)
}

/// `run_as_user_1_23`, unless the pod runs in a user namespace. (In the 1.23 policy this
/// relaxation hung on a never-graduated feature gate; upstream dropped it there and made it
/// unconditional here, see KEP-127.)
fn run_as_user_1_35(metadata: &Value, spec: &Value) -> CheckResult {
    if relax_policy_for_user_namespace_pod(spec) {
        return CheckResult::allowed();
    }
    run_as_user_1_23(metadata, spec)
}

/// The pod and every container explicitly setting `runAsUser: 0`.
fn run_as_user_1_23(_metadata: &Value, spec: &Value) -> CheckResult {
    let mut bad_setters = Vec::new();
    if sets_root(&spec["securityContext"]) {
        bad_setters.push("pod".to_string());
    }
    let mut explicitly_bad_containers = Vec::new();
    visit_containers(spec, |container| {
        if sets_root(&container["securityContext"]) {
            explicitly_bad_containers.push(container_name(container));
        }
    });
    if !explicitly_bad_containers.is_empty() {
        bad_setters.push(containers_phrase(&explicitly_bad_containers));
    }
    if bad_setters.is_empty() {
        return CheckResult::allowed();
    }
    CheckResult::forbidden(
        "runAsUser=0",
        format!("{} must not set runAsUser=0", bad_setters.join(" and ")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::pod_security::registry::CheckPodFn;
    use rstest::rstest;
    use serde_json::json;

    fn expect(detail: Option<&str>) -> CheckResult {
        match detail {
            Some(detail) => CheckResult::forbidden("runAsUser=0", detail),
            None => CheckResult::allowed(),
        }
    }

    #[rstest]
    // TestRunAsUser (1.35)
    #[case::pod_run_as_user_0(run_as_user_1_35, json!({
        "securityContext": {"runAsUser": 0},
        "containers": [{"name": "a"}],
    }), Some("pod must not set runAsUser=0"))]
    #[case::pod_run_as_user_non_zero(run_as_user_1_35, json!({
        "securityContext": {"runAsUser": 1000},
        "containers": [{"name": "a"}],
    }), None)]
    #[case::pod_run_as_user_nil(run_as_user_1_35, json!({
        "securityContext": {"runAsUser": null},
        "containers": [{"name": "a"}],
    }), None)]
    #[case::containers_run_as_user_0(run_as_user_1_35, json!({
        "securityContext": {"runAsUser": 1000},
        "containers": [
            {"name": "a"},
            {"name": "b", "securityContext": {}},
            {"name": "c", "securityContext": {"runAsUser": 0}},
            {"name": "d", "securityContext": {"runAsUser": 0}},
            {"name": "e", "securityContext": {"runAsUser": 1}},
            {"name": "f", "securityContext": {"runAsUser": 1}},
        ],
    }), Some(r#"containers "c", "d" must not set runAsUser=0"#))]
    #[case::containers_run_as_user_non_zero(run_as_user_1_35, json!({
        "containers": [
            {"name": "c", "securityContext": {"runAsUser": 1}},
            {"name": "d", "securityContext": {"runAsUser": 2}},
            {"name": "e", "securityContext": {"runAsUser": 3}},
            {"name": "f", "securityContext": {"runAsUser": 4}},
        ],
    }), None)]
    #[case::host_users_false_allowed(run_as_user_1_35, json!({"hostUsers": false}), None)]
    // the user-namespace relaxation only exists from 1.35
    #[case::host_users_false_pod_and_container_0_at_1_35(run_as_user_1_35, json!({
        "hostUsers": false,
        "securityContext": {"runAsUser": 0},
        "containers": [{"name": "a", "securityContext": {"runAsUser": 0}}],
    }), None)]
    #[case::host_users_false_pod_and_container_0_at_1_23(run_as_user_1_23, json!({
        "hostUsers": false,
        "securityContext": {"runAsUser": 0},
        "containers": [{"name": "a", "securityContext": {"runAsUser": 0}}],
    }), Some(r#"pod and container "a" must not set runAsUser=0"#))]
    #[case::host_users_true_is_not_relaxed(run_as_user_1_35, json!({
        "hostUsers": true,
        "containers": [{"name": "a", "securityContext": {"runAsUser": 0}}],
    }), Some(r#"container "a" must not set runAsUser=0"#))]
    // fixtures (1.23)
    #[case::fixture_non_zero_everywhere(run_as_user_1_23, json!({
        "securityContext": {"runAsUser": 1000},
        "initContainers": [{"name": "initc", "securityContext": {"runAsUser": 1000}}],
        "containers": [{"name": "c", "securityContext": {"runAsUser": 1000}}],
    }), None)]
    #[case::fixture_explicit_0_on_pod(run_as_user_1_23, json!({
        "securityContext": {"runAsUser": 0},
        "initContainers": [{"name": "initc", "securityContext": {}}],
        "containers": [{"name": "c", "securityContext": {}}],
    }), Some("pod must not set runAsUser=0"))]
    #[case::fixture_explicit_0_on_container(run_as_user_1_23, json!({
        "securityContext": {},
        "initContainers": [{"name": "initc", "securityContext": {}}],
        "containers": [{"name": "c", "securityContext": {"runAsUser": 0}}],
    }), Some(r#"container "c" must not set runAsUser=0"#))]
    #[case::fixture_explicit_0_on_init_container(run_as_user_1_23, json!({
        "securityContext": {},
        "initContainers": [{"name": "initc", "securityContext": {"runAsUser": 0}}],
        "containers": [{"name": "c", "securityContext": {}}],
    }), Some(r#"container "initc" must not set runAsUser=0"#))]
    // every setter, containers in the pod's order
    #[case::pod_and_containers_in_order(run_as_user_1_23, json!({
        "securityContext": {"runAsUser": 0},
        "initContainers": [{"name": "z", "securityContext": {"runAsUser": 0}}],
        "containers": [{"name": "b", "securityContext": {"runAsUser": 0}}],
        "ephemeralContainers": [{"name": "a", "securityContext": {"runAsUser": 0}}],
    }), Some(r#"pod and containers "z", "b", "a" must not set runAsUser=0"#))]
    #[case::malformed(run_as_user_1_35, json!({
        "hostUsers": "false",
        "securityContext": {"runAsUser": "0"},
        "containers": [
            {"name": "a", "securityContext": {"runAsUser": 0.5}},
            {"name": "b", "securityContext": null},
            {"name": "c", "securityContext": [0]},
            0,
        ],
    }), None)]
    fn explicit_root_users_are_named(
        #[case] check: CheckPodFn,
        #[case] spec: Value,
        #[case] detail: Option<&str>,
    ) {
        assert_eq!(check(&json!({}), &spec), expect(detail));
    }

    #[rstest]
    #[case::v1_22(22, None)]
    #[case::v1_23(23, Some(23))]
    #[case::v1_34(34, Some(23))]
    #[case::v1_35(35, Some(35))]
    #[case::v1_36(36, Some(35))]
    fn the_version_in_force(#[case] minor: u32, #[case] since: Option<u32>) {
        let in_force = CHECK
            .versions
            .iter()
            .rev()
            .find(|v| v.minimum_version <= minor)
            .map(|v| v.minimum_version);
        assert_eq!(in_force, since);
        assert_eq!((CHECK.id, CHECK.level), ("runAsUser", Level::Restricted));
        assert!(CHECK
            .versions
            .iter()
            .all(|v| v.override_check_ids.is_empty()));
    }
}
