//! `capabilities_restricted` (restricted, 1.22+): every container must drop `ALL` capabilities
//! (`securityContext.capabilities.drop` includes `"ALL"`) and may add back only
//! `NET_BIND_SERVICE`. From 1.25 a pod whose `spec.os.name` is `windows` is exempt. It
//! replaces the baseline `capabilities_baseline` check (`check_capabilities_restricted.go`).

use serde_json::Value;

use crate::admission::pod_security::helpers::{
    container_name, containers_phrase, join_quote, sorted_set, visit_containers,
};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// Requires dropping `ALL` and adding nothing but `NET_BIND_SERVICE`, in place of
/// `capabilities_baseline`; from 1.25 Windows pods are exempt (`CheckCapabilitiesRestricted`).
pub(crate) const CHECK: Check = Check {
    id: "capabilities_restricted",
    level: Level::Restricted,
    versions: &[
        VersionedCheck {
            minimum_version: 22,
            check_pod: capabilities_restricted_1_22,
            override_check_ids: &["capabilities_baseline"],
        },
        VersionedCheck {
            minimum_version: 25,
            check_pod: capabilities_restricted_1_25,
            override_check_ids: &["capabilities_baseline"],
        },
    ],
};

/// The capability a container must drop (`capabilityAll`).
const CAPABILITY_ALL: &str = "ALL";

/// The one capability a container may add (`capabilityNetBindService`).
const CAPABILITY_NET_BIND_SERVICE: &str = "NET_BIND_SERVICE";

/// The capability names of a `drop` or `add` list; an entry that is not a string (which the
/// typed API cannot hold) counts as `""`.
fn capability_names(list: &Value) -> impl Iterator<Item = &str> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|c| c.as_str().unwrap_or_default())
}

fn capabilities_restricted_1_22(_metadata: &Value, spec: &Value) -> CheckResult {
    let mut containers_missing_drop_all = Vec::new();
    let mut containers_adding_forbidden = Vec::new();
    let mut forbidden_capabilities = Vec::new();

    visit_containers(spec, |container| {
        let capabilities = &container["securityContext"]["capabilities"];
        // No security context or no capabilities: nothing is dropped, and nothing added.
        if capabilities.is_null() {
            containers_missing_drop_all.push(container_name(container));
            return;
        }
        if !capability_names(&capabilities["drop"]).any(|c| c == CAPABILITY_ALL) {
            containers_missing_drop_all.push(container_name(container));
        }
        let mut added_forbidden = false;
        for added in capability_names(&capabilities["add"]) {
            if added != CAPABILITY_NET_BIND_SERVICE {
                added_forbidden = true;
                forbidden_capabilities.push(added.to_string());
            }
        }
        if added_forbidden {
            containers_adding_forbidden.push(container_name(container));
        }
    });

    // The containers in the pod's order, the capabilities as a sorted set.
    let mut forbidden_details = Vec::new();
    if !containers_missing_drop_all.is_empty() {
        forbidden_details.push(format!(
            r#"{} must set securityContext.capabilities.drop=["ALL"]"#,
            containers_phrase(&containers_missing_drop_all),
        ));
    }
    if !containers_adding_forbidden.is_empty() {
        forbidden_details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&containers_adding_forbidden),
            join_quote(&sorted_set(forbidden_capabilities)),
        ));
    }
    if forbidden_details.is_empty() {
        return CheckResult::allowed();
    }
    CheckResult::forbidden("unrestricted capabilities", forbidden_details.join("; "))
}

/// `capabilities_restricted_1_22`, except for Windows pods: the API refuses capabilities on
/// them, so one that sets none is admitted.
fn capabilities_restricted_1_25(metadata: &Value, spec: &Value) -> CheckResult {
    if spec["os"]["name"].as_str() == Some("windows") {
        return CheckResult::allowed();
    }
    capabilities_restricted_1_22(metadata, spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::pod_security::registry::CheckPodFn;
    use rstest::rstest;
    use serde_json::json;

    fn expect(detail: Option<&str>) -> CheckResult {
        match detail {
            Some(detail) => CheckResult::forbidden("unrestricted capabilities", detail),
            None => CheckResult::allowed(),
        }
    }

    /// Upstream's "multiple containers" pod.
    fn multiple_containers() -> Value {
        json!({"containers": [
            {"name": "a", "securityContext": {"capabilities": {"add": ["FOO", "BAR"]}}},
            {"name": "b", "securityContext": {"capabilities": {"add": ["BAR", "BAZ"]}}},
            {"name": "c", "securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE", "CHOWN"], "drop": ["ALL", "FOO"]}}},
        ]})
    }

    const MULTIPLE_CONTAINERS: &str = concat!(
        r#"containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; "#,
        r#"containers "a", "b", "c" must not include "BAR", "BAZ", "CHOWN", "FOO" in securityContext.capabilities.add"#,
    );

    /// The minimal restricted pod of the fixtures, whose capabilities a case then sets.
    fn fixture(init_capabilities: Value, capabilities: Value) -> Value {
        json!({
            "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "initContainers": [{"name": "initc", "securityContext": {"allowPrivilegeEscalation": false, "capabilities": init_capabilities}}],
            "containers": [{"name": "c", "securityContext": {"allowPrivilegeEscalation": false, "capabilities": capabilities}}],
        })
    }

    /// Every capability but `ALL`, one by one (with a repeat), as a fixture drops them.
    fn every_capability_by_name() -> Value {
        json!([
            "SYS_TIME",
            "SYS_MODULE",
            "SYS_RAWIO",
            "SYS_PACCT",
            "SYS_ADMIN",
            "SYS_NICE",
            "SYS_RESOURCE",
            "SYS_TIME",
            "SYS_TTY_CONFIG",
            "MKNOD",
            "AUDIT_WRITE",
            "AUDIT_CONTROL",
            "MAC_OVERRIDE",
            "MAC_ADMIN",
            "NET_ADMIN",
            "SYSLOG",
            "CHOWN",
            "NET_RAW",
            "DAC_OVERRIDE",
            "FOWNER",
            "DAC_READ_SEARCH",
            "FSETID",
            "KILL",
            "SETGID",
            "SETUID",
            "LINUX_IMMUTABLE",
            "NET_BIND_SERVICE",
            "NET_BROADCAST",
            "IPC_LOCK",
            "IPC_OWNER",
            "SYS_CHROOT",
            "SYS_PTRACE",
            "SYS_BOOT",
            "LEASE",
            "SETFCAP",
            "WAKE_ALARM",
            "BLOCK_SUSPEND",
        ])
    }

    /// The defaults a fixture tries to add back besides `NET_BIND_SERVICE`: the baseline
    /// check's allowed set.
    fn default_capabilities() -> Value {
        json!(super::super::capabilities_baseline::CAPABILITIES_ALLOWED_1_0)
    }

    #[rstest]
    // TestCapabilitiesRestricted_1_22 and _1_25
    #[case::v1_22_multiple_containers(
        capabilities_restricted_1_22,
        multiple_containers(),
        Some(MULTIPLE_CONTAINERS)
    )]
    #[case::v1_25_multiple_containers(
        capabilities_restricted_1_25,
        multiple_containers(),
        Some(MULTIPLE_CONTAINERS)
    )]
    #[case::v1_25_windows_pod_admit_without_checking_capabilities(capabilities_restricted_1_25, json!({
        "os": {"name": "windows"},
        "containers": [{"name": "a"}],
    }), None)]
    #[case::v1_25_linux_pod_reject_if_security_context_is_not_set(capabilities_restricted_1_25, json!({
        "os": {"name": "linux"},
        "containers": [{"name": "a"}],
    }), Some(r#"container "a" must set securityContext.capabilities.drop=["ALL"]"#))]
    // before 1.25 Windows pods are checked too
    #[case::v1_22_windows_pod_is_checked(capabilities_restricted_1_22, json!({
        "os": {"name": "windows"},
        "containers": [{"name": "a"}],
    }), Some(r#"container "a" must set securityContext.capabilities.drop=["ALL"]"#))]
    #[case::v1_25_os_names_are_case_sensitive(capabilities_restricted_1_25, json!({
        "os": {"name": "Windows"},
        "containers": [{"name": "a"}],
    }), Some(r#"container "a" must set securityContext.capabilities.drop=["ALL"]"#))]
    // fixtures (1.22)
    #[case::fixture_drop_all_add_net_bind_service(capabilities_restricted_1_22, fixture(
        json!({"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}),
        json!({"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}),
    ), None)]
    #[case::fixture_container_drops_nothing(capabilities_restricted_1_22, fixture(
        json!({"drop": ["ALL"]}),
        json!({"drop": []}),
    ), Some(r#"container "c" must set securityContext.capabilities.drop=["ALL"]"#))]
    #[case::fixture_init_container_drops_nothing(capabilities_restricted_1_22, fixture(
        json!({"drop": []}),
        json!({"drop": ["ALL"]}),
    ), Some(r#"container "initc" must set securityContext.capabilities.drop=["ALL"]"#))]
    #[case::fixture_dropping_each_capability_is_not_enough(capabilities_restricted_1_22, fixture(
        json!({"drop": every_capability_by_name()}),
        json!({"drop": every_capability_by_name()}),
    ), Some(r#"containers "initc", "c" must set securityContext.capabilities.drop=["ALL"]"#))]
    #[case::fixture_adding_back_defaults(capabilities_restricted_1_22, fixture(
        json!({"drop": ["ALL"], "add": default_capabilities()}),
        json!({"drop": ["ALL"], "add": default_capabilities()}),
    ), Some(concat!(
        r#"containers "initc", "c" must not include "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "#,
        r#""SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT" in securityContext.capabilities.add"#,
    )))]
    // containers keep the pod's order (init, regular, ephemeral; repeats kept)
    #[case::containers_in_order(capabilities_restricted_1_22, json!({
        "initContainers": [{"name": "z", "securityContext": {"capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]}}}],
        "containers": [{"name": "b", "securityContext": {}}, {"name": "z", "securityContext": {"capabilities": {"add": ["NET_RAW", "SYS_ADMIN"]}}}],
        "ephemeralContainers": [{"name": "a", "securityContext": {"capabilities": {"drop": ["ALL"], "add": ["NET_RAW"]}}}],
    }), Some(concat!(
        r#"containers "b", "z" must set securityContext.capabilities.drop=["ALL"]; "#,
        r#"containers "z", "z", "a" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add"#,
    )))]
    #[case::only_adding_forbidden(capabilities_restricted_1_22, json!({
        "containers": [{"name": "a", "securityContext": {"capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN", "SYS_ADMIN"]}}}],
    }), Some(r#"container "a" must not include "SYS_ADMIN" in securityContext.capabilities.add"#))]
    #[case::drop_all_is_case_sensitive(capabilities_restricted_1_22, json!({
        "containers": [{"name": "a", "securityContext": {"capabilities": {"drop": ["all"]}}}],
    }), Some(r#"container "a" must set securityContext.capabilities.drop=["ALL"]"#))]
    #[case::null_capabilities(capabilities_restricted_1_22, json!({
        "containers": [
            {"name": "a", "securityContext": null},
            {"name": "b", "securityContext": {"capabilities": null}},
            {"name": "c", "securityContext": {"capabilities": {"drop": null, "add": null}}},
        ],
    }), Some(r#"containers "a", "b", "c" must set securityContext.capabilities.drop=["ALL"]"#))]
    #[case::no_containers(capabilities_restricted_1_25, json!({}), None)]
    #[case::malformed(capabilities_restricted_1_25, json!({
        "os": "windows",
        "containers": [{"name": "a", "securityContext": {"capabilities": {"drop": "ALL", "add": [1, "NET_BIND_SERVICE"]}}}],
    }), Some(concat!(
        r#"container "a" must set securityContext.capabilities.drop=["ALL"]; "#,
        r#"container "a" must not include "" in securityContext.capabilities.add"#,
    )))]
    fn containers_must_drop_all_and_add_only_net_bind_service(
        #[case] check: CheckPodFn,
        #[case] spec: Value,
        #[case] detail: Option<&str>,
    ) {
        assert_eq!(check(&json!({}), &spec), expect(detail));
    }

    #[rstest]
    #[case::v1_21(21, None)]
    #[case::v1_22(22, Some(22))]
    #[case::v1_24(24, Some(22))]
    #[case::v1_25(25, Some(25))]
    #[case::v1_36(36, Some(25))]
    fn the_version_in_force(#[case] minor: u32, #[case] since: Option<u32>) {
        let in_force = CHECK
            .versions
            .iter()
            .rev()
            .find(|v| v.minimum_version <= minor);
        assert_eq!(in_force.map(|v| v.minimum_version), since);
        if let Some(v) = in_force {
            assert_eq!(v.override_check_ids, ["capabilities_baseline"]);
        }
        assert_eq!(
            (CHECK.id, CHECK.level),
            ("capabilities_restricted", Level::Restricted)
        );
    }
}
