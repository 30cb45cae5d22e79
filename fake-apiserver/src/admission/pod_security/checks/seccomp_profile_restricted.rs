//! `seccompProfile_restricted` (restricted, 1.19+, in place of `seccompProfile_baseline`): a
//! seccomp profile must be set, at pod level or on every container, and be `RuntimeDefault` or
//! `Localhost`; from 1.25 a Windows pod (`spec.os.name: windows`) is exempt
//! (`check_seccompProfile_restricted.go`).

use serde_json::Value;

use super::seccomp_profile_baseline::{self, forbidden_seccomp_type};
use crate::admission::pod_security::helpers::{
    container_name, containers_phrase, join_quote, sorted_set, visit_containers,
};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// The check: from 1.19, and from 1.25 with Windows pods exempt; both replace
/// `seccompProfile_baseline`.
pub(crate) const CHECK: Check = Check {
    id: "seccompProfile_restricted",
    level: Level::Restricted,
    versions: &[
        VersionedCheck {
            minimum_version: 19,
            check_pod: seccomp_profile_restricted_1_19,
            override_check_ids: &[seccomp_profile_baseline::ID],
        },
        VersionedCheck {
            minimum_version: 25,
            check_pod: seccomp_profile_restricted_1_25,
            override_check_ids: &[seccomp_profile_baseline::ID],
        },
    ],
};

/// `seccompProfileRestricted_1_19`: a valid profile on the pod or on each container, and no
/// invalid one anywhere.
fn seccomp_profile_restricted_1_19(_metadata: &Value, spec: &Value) -> CheckResult {
    let mut bad_setters = Vec::new();
    let mut bad_values = Vec::new();

    let pod_profile = &spec["securityContext"]["seccompProfile"];
    let pod_seccomp_set = match forbidden_seccomp_type(pod_profile) {
        Some(bad) => {
            bad_setters.push("pod".to_string());
            bad_values.push(bad);
            false
        }
        None => !pod_profile.is_null(),
    };

    // Containers that set a forbidden profile, and those that set none with no valid pod-level
    // one to fall back on.
    let mut explicitly_bad_containers = Vec::new();
    let mut implicitly_bad_containers = Vec::new();
    visit_containers(spec, |container| {
        let profile = &container["securityContext"]["seccompProfile"];
        if profile.is_null() {
            if !pod_seccomp_set {
                implicitly_bad_containers.push(container_name(container));
            }
        } else if let Some(bad) = forbidden_seccomp_type(profile) {
            explicitly_bad_containers.push(container_name(container));
            bad_values.push(bad);
        }
    });
    if !explicitly_bad_containers.is_empty() {
        bad_setters.push(containers_phrase(&explicitly_bad_containers));
    }

    // Forbidden values set take precedence over missing ones.
    if !bad_setters.is_empty() {
        return CheckResult::forbidden(
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to {}",
                bad_setters.join(" and "),
                join_quote(&sorted_set(bad_values))
            ),
        );
    }
    if !implicitly_bad_containers.is_empty() {
        return CheckResult::forbidden(
            "seccompProfile",
            format!(
                "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
                containers_phrase(&implicitly_bad_containers)
            ),
        );
    }
    CheckResult::allowed()
}

/// `seccompProfileRestricted_1_25`: as 1.19, but a Windows pod passes (API validation refuses a
/// seccomp profile on one, so it cannot set any).
fn seccomp_profile_restricted_1_25(metadata: &Value, spec: &Value) -> CheckResult {
    if spec["os"]["name"].as_str() == Some("windows") {
        return CheckResult::allowed();
    }
    seccomp_profile_restricted_1_19(metadata, spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    // Upstream's "containers seccomp invalid" containers and fixture pod are the baseline
    // check's.
    use super::seccomp_profile_baseline::tests::{containers, fixture_spec_1_19 as fixture_spec};

    fn runtime_default() -> Value {
        json!({"type": "RuntimeDefault"})
    }

    fn localhost() -> Value {
        json!({"type": "Localhost", "localhostProfile": "testing"})
    }

    fn unconfined() -> Value {
        json!({"type": "Unconfined"})
    }

    const MUST_SET_A: &str = r#"pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost""#;

    /// Cases that both versions decide alike.
    #[rstest]
    // TestSeccompProfileRestricted_1_19 and _1_25
    #[case::no_explicit_seccomp(json!({"containers": [{"name": "a"}]}), Some(MUST_SET_A))]
    #[case::pod_seccomp_invalid(
        json!({"securityContext": {"seccompProfile": unconfined()}, "containers": [{"name": "a", "securityContext": null}]}),
        Some(r#"pod must not set securityContext.seccompProfile.type to "Unconfined""#)
    )]
    #[case::containers_seccomp_invalid(
        json!({"securityContext": {"seccompProfile": runtime_default()}, "containers": containers()}),
        Some(r#"containers "c", "d" must not set securityContext.seccompProfile.type to "Unconfined""#)
    )]
    #[case::pod_nil_container_fallthrough(
        json!({"containers": [
            {"name": "a", "securityContext": null},
            {"name": "b", "securityContext": {}},
            {"name": "d", "securityContext": {"seccompProfile": runtime_default()}},
            {"name": "e", "securityContext": {"seccompProfile": runtime_default()}},
        ]}),
        Some(r#"pod or containers "a", "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost""#)
    )]
    // TestSeccompProfileRestricted_1_25
    #[case::no_explicit_seccomp_linux_pod(
        json!({"os": {"name": "linux"}, "containers": [{"name": "a"}]}),
        Some(MUST_SET_A)
    )]
    // Upstream's fixtures.
    #[case::fixture_pod_runtime_default(
        fixture_spec(runtime_default(), Value::Null, Value::Null),
        None
    )]
    #[case::fixture_pod_localhost(fixture_spec(localhost(), Value::Null, Value::Null), None)]
    #[case::fixture_containers_only(
        fixture_spec(Value::Null, runtime_default(), localhost()),
        None
    )]
    #[case::fixture_unset_everywhere(
        fixture_spec(Value::Null, Value::Null, Value::Null),
        Some(r#"pod or containers "initcontainer1", "container1" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost""#)
    )]
    #[case::fixture_unconfined_pod(
        fixture_spec(unconfined(), Value::Null, Value::Null),
        Some(r#"pod must not set securityContext.seccompProfile.type to "Unconfined""#)
    )]
    #[case::fixture_unset_init_container(
        fixture_spec(Value::Null, runtime_default(), Value::Null),
        Some(r#"pod or container "initcontainer1" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost""#)
    )]
    #[case::fixture_unset_container(
        fixture_spec(Value::Null, Value::Null, runtime_default()),
        Some(r#"pod or container "container1" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost""#)
    )]
    #[case::fixture_unconfined_init_container(
        fixture_spec(Value::Null, runtime_default(), unconfined()),
        Some(r#"container "initcontainer1" must not set securityContext.seccompProfile.type to "Unconfined""#)
    )]
    // Beyond upstream's cases.
    #[case::invalid_pod_profile_is_no_fallback_and_bad_values_win(
        json!({
            "securityContext": {"seccompProfile": {}},
            "containers": [{"name": "a"}, {"name": "b", "securityContext": {"seccompProfile": {"type": "Unconfined"}}}],
            "ephemeralContainers": [{"name": "e", "securityContext": {"seccompProfile": {"type": "Unconfined"}}}],
        }),
        Some(r#"pod and containers "b", "e" must not set securityContext.seccompProfile.type to "", "Unconfined""#)
    )]
    #[case::ephemeral_container_falls_back_on_pod(
        json!({
            "securityContext": {"seccompProfile": localhost()},
            "ephemeralContainers": [{"name": "e"}],
        }),
        None
    )]
    #[case::no_containers(json!({}), None)]
    fn both_versions(#[case] spec: Value, #[case] detail: Option<&str>) {
        let expected = match detail {
            None => CheckResult::allowed(),
            Some(detail) => CheckResult::forbidden("seccompProfile", detail),
        };
        assert_eq!(
            seccomp_profile_restricted_1_19(&json!({}), &spec),
            expected,
            "1.19"
        );
        assert_eq!(
            seccomp_profile_restricted_1_25(&json!({}), &spec),
            expected,
            "1.25"
        );
    }

    /// Windows pods: exempt from 1.25 only.
    #[rstest]
    // TestSeccompProfileRestricted_1_25
    #[case::no_explicit_seccomp_windows_pod(json!({"os": {"name": "windows"}, "containers": [{"name": "a"}]}))]
    // Beyond upstream's cases.
    #[case::windows_pod_with_unconfined(json!({
        "os": {"name": "windows"},
        "securityContext": {"seccompProfile": {"type": "Unconfined"}},
        "containers": [{"name": "a"}],
    }))]
    fn windows_pods_pass_from_1_25(#[case] spec: Value) {
        assert_eq!(
            seccomp_profile_restricted_1_25(&json!({}), &spec),
            CheckResult::allowed()
        );
        assert!(!seccomp_profile_restricted_1_19(&json!({}), &spec).allowed);
    }
}
