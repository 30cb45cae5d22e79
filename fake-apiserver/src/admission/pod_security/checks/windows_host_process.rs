//! `windowsHostProcess` (baseline, 1.0+): neither the pod nor any container may set
//! `securityContext.windowsOptions.hostProcess=true` (`check_windowsHostProcess.go`).

use serde_json::Value;

use crate::admission::pod_security::helpers::{
    container_name, containers_phrase, is_true, visit_containers,
};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// The check: one implementation, from 1.0 on.
pub(crate) const CHECK: Check = Check {
    id: "windowsHostProcess",
    level: Level::Baseline,
    versions: &[VersionedCheck {
        minimum_version: 0,
        check_pod: windows_host_process_1_0,
        override_check_ids: &[],
    }],
};

/// Whether a (pod or container) security context sets `windowsOptions.hostProcess=true`.
fn sets_host_process(security_context: &Value) -> bool {
    is_true(&security_context["windowsOptions"]["hostProcess"])
}

fn windows_host_process_1_0(_metadata: &Value, spec: &Value) -> CheckResult {
    let mut bad_containers = Vec::new();
    visit_containers(spec, |container| {
        if sets_host_process(&container["securityContext"]) {
            bad_containers.push(container_name(container));
        }
    });

    let mut forbidden_setters = Vec::new();
    if sets_host_process(&spec["securityContext"]) {
        forbidden_setters.push("pod".to_string());
    }
    if !bad_containers.is_empty() {
        forbidden_setters.push(containers_phrase(&bad_containers));
    }

    if forbidden_setters.is_empty() {
        return CheckResult::allowed();
    }
    CheckResult::forbidden(
        "hostProcess",
        format!(
            "{} must not set securityContext.windowsOptions.hostProcess=true",
            forbidden_setters.join(" and ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    /// Upstream's fixtures' pod (with `hostNetwork`, which API validation requires of host
    /// process pods): every security context and `windowsOptions` set, the given `hostProcess`.
    fn fixture_spec(pod: Value, container: Value, init_container: Value) -> Value {
        json!({
            "hostNetwork": true,
            "securityContext": {"windowsOptions": {"hostProcess": pod}},
            "initContainers": [{"name": "initcontainer1", "securityContext": {"windowsOptions": {"hostProcess": init_container}}}],
            "containers": [{"name": "container1", "securityContext": {"windowsOptions": {"hostProcess": container}}}],
        })
    }

    #[rstest]
    // TestWindowsHostProcess
    #[case::host_process(
        json!({
            "securityContext": {"windowsOptions": {"hostProcess": true}},
            "containers": [
                {"name": "a", "securityContext": null},
                {"name": "b", "securityContext": {}},
                {"name": "c", "securityContext": {"windowsOptions": {}}},
                {"name": "d", "securityContext": {"windowsOptions": {"hostProcess": false}}},
                {"name": "e", "securityContext": {"windowsOptions": {"hostProcess": true}}},
                {"name": "f", "securityContext": {"windowsOptions": {"hostProcess": true}}},
            ],
        }),
        Some(r#"pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true"#)
    )]
    // Upstream's fixtures.
    #[case::fixture_true_for_pod(
        fixture_spec(json!(true), Value::Null, Value::Null),
        Some("pod must not set securityContext.windowsOptions.hostProcess=true")
    )]
    #[case::fixture_true_for_containers(
        fixture_spec(Value::Null, json!(true), json!(true)),
        Some(r#"containers "initcontainer1", "container1" must not set securityContext.windowsOptions.hostProcess=true"#)
    )]
    // Beyond upstream's cases.
    #[case::false_or_unset_everywhere(fixture_spec(json!(false), json!(false), Value::Null), None)]
    #[case::no_security_contexts(json!({"containers": [{"name": "a"}]}), None)]
    #[case::ephemeral_container(
        json!({"ephemeralContainers": [{"name": "debug", "securityContext": {"windowsOptions": {"hostProcess": true}}}]}),
        Some(r#"container "debug" must not set securityContext.windowsOptions.hostProcess=true"#)
    )]
    #[case::malformed_input(
        json!({"securityContext": {"windowsOptions": {"hostProcess": "true"}}, "containers": [{"securityContext": {"windowsOptions": true}}]}),
        None
    )]
    fn windows_host_process_1_0_cases(#[case] spec: Value, #[case] detail: Option<&str>) {
        let result = windows_host_process_1_0(&json!({}), &spec);
        match detail {
            None => assert_eq!(result, CheckResult::allowed()),
            Some(detail) => assert_eq!(result, CheckResult::forbidden("hostProcess", detail)),
        }
    }
}
