//! `capabilities_baseline` (baseline, 1.0+): containers may add only capabilities of the
//! runtime's default set (`check_capabilities_baseline.go`). The restricted
//! `capabilities_restricted` check replaces it from 1.22.

use serde_json::Value;

use crate::admission::pod_security::helpers::{
    container_name, containers_phrase, join_quote, sorted_set, visit_containers,
};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// The check.
pub(crate) const CHECK: Check = Check {
    id: "capabilities_baseline",
    level: Level::Baseline,
    versions: &[VersionedCheck {
        minimum_version: 0,
        check_pod: capabilities_baseline_1_0,
        override_check_ids: &[],
    }],
};

/// The capabilities a container may add (`capabilities_allowed_1_0`).
pub(super) const CAPABILITIES_ALLOWED_1_0: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

fn capabilities_baseline_1_0(_metadata: &Value, spec: &Value) -> CheckResult {
    let mut bad_containers = Vec::new();
    let mut non_default = Vec::new();
    visit_containers(spec, |container| {
        let added = &container["securityContext"]["capabilities"]["add"];
        let mut valid = true;
        for capability in added.as_array().into_iter().flatten() {
            let capability = capability.as_str().unwrap_or_default();
            if !CAPABILITIES_ALLOWED_1_0.contains(&capability) {
                valid = false;
                non_default.push(capability.to_string());
            }
        }
        if !valid {
            bad_containers.push(container_name(container));
        }
    });
    if bad_containers.is_empty() {
        return CheckResult::allowed();
    }
    CheckResult::forbidden(
        "non-default capabilities",
        format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&bad_containers),
            join_quote(&sorted_set(non_default))
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn adding(name: &str, caps: &[&str]) -> Value {
        json!({"name": name, "securityContext": {"capabilities": {"add": caps}}})
    }

    #[rstest]
    #[case::one(
        json!({"containers": [adding("a", &["FOO", "CHOWN"])]}),
        Some("container \"a\" must not include \"FOO\" in securityContext.capabilities.add")
    )]
    #[case::several_sorted_once(
        json!({"containers": [adding("a", &["FOO", "BAR"]), adding("b", &["FOO", "KILL"]), adding("c", &["CHOWN"])]}),
        Some("containers \"a\", \"b\" must not include \"BAR\", \"FOO\" in securityContext.capabilities.add")
    )]
    #[case::defaults_only(json!({"containers": [adding("a", CAPABILITIES_ALLOWED_1_0)]}), None)]
    #[case::no_capabilities(json!({"containers": [{"name": "a", "securityContext": {}}]}), None)]
    fn added_capabilities_outside_the_default_set_are_listed(
        #[case] spec: Value,
        #[case] detail: Option<&str>,
    ) {
        let result = capabilities_baseline_1_0(&json!({}), &spec);
        assert_eq!(result.allowed, detail.is_none());
        if let Some(detail) = detail {
            assert_eq!(result.forbidden_reason, "non-default capabilities");
            assert_eq!(result.forbidden_detail, detail);
        }
    }
}
