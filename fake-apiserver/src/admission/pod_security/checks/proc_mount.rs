//! `procMount` (baseline, 1.0+) and `procMount_restricted` (restricted, 1.35+): no container may
//! set `securityContext.procMount` to anything but `Default` (an unset one is fine), keeping
//! the default `/proc` masks. From 1.35 the baseline check lets a pod in a user namespace
//! (`hostUsers: false`) set any value; the restricted check keeps the unconditional rule and
//! replaces the baseline one (`check_procMount_baseline.go`, `check_procMount_restricted.go`).

use serde_json::Value;

use crate::admission::pod_security::helpers::{
    container_name, containers_phrase, join_quote, relax_policy_for_user_namespace_pod, sorted_set,
    visit_containers,
};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// Forbids a `procMount` other than `Default`; from 1.35 only for pods outside a user namespace
/// (`CheckProcMountBaseline`).
pub(crate) const CHECK_BASELINE: Check = Check {
    id: "procMount",
    level: Level::Baseline,
    versions: &[
        VersionedCheck {
            minimum_version: 0,
            check_pod: proc_mount_1_0,
            override_check_ids: &[],
        },
        VersionedCheck {
            minimum_version: 35,
            check_pod: proc_mount_1_35_baseline,
            override_check_ids: &[],
        },
    ],
};

/// From 1.35, where the baseline check relaxes for user-namespace pods, keeps forbidding a
/// `procMount` other than `Default` for every pod, in place of the baseline check
/// (`CheckProcMountRestricted`).
pub(crate) const CHECK_RESTRICTED: Check = Check {
    id: "procMount_restricted",
    level: Level::Restricted,
    versions: &[VersionedCheck {
        minimum_version: 35,
        check_pod: proc_mount_1_0,
        override_check_ids: &["procMount"],
    }],
};

/// The `procMount` that keeps the default masks (`corev1.DefaultProcMount`).
const DEFAULT_PROC_MOUNT: &str = "Default";

/// Every container setting a `procMount` other than `Default`, whatever `hostUsers` says.
fn proc_mount_1_0(_metadata: &Value, spec: &Value) -> CheckResult {
    let mut bad_containers = Vec::new();
    let mut forbidden_types = Vec::new();
    visit_containers(spec, |container| {
        // An absent or null security context or procMount is allowed. (A non-string value
        // cannot come from the typed API; it is skipped too.)
        match container["securityContext"]["procMount"].as_str() {
            Some(proc_mount) if proc_mount != DEFAULT_PROC_MOUNT => {
                bad_containers.push(container_name(container));
                forbidden_types.push(proc_mount.to_string());
            }
            _ => {}
        }
    });
    if bad_containers.is_empty() {
        return CheckResult::allowed();
    }
    // The containers in the pod's order, the values as a sorted set.
    CheckResult::forbidden(
        "procMount",
        format!(
            "{} must not set securityContext.procMount to {}",
            containers_phrase(&bad_containers),
            join_quote(&sorted_set(forbidden_types)),
        ),
    )
}

/// `proc_mount_1_0`, unless the pod runs in a user namespace.
fn proc_mount_1_35_baseline(metadata: &Value, spec: &Value) -> CheckResult {
    if relax_policy_for_user_namespace_pod(spec) {
        return CheckResult::allowed();
    }
    proc_mount_1_0(metadata, spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::pod_security::registry::CheckPodFn;
    use rstest::rstest;
    use serde_json::json;

    /// The containers of upstream's unit tests: unset, empty, `Default`, `Unmasked`, `other`.
    fn containers() -> Value {
        json!([
            {"name": "a"},
            {"name": "b", "securityContext": {}},
            {"name": "c", "securityContext": {"procMount": "Default"}},
            {"name": "d", "securityContext": {"procMount": "Unmasked"}},
            {"name": "e", "securityContext": {"procMount": "other"}},
        ])
    }

    const D_AND_E: &str =
        r#"containers "d", "e" must not set securityContext.procMount to "Unmasked", "other""#;

    fn expect(detail: Option<&str>) -> CheckResult {
        match detail {
            Some(detail) => CheckResult::forbidden("procMount", detail),
            None => CheckResult::allowed(),
        }
    }

    #[rstest]
    // TestProcMountBaseline (1.35)
    #[case::baseline_1_35_proc_mount(proc_mount_1_35_baseline, json!({"containers": containers(), "hostUsers": true}), Some(D_AND_E))]
    #[case::baseline_1_35_proc_mount_with_userns(proc_mount_1_35_baseline, json!({"containers": containers(), "hostUsers": false}), None)]
    #[case::baseline_1_35_host_users_unset(proc_mount_1_35_baseline, json!({"containers": containers()}), Some(D_AND_E))]
    // TestProcMountRestricted (procMount_1_0, whatever hostUsers says)
    #[case::restricted_proc_mount_host_users_true(proc_mount_1_0, json!({"containers": containers(), "hostUsers": true}), Some(D_AND_E))]
    #[case::restricted_proc_mount_host_users_false(proc_mount_1_0, json!({"containers": containers(), "hostUsers": false}), Some(D_AND_E))]
    // fixtures: Default on both containers passes everywhere
    #[case::fixture_1_0_default(proc_mount_1_0, json!({
        "hostUsers": false,
        "initContainers": [{"name": "initc", "securityContext": {"procMount": "Default"}}],
        "containers": [{"name": "c", "securityContext": {"procMount": "Default"}}],
    }), None)]
    #[case::fixture_1_35_baseline_default(proc_mount_1_35_baseline, json!({
        "hostUsers": false,
        "initContainers": [{"name": "initc", "securityContext": {"procMount": "Default"}}],
        "containers": [{"name": "c", "securityContext": {"procMount": "Default"}}],
    }), None)]
    // fixtures: Unmasked with a user namespace fails 1.0 and restricted, passes 1.35 baseline
    #[case::fixture_1_0_unmasked_container_userns(proc_mount_1_0, json!({
        "hostUsers": false,
        "initContainers": [{"name": "initc", "securityContext": {}}],
        "containers": [{"name": "c", "securityContext": {"procMount": "Unmasked"}}],
    }), Some(r#"container "c" must not set securityContext.procMount to "Unmasked""#))]
    #[case::fixture_1_0_unmasked_init_container_userns(proc_mount_1_0, json!({
        "hostUsers": false,
        "initContainers": [{"name": "initc", "securityContext": {"procMount": "Unmasked"}}],
        "containers": [{"name": "c", "securityContext": {}}],
    }), Some(r#"container "initc" must not set securityContext.procMount to "Unmasked""#))]
    #[case::fixture_1_35_baseline_unmasked_both_userns(proc_mount_1_35_baseline, json!({
        "hostUsers": false,
        "initContainers": [{"name": "initc", "securityContext": {"procMount": "Unmasked"}}],
        "containers": [{"name": "c", "securityContext": {"procMount": "Unmasked"}}],
    }), None)]
    #[case::fixture_1_35_baseline_unmasked_host_users(proc_mount_1_35_baseline, json!({
        "hostUsers": true,
        "initContainers": [{"name": "initc", "securityContext": {"procMount": "Unmasked"}}],
        "containers": [{"name": "c", "securityContext": {}}],
    }), Some(r#"container "initc" must not set securityContext.procMount to "Unmasked""#))]
    // containers keep the pod's order (init first, repeats kept); values are a sorted set
    #[case::containers_in_order_values_sorted(proc_mount_1_0, json!({
        "initContainers": [{"name": "z", "securityContext": {"procMount": "Unmasked"}}],
        "containers": [
            {"name": "a", "securityContext": {"procMount": "Unmasked"}},
            {"name": "z", "securityContext": {"procMount": "Bogus"}},
        ],
        "ephemeralContainers": [{"name": "e", "securityContext": {"procMount": "Unmasked"}}],
    }), Some(r#"containers "z", "a", "z", "e" must not set securityContext.procMount to "Bogus", "Unmasked""#))]
    #[case::empty_string_is_not_default(proc_mount_1_0, json!({
        "containers": [{"name": "a", "securityContext": {"procMount": ""}}],
    }), Some(r#"container "a" must not set securityContext.procMount to """#))]
    #[case::null_and_malformed(proc_mount_1_0, json!({
        "containers": [
            {"name": "a", "securityContext": null},
            {"name": "b", "securityContext": {"procMount": null}},
            {"name": "c", "securityContext": {"procMount": 3}},
            {"name": "d", "securityContext": "x"},
            7,
        ],
    }), None)]
    fn non_default_proc_mounts_are_named(
        #[case] check: CheckPodFn,
        #[case] spec: Value,
        #[case] detail: Option<&str>,
    ) {
        assert_eq!(check(&json!({}), &spec), expect(detail));
    }

    /// Which implementation each check runs at a version, and what the restricted one
    /// overrides.
    #[rstest]
    #[case::v1_0(0, Some(0), None)]
    #[case::v1_34(34, Some(0), None)]
    #[case::v1_35(35, Some(35), Some(35))]
    #[case::v1_36(36, Some(35), Some(35))]
    fn the_versions_in_force(
        #[case] minor: u32,
        #[case] baseline: Option<u32>,
        #[case] restricted: Option<u32>,
    ) {
        let in_force = |check: &Check| {
            check
                .versions
                .iter()
                .rev()
                .find(|v| v.minimum_version <= minor)
                .map(|v| v.minimum_version)
        };
        assert_eq!(in_force(&CHECK_BASELINE), baseline);
        assert_eq!(in_force(&CHECK_RESTRICTED), restricted);
        assert_eq!(
            (CHECK_BASELINE.id, CHECK_BASELINE.level),
            ("procMount", Level::Baseline)
        );
        assert_eq!(
            (CHECK_RESTRICTED.id, CHECK_RESTRICTED.level),
            ("procMount_restricted", Level::Restricted)
        );
        assert_eq!(
            CHECK_RESTRICTED.versions[0].override_check_ids,
            ["procMount"]
        );
    }
}
