//! `hostPorts` (baseline, 1.0+): no container port may set a `hostPort`
//! (`check_hostPorts.go`).

use serde_json::Value;

use crate::admission::pod_security::helpers::{
    container_name, containers_phrase, pluralize, sorted_set, visit_containers,
};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// The check.
pub(crate) const CHECK: Check = Check {
    id: "hostPorts",
    level: Level::Baseline,
    versions: &[VersionedCheck {
        minimum_version: 0,
        check_pod: host_ports_1_0,
        override_check_ids: &[],
    }],
};

fn host_ports_1_0(_metadata: &Value, spec: &Value) -> CheckResult {
    let mut bad_containers = Vec::new();
    let mut forbidden_host_ports = Vec::new();
    visit_containers(spec, |container| {
        let mut valid = true;
        for port in container["ports"].as_array().into_iter().flatten() {
            match port["hostPort"].as_i64() {
                Some(host_port) if host_port != 0 => {
                    valid = false;
                    forbidden_host_ports.push(host_port.to_string());
                }
                _ => {}
            }
        }
        if !valid {
            bad_containers.push(container_name(container));
        }
    });
    if bad_containers.is_empty() {
        return CheckResult::allowed();
    }
    // A string set: the ports sort as text ("10", "9").
    let ports = sorted_set(forbidden_host_ports);
    CheckResult::forbidden(
        "hostPort",
        format!(
            "{} {} {} {}",
            containers_phrase(&bad_containers),
            pluralize("uses", "use", bad_containers.len()),
            pluralize("hostPort", "hostPorts", ports.len()),
            ports.join(", ")
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
        json!({"containers": [{"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 81, "hostPort": 8080}]}]}),
        Some("container \"a\" uses hostPort 8080")
    )]
    #[case::several_sorted_as_text(
        json!({
            "initContainers": [{"name": "i", "ports": [{"containerPort": 1, "hostPort": 9}]}],
            "containers": [
                {"name": "a", "ports": [{"containerPort": 2, "hostPort": 10}, {"containerPort": 3, "hostPort": 10}]},
                {"name": "b", "ports": [{"containerPort": 4, "hostPort": 0}]},
            ],
        }),
        Some("containers \"i\", \"a\" use hostPorts 10, 9")
    )]
    #[case::zero_is_unset(json!({"containers": [{"name": "a", "ports": [{"containerPort": 1, "hostPort": 0}]}]}), None)]
    fn host_ports_are_listed(#[case] spec: Value, #[case] detail: Option<&str>) {
        let result = host_ports_1_0(&json!({}), &spec);
        assert_eq!(result.allowed, detail.is_none());
        if let Some(detail) = detail {
            assert_eq!(result.forbidden_reason, "hostPort");
            assert_eq!(result.forbidden_detail, detail);
        }
    }
}
