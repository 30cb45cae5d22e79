//! `runAsNonRoot` (restricted, 1.0+): every container must run with `runAsNonRoot: true`,
//! set on the container's security context or inherited from the pod's; neither may set it
//! to `false`. From 1.35 a pod in a user namespace (`hostUsers: false`) is exempt
//! (`check_runAsNonRoot.go`).

use serde_json::Value;

use crate::admission::pod_security::helpers::{
    container_name, containers_phrase, relax_policy_for_user_namespace_pod, visit_containers,
};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// Requires `runAsNonRoot: true` for every container; from 1.35 only outside a user namespace
/// (`CheckRunAsNonRoot`).
pub(crate) const CHECK: Check = Check {
    id: "runAsNonRoot",
    level: Level::Restricted,
    versions: &[
        VersionedCheck {
            minimum_version: 0,
            check_pod: run_as_non_root_1_0,
            override_check_ids: &[],
        },
        VersionedCheck {
            minimum_version: 35,
            check_pod: run_as_non_root_1_35,
            override_check_ids: &[],
        },
    ],
};

/// A security context's `runAsNonRoot`, `None` when it or the field is absent or null.
fn run_as_non_root(security_context: &Value) -> Option<bool> {
    security_context["runAsNonRoot"].as_bool()
}

/// `run_as_non_root_1_0`, unless the pod runs in a user namespace. (In the 1.0 policy this
/// relaxation hung on a never-graduated feature gate; upstream dropped it there and made it
/// unconditional here, see KEP-127.)
fn run_as_non_root_1_35(metadata: &Value, spec: &Value) -> CheckResult {
    if relax_policy_for_user_namespace_pod(spec) {
        return CheckResult::allowed();
    }
    run_as_non_root_1_0(metadata, spec)
}

/// Explicit `false`s first (pod, then containers); failing those, the containers that set
/// nothing while the pod does not set `true` either.
fn run_as_non_root_1_0(_metadata: &Value, spec: &Value) -> CheckResult {
    let mut bad_setters = Vec::new();
    let pod_run_as_non_root = match run_as_non_root(&spec["securityContext"]) {
        Some(false) => {
            bad_setters.push("pod".to_string());
            false
        }
        Some(true) => true,
        None => false,
    };

    let mut explicitly_bad_containers = Vec::new();
    let mut implicitly_bad_containers = Vec::new();
    visit_containers(spec, |container| {
        match run_as_non_root(&container["securityContext"]) {
            Some(true) => {}
            Some(false) => explicitly_bad_containers.push(container_name(container)),
            None if pod_run_as_non_root => {}
            None => implicitly_bad_containers.push(container_name(container)),
        }
    });

    if !explicitly_bad_containers.is_empty() {
        bad_setters.push(containers_phrase(&explicitly_bad_containers));
    }
    if !bad_setters.is_empty() {
        return CheckResult::forbidden(
            "runAsNonRoot != true",
            format!(
                "{} must not set securityContext.runAsNonRoot=false",
                bad_setters.join(" and ")
            ),
        );
    }
    if !implicitly_bad_containers.is_empty() {
        return CheckResult::forbidden(
            "runAsNonRoot != true",
            format!(
                "pod or {} must set securityContext.runAsNonRoot=true",
                containers_phrase(&implicitly_bad_containers),
            ),
        );
    }
    CheckResult::allowed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::pod_security::registry::CheckPodFn;
    use rstest::rstest;
    use serde_json::json;

    fn expect(detail: Option<&str>) -> CheckResult {
        match detail {
            Some(detail) => CheckResult::forbidden("runAsNonRoot != true", detail),
            None => CheckResult::allowed(),
        }
    }

    #[rstest]
    // TestRunAsNonRoot (1.35)
    #[case::no_explicit_run_as_non_root(run_as_non_root_1_35, json!({
        "containers": [{"name": "a"}],
    }), Some(r#"pod or container "a" must set securityContext.runAsNonRoot=true"#))]
    #[case::pod_run_as_non_root_false(run_as_non_root_1_35, json!({
        "securityContext": {"runAsNonRoot": false},
        "containers": [{"name": "a"}],
    }), Some("pod must not set securityContext.runAsNonRoot=false"))]
    #[case::containers_run_as_non_root_false(run_as_non_root_1_35, json!({
        "securityContext": {"runAsNonRoot": true},
        "containers": [
            {"name": "a"},
            {"name": "b", "securityContext": {}},
            {"name": "c", "securityContext": {"runAsNonRoot": false}},
            {"name": "d", "securityContext": {"runAsNonRoot": false}},
            {"name": "e", "securityContext": {"runAsNonRoot": true}},
            {"name": "f", "securityContext": {"runAsNonRoot": true}},
        ],
    }), Some(r#"containers "c", "d" must not set securityContext.runAsNonRoot=false"#))]
    #[case::pod_nil_container_fallthrough(run_as_non_root_1_35, json!({
        "containers": [
            {"name": "a"},
            {"name": "b", "securityContext": {}},
            {"name": "d", "securityContext": {"runAsNonRoot": true}},
            {"name": "e", "securityContext": {"runAsNonRoot": true}},
        ],
    }), Some(r#"pod or containers "a", "b" must set securityContext.runAsNonRoot=true"#))]
    #[case::host_users_false_allowed(run_as_non_root_1_35, json!({"hostUsers": false}), None)]
    // the user-namespace relaxation only exists from 1.35
    #[case::host_users_false_explicit_false_at_1_35(run_as_non_root_1_35, json!({
        "hostUsers": false,
        "securityContext": {"runAsNonRoot": false},
        "containers": [{"name": "a"}],
    }), None)]
    #[case::host_users_false_explicit_false_at_1_0(run_as_non_root_1_0, json!({
        "hostUsers": false,
        "securityContext": {"runAsNonRoot": false},
        "containers": [{"name": "a"}],
    }), Some("pod must not set securityContext.runAsNonRoot=false"))]
    #[case::host_users_false_unset_at_1_0(run_as_non_root_1_0, json!({
        "hostUsers": false,
        "containers": [{"name": "a"}],
    }), Some(r#"pod or container "a" must set securityContext.runAsNonRoot=true"#))]
    // fixtures (1.0)
    #[case::fixture_set_at_pod_level(run_as_non_root_1_0, json!({
        "securityContext": {"runAsNonRoot": true},
        "initContainers": [{"name": "initc", "securityContext": {}}],
        "containers": [{"name": "c", "securityContext": {}}],
    }), None)]
    #[case::fixture_set_on_all_containers(run_as_non_root_1_0, json!({
        "securityContext": {},
        "initContainers": [{"name": "initc", "securityContext": {"runAsNonRoot": true}}],
        "containers": [{"name": "c", "securityContext": {"runAsNonRoot": true}}],
    }), None)]
    #[case::fixture_unset_everywhere(run_as_non_root_1_0, json!({
        "securityContext": {},
        "initContainers": [{"name": "initc", "securityContext": {}}],
        "containers": [{"name": "c", "securityContext": {}}],
    }), Some(r#"pod or containers "initc", "c" must set securityContext.runAsNonRoot=true"#))]
    #[case::fixture_explicit_false_on_pod(run_as_non_root_1_0, json!({
        "securityContext": {"runAsNonRoot": false},
        "initContainers": [{"name": "initc", "securityContext": {}}],
        "containers": [{"name": "c", "securityContext": {}}],
    }), Some("pod must not set securityContext.runAsNonRoot=false"))]
    #[case::fixture_explicit_false_on_container(run_as_non_root_1_0, json!({
        "securityContext": {"runAsNonRoot": true},
        "initContainers": [{"name": "initc", "securityContext": {}}],
        "containers": [{"name": "c", "securityContext": {"runAsNonRoot": false}}],
    }), Some(r#"container "c" must not set securityContext.runAsNonRoot=false"#))]
    #[case::fixture_explicit_false_on_init_container(run_as_non_root_1_0, json!({
        "securityContext": {"runAsNonRoot": true},
        "initContainers": [{"name": "initc", "securityContext": {"runAsNonRoot": false}}],
        "containers": [{"name": "c", "securityContext": {}}],
    }), Some(r#"container "initc" must not set securityContext.runAsNonRoot=false"#))]
    // explicit falses win over (and hide) unset containers; the pod comes first
    #[case::pod_and_containers_false_hide_unset(run_as_non_root_1_0, json!({
        "securityContext": {"runAsNonRoot": false},
        "initContainers": [{"name": "z", "securityContext": {"runAsNonRoot": false}}],
        "containers": [{"name": "unset"}, {"name": "b", "securityContext": {"runAsNonRoot": false}}],
        "ephemeralContainers": [{"name": "e"}],
    }), Some(r#"pod and containers "z", "b" must not set securityContext.runAsNonRoot=false"#))]
    #[case::ephemeral_containers_count(run_as_non_root_1_0, json!({
        "containers": [{"name": "c", "securityContext": {"runAsNonRoot": true}}],
        "ephemeralContainers": [{"name": "debug"}],
    }), Some(r#"pod or container "debug" must set securityContext.runAsNonRoot=true"#))]
    #[case::no_containers(run_as_non_root_1_0, json!({}), None)]
    #[case::null_is_unset(run_as_non_root_1_0, json!({
        "securityContext": null,
        "containers": [{"name": "a", "securityContext": {"runAsNonRoot": null}}, {"name": "b", "securityContext": null}],
    }), Some(r#"pod or containers "a", "b" must set securityContext.runAsNonRoot=true"#))]
    #[case::malformed(run_as_non_root_1_35, json!({
        "hostUsers": 0,
        "securityContext": {"runAsNonRoot": "true"},
        "containers": [{"name": "a", "securityContext": {"runAsNonRoot": 1}}, 5],
    }), Some(r#"pod or containers "a", "" must set securityContext.runAsNonRoot=true"#))]
    fn containers_must_run_as_non_root(
        #[case] check: CheckPodFn,
        #[case] spec: Value,
        #[case] detail: Option<&str>,
    ) {
        assert_eq!(check(&json!({}), &spec), expect(detail));
    }

    #[rstest]
    #[case::v1_0(0, 0)]
    #[case::v1_34(34, 0)]
    #[case::v1_35(35, 35)]
    #[case::v1_36(36, 35)]
    fn the_version_in_force(#[case] minor: u32, #[case] since: u32) {
        let in_force = CHECK
            .versions
            .iter()
            .rev()
            .find(|v| v.minimum_version <= minor)
            .map(|v| v.minimum_version);
        assert_eq!(in_force, Some(since));
        assert_eq!((CHECK.id, CHECK.level), ("runAsNonRoot", Level::Restricted));
        assert!(CHECK
            .versions
            .iter()
            .all(|v| v.override_check_ids.is_empty()));
    }
}
