//! `sysctls` (baseline, 1.0+): the pod may only set the "safe" sysctls in
//! `spec.securityContext.sysctls[*].name` — those namespaced to the pod and isolated from other
//! pods on the node. The safe set grew in 1.27, 1.29, 1.32 and 1.37 (`check_sysctls.go`).

use serde_json::Value;

use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// Forbids any pod-level sysctl outside the safe set of the policy version
/// (`CheckSysctls`).
pub(crate) const CHECK: Check = Check {
    id: "sysctls",
    level: Level::Baseline,
    versions: &[
        VersionedCheck {
            minimum_version: 0,
            check_pod: sysctls_v1_dot_0,
            override_check_ids: &[],
        },
        VersionedCheck {
            minimum_version: 27,
            check_pod: sysctls_v1_dot_27,
            override_check_ids: &[],
        },
        VersionedCheck {
            minimum_version: 29,
            check_pod: sysctls_v1_dot_29,
            override_check_ids: &[],
        },
        VersionedCheck {
            minimum_version: 32,
            check_pod: sysctls_v1_dot_32,
            override_check_ids: &[],
        },
        // Unreachable while the server's `MAX_VERSION` is below 37; kept so that raising it
        // brings this version's safe set in with no further change.
        VersionedCheck {
            minimum_version: 37,
            check_pod: sysctls_v1_dot_37,
            override_check_ids: &[],
        },
    ],
};

/// Every safe sysctl with the minor version (`v1.<minor>`) whose policy first allowed it
/// (upstream's `sysctlsAllowedV1Dot<minor>` sets, each the previous one plus these).
const SAFE_SYSCTLS: &[(u32, &str)] = &[
    (0, "kernel.shm_rmid_forced"),
    (0, "net.ipv4.ip_local_port_range"),
    (0, "net.ipv4.tcp_syncookies"),
    (0, "net.ipv4.ping_group_range"),
    (0, "net.ipv4.ip_unprivileged_port_start"),
    (27, "net.ipv4.ip_local_reserved_ports"),
    (29, "net.ipv4.tcp_keepalive_time"),
    (29, "net.ipv4.tcp_fin_timeout"),
    (29, "net.ipv4.tcp_keepalive_intvl"),
    (29, "net.ipv4.tcp_keepalive_probes"),
    (32, "net.ipv4.tcp_rmem"),
    (32, "net.ipv4.tcp_wmem"),
    (37, "net.ipv4.tcp_slow_start_after_idle"),
    (37, "net.ipv4.tcp_notsent_lowat"),
];

fn sysctls_v1_dot_0(_metadata: &Value, spec: &Value) -> CheckResult {
    sysctls(spec, 0)
}

fn sysctls_v1_dot_27(_metadata: &Value, spec: &Value) -> CheckResult {
    sysctls(spec, 27)
}

fn sysctls_v1_dot_29(_metadata: &Value, spec: &Value) -> CheckResult {
    sysctls(spec, 29)
}

fn sysctls_v1_dot_32(_metadata: &Value, spec: &Value) -> CheckResult {
    sysctls(spec, 32)
}

fn sysctls_v1_dot_37(_metadata: &Value, spec: &Value) -> CheckResult {
    sysctls(spec, 37)
}

/// Whether the policy of `v1.<minor>` counts `name` as safe.
fn is_safe_at(name: &str, minor: u32) -> bool {
    SAFE_SYSCTLS
        .iter()
        .any(|&(since, safe)| since <= minor && safe == name)
}

/// The shared body: every sysctl not safe at `v1.<minor>`, in the pod's order, repeats kept
/// and unquoted. A nameless entry counts as the name `""`, which is never safe.
fn sysctls(spec: &Value, minor: u32) -> CheckResult {
    let forbidden: Vec<&str> = spec["securityContext"]["sysctls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|sysctl| sysctl["name"].as_str().unwrap_or_default())
        .filter(|name| !is_safe_at(name, minor))
        .collect();
    if forbidden.is_empty() {
        return CheckResult::allowed();
    }
    CheckResult::forbidden("forbidden sysctls", forbidden.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::pod_security::registry::CheckPodFn;
    use rstest::rstest;
    use serde_json::json;

    fn with_sysctls(names: &[&str]) -> Value {
        let sysctls: Vec<Value> = names
            .iter()
            .map(|name| json!({"name": name, "value": "1"}))
            .collect();
        json!({"securityContext": {"sysctls": sysctls}, "containers": [{"name": "c"}]})
    }

    const V1_0_SAFE: &[&str] = &[
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
    ];

    #[rstest]
    // TestSysctls (1.0)
    #[case::v1_0_forbidden_sysctls(sysctls_v1_dot_0, &["a", "b"], Some("a, b"))]
    #[case::v1_0_not_yet_ip_local_reserved_ports(sysctls_v1_dot_0, &["net.ipv4.ip_local_reserved_ports"], Some("net.ipv4.ip_local_reserved_ports"))]
    #[case::v1_0_not_yet_tcp_keepalive_time(sysctls_v1_dot_0, &["net.ipv4.tcp_keepalive_time"], Some("net.ipv4.tcp_keepalive_time"))]
    #[case::v1_0_not_yet_tcp_fin_timeout(sysctls_v1_dot_0, &["net.ipv4.tcp_fin_timeout"], Some("net.ipv4.tcp_fin_timeout"))]
    #[case::v1_0_not_yet_tcp_keepalive_intvl(sysctls_v1_dot_0, &["net.ipv4.tcp_keepalive_intvl"], Some("net.ipv4.tcp_keepalive_intvl"))]
    #[case::v1_0_not_yet_tcp_keepalive_probes(sysctls_v1_dot_0, &["net.ipv4.tcp_keepalive_probes"], Some("net.ipv4.tcp_keepalive_probes"))]
    #[case::v1_0_not_yet_tcp_rmem(sysctls_v1_dot_0, &["net.ipv4.tcp_rmem"], Some("net.ipv4.tcp_rmem"))]
    #[case::v1_0_not_yet_tcp_wmem(sysctls_v1_dot_0, &["net.ipv4.tcp_wmem"], Some("net.ipv4.tcp_wmem"))]
    // fixtures (1.0): the original safe set passes, anything else fails
    #[case::v1_0_fixture_safe_set(sysctls_v1_dot_0, V1_0_SAFE, None)]
    #[case::v1_0_fixture_other(sysctls_v1_dot_0, &["othersysctl"], Some("othersysctl"))]
    // order kept, repeats kept, safe ones skipped
    #[case::v1_0_encounter_order(sysctls_v1_dot_0, &["z", "kernel.shm_rmid_forced", "a", "z"], Some("z, a, z"))]
    // TestSysctls_1_27
    #[case::v1_27_forbidden_sysctls(sysctls_v1_dot_27, &["a", "b"], Some("a, b"))]
    #[case::v1_27_ip_local_reserved_ports(sysctls_v1_dot_27, &["net.ipv4.ip_local_reserved_ports"], None)]
    #[case::v1_27_not_yet_tcp_keepalive_time(sysctls_v1_dot_27, &["net.ipv4.tcp_keepalive_time"], Some("net.ipv4.tcp_keepalive_time"))]
    // TestSysctls_1_29
    #[case::v1_29_forbidden_sysctls(sysctls_v1_dot_29, &["a", "b"], Some("a, b"))]
    #[case::v1_29_tcp_keepalive_time(sysctls_v1_dot_29, &["net.ipv4.tcp_keepalive_time"], None)]
    #[case::v1_29_tcp_fin_timeout(sysctls_v1_dot_29, &["net.ipv4.tcp_fin_timeout"], None)]
    #[case::v1_29_tcp_keepalive_intvl(sysctls_v1_dot_29, &["net.ipv4.tcp_keepalive_intvl"], None)]
    #[case::v1_29_tcp_keepalive_probes(sysctls_v1_dot_29, &["net.ipv4.tcp_keepalive_probes"], None)]
    #[case::v1_29_fixture_safe_set(sysctls_v1_dot_29, &[
        "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes",
    ], None)]
    #[case::v1_29_not_yet_tcp_rmem(sysctls_v1_dot_29, &["net.ipv4.tcp_rmem"], Some("net.ipv4.tcp_rmem"))]
    // TestSysctls_1_32
    #[case::v1_32_forbidden_sysctls(sysctls_v1_dot_32, &["a", "b"], Some("a, b"))]
    #[case::v1_32_tcp_rmem(sysctls_v1_dot_32, &["net.ipv4.tcp_rmem"], None)]
    #[case::v1_32_tcp_wmem(sysctls_v1_dot_32, &["net.ipv4.tcp_wmem"], None)]
    #[case::v1_32_not_yet_tcp_slow_start_after_idle(sysctls_v1_dot_32, &["net.ipv4.tcp_slow_start_after_idle"], Some("net.ipv4.tcp_slow_start_after_idle"))]
    #[case::v1_32_not_yet_tcp_notsent_lowat(sysctls_v1_dot_32, &["net.ipv4.tcp_notsent_lowat"], Some("net.ipv4.tcp_notsent_lowat"))]
    // TestSysctls_1_37
    #[case::v1_37_forbidden_sysctls(sysctls_v1_dot_37, &["a", "b"], Some("a, b"))]
    #[case::v1_37_tcp_slow_start_after_idle(sysctls_v1_dot_37, &["net.ipv4.tcp_slow_start_after_idle"], None)]
    #[case::v1_37_tcp_notsent_lowat(sysctls_v1_dot_37, &["net.ipv4.tcp_notsent_lowat"], None)]
    #[case::v1_37_keeps_older_ones(sysctls_v1_dot_37, V1_0_SAFE, None)]
    fn sysctls_outside_the_safe_set_are_listed(
        #[case] check: CheckPodFn,
        #[case] names: &[&str],
        #[case] detail: Option<&str>,
    ) {
        let expected = match detail {
            Some(detail) => CheckResult::forbidden("forbidden sysctls", detail),
            None => CheckResult::allowed(),
        };
        assert_eq!(check(&json!({}), &with_sysctls(names)), expected);
    }

    #[rstest]
    #[case::no_security_context(json!({"containers": [{"name": "c"}]}), None)]
    #[case::null_security_context(json!({"securityContext": null}), None)]
    #[case::no_sysctls(json!({"securityContext": {}}), None)]
    #[case::null_sysctls(json!({"securityContext": {"sysctls": null}}), None)]
    #[case::nameless_entry(json!({"securityContext": {"sysctls": [{"value": "1"}]}}), Some(""))]
    #[case::malformed_entries(json!({"securityContext": {"sysctls": [7, {"name": 3}, {"name": "x"}]}}), Some(", , x"))]
    #[case::malformed_sysctls(json!({"securityContext": {"sysctls": "kernel.shm_rmid_forced"}}), None)]
    fn odd_shapes_do_not_panic(#[case] spec: Value, #[case] detail: Option<&str>) {
        let expected = match detail {
            Some(detail) => CheckResult::forbidden("forbidden sysctls", detail),
            None => CheckResult::allowed(),
        };
        assert_eq!(sysctls_v1_dot_32(&json!({}), &spec), expected);
    }

    #[rstest]
    #[case::v1_0(0, 0)]
    #[case::v1_26(26, 0)]
    #[case::v1_27(27, 27)]
    #[case::v1_28(28, 27)]
    #[case::v1_29(29, 29)]
    #[case::v1_32(32, 32)]
    #[case::v1_36(36, 32)]
    #[case::v1_37(37, 37)]
    fn the_version_in_force(#[case] minor: u32, #[case] since: u32) {
        let in_force = CHECK
            .versions
            .iter()
            .rev()
            .find(|v| v.minimum_version <= minor)
            .map(|v| v.minimum_version);
        assert_eq!(in_force, Some(since));
        assert_eq!(CHECK.id, "sysctls");
        assert_eq!(CHECK.level, Level::Baseline);
        assert!(CHECK
            .versions
            .iter()
            .all(|v| v.override_check_ids.is_empty()));
    }
}
