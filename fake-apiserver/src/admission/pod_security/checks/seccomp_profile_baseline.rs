//! `seccompProfile_baseline` (baseline, 1.0+): a seccomp profile, where one is set, must be the
//! runtime's default or a localhost one. Before 1.19 that is the alpha annotations
//! `seccomp.security.alpha.kubernetes.io/pod` and
//! `container.seccomp.security.alpha.kubernetes.io/<container>` (`runtime/default`,
//! `docker/default` or `localhost/*`); from 1.19 the `securityContext.seccompProfile.type` of the
//! pod and its containers (`RuntimeDefault` or `Localhost`) (`check_seccompProfile_baseline.go`).

use serde_json::Value;

use crate::admission::pod_security::helpers::{
    container_name, containers_phrase, join_quote, pluralize, sorted_set, visit_containers,
};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};
use crate::rules::validation::go_quote;

/// The check's ID, which `seccompProfile_restricted` overrides (`checkSeccompBaselineID`).
pub(super) const ID: &str = "seccompProfile_baseline";

/// The check: the annotations from 1.0, the `seccompProfile` fields from 1.19.
pub(crate) const CHECK: Check = Check {
    id: ID,
    level: Level::Baseline,
    versions: &[
        VersionedCheck {
            minimum_version: 0,
            check_pod: seccomp_profile_baseline_1_0,
            override_check_ids: &[],
        },
        VersionedCheck {
            minimum_version: 19,
            check_pod: seccomp_profile_baseline_1_19,
            override_check_ids: &[],
        },
    ],
};

/// The pod's alpha seccomp annotation (`annotationKeyPod`).
const ANNOTATION_KEY_POD: &str = "seccomp.security.alpha.kubernetes.io/pod";

/// The prefix of a container's alpha seccomp annotation (`annotationKeyContainerPrefix`).
const ANNOTATION_KEY_CONTAINER_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";

/// A `seccompProfile.type` the check lets through (`validSeccomp`); the restricted check
/// shares it.
pub(super) fn valid_seccomp(profile_type: &str) -> bool {
    matches!(profile_type, "Localhost" | "RuntimeDefault")
}

/// An annotation value the check lets through (`validSeccompAnnotationValue`); unlike the
/// AppArmor one, an empty value is not.
fn valid_seccomp_annotation_value(value: &str) -> bool {
    value == "runtime/default" || value == "docker/default" || value.starts_with("localhost/")
}

/// The type a `seccompProfile` that is set names, if it names a forbidden one (a missing type is
/// the empty string, itself forbidden); the restricted check shares it.
pub(super) fn forbidden_seccomp_type(profile: &Value) -> Option<String> {
    if profile.is_null() {
        return None;
    }
    let profile_type = profile["type"].as_str().unwrap_or_default();
    (!valid_seccomp(profile_type)).then(|| profile_type.to_string())
}

/// `seccompProfileBaseline_1_0`: the alpha annotations of the pod and of the containers it has.
fn seccomp_profile_baseline_1_0(metadata: &Value, spec: &Value) -> CheckResult {
    let annotations = &metadata["annotations"];
    // `key="value"` of each forbidden annotation; a value that is not a string cannot come out
    // of Go's typed decode and counts as absent.
    let forbidden_annotation = |key: &str| -> Option<String> {
        let value = annotations.get(key)?.as_str()?;
        (!valid_seccomp_annotation_value(value)).then(|| format!("{key}={}", go_quote(value)))
    };

    let mut forbidden = Vec::new();
    forbidden.extend(forbidden_annotation(ANNOTATION_KEY_POD));
    visit_containers(spec, |container| {
        let key = format!(
            "{ANNOTATION_KEY_CONTAINER_PREFIX}{}",
            container_name(container)
        );
        forbidden.extend(forbidden_annotation(&key));
    });
    let forbidden = sorted_set(forbidden);

    if forbidden.is_empty() {
        return CheckResult::allowed();
    }
    CheckResult::forbidden(
        "seccompProfile",
        format!(
            "forbidden {} {}",
            pluralize("annotation", "annotations", forbidden.len()),
            forbidden.join(", ")
        ),
    )
}

/// `seccompProfileBaseline_1_19`: the `seccompProfile` the pod and its containers set.
fn seccomp_profile_baseline_1_19(_metadata: &Value, spec: &Value) -> CheckResult {
    let mut bad_setters = Vec::new();
    let mut bad_values = Vec::new();

    if let Some(bad) = forbidden_seccomp_type(&spec["securityContext"]["seccompProfile"]) {
        bad_setters.push("pod".to_string());
        bad_values.push(bad);
    }

    let mut explicitly_bad_containers = Vec::new();
    visit_containers(spec, |container| {
        if let Some(bad) = forbidden_seccomp_type(&container["securityContext"]["seccompProfile"]) {
            explicitly_bad_containers.push(container_name(container));
            bad_values.push(bad);
        }
    });
    if !explicitly_bad_containers.is_empty() {
        bad_setters.push(containers_phrase(&explicitly_bad_containers));
    }

    if bad_setters.is_empty() {
        return CheckResult::allowed();
    }
    CheckResult::forbidden(
        "seccompProfile",
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            bad_setters.join(" and "),
            join_quote(&sorted_set(bad_values))
        ),
    )
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    /// A pod spec with the minimal containers of upstream's fixtures.
    fn fixture_spec() -> Value {
        json!({
            "initContainers": [{"name": "initcontainer1"}],
            "containers": [{"name": "container1"}],
        })
    }

    /// The containers of upstream's 1.19 test cases: none, an empty security context, two
    /// `Unconfined`, two `RuntimeDefault`.
    pub(in crate::admission::pod_security::checks) fn containers() -> Value {
        json!([
            {"name": "a", "securityContext": null},
            {"name": "b", "securityContext": {}},
            {"name": "c", "securityContext": {"seccompProfile": {"type": "Unconfined"}}},
            {"name": "d", "securityContext": {"seccompProfile": {"type": "Unconfined"}}},
            {"name": "e", "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}},
            {"name": "f", "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}},
        ])
    }

    /// Upstream's fixtures' pod at 1.19: every security context set, the given profiles.
    pub(in crate::admission::pod_security::checks) fn fixture_spec_1_19(
        pod: Value,
        container: Value,
        init_container: Value,
    ) -> Value {
        json!({
            "securityContext": {"seccompProfile": pod},
            "initContainers": [{"name": "initcontainer1", "securityContext": {"seccompProfile": init_container}}],
            "containers": [{"name": "container1", "securityContext": {"seccompProfile": container}}],
        })
    }

    #[rstest]
    // TestSeccompProfileBaseline_1_0
    #[case::pod_seccomp_invalid(
        json!({"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}}),
        json!({}),
        Some(r#"forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined""#)
    )]
    #[case::containers_seccomp_invalid(
        json!({"annotations": {
            "container.seccomp.security.alpha.kubernetes.io/a": "unconfined",
            "container.seccomp.security.alpha.kubernetes.io/b": "unknown",
        }}),
        json!({"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}),
        Some(r#"forbidden annotations container.seccomp.security.alpha.kubernetes.io/a="unconfined", container.seccomp.security.alpha.kubernetes.io/b="unknown""#)
    )]
    #[case::pod_and_containers_seccomp_invalid(
        json!({"annotations": {
            "seccomp.security.alpha.kubernetes.io/pod": "unconfined",
            "container.seccomp.security.alpha.kubernetes.io/a": "unconfined",
            "container.seccomp.security.alpha.kubernetes.io/b": "unknown",
        }}),
        json!({"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}),
        Some(r#"forbidden annotations container.seccomp.security.alpha.kubernetes.io/a="unconfined", container.seccomp.security.alpha.kubernetes.io/b="unknown", seccomp.security.alpha.kubernetes.io/pod="unconfined""#)
    )]
    // Upstream's fixtures.
    #[case::fixture_runtime_default_pod_localhost_container(
        json!({"annotations": {
            "seccomp.security.alpha.kubernetes.io/pod": "runtime/default",
            "container.seccomp.security.alpha.kubernetes.io/container1": "localhost/testing",
        }}),
        fixture_spec(),
        None
    )]
    #[case::fixture_unconfined_pod(
        json!({"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}}),
        fixture_spec(),
        Some(r#"forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined""#)
    )]
    #[case::fixture_unconfined_container(
        json!({"annotations": {"container.seccomp.security.alpha.kubernetes.io/container1": "unconfined"}}),
        fixture_spec(),
        Some(r#"forbidden annotation container.seccomp.security.alpha.kubernetes.io/container1="unconfined""#)
    )]
    #[case::fixture_unconfined_init_container(
        json!({"annotations": {"container.seccomp.security.alpha.kubernetes.io/initcontainer1": "unconfined"}}),
        fixture_spec(),
        Some(r#"forbidden annotation container.seccomp.security.alpha.kubernetes.io/initcontainer1="unconfined""#)
    )]
    // Beyond upstream's cases.
    #[case::docker_default_and_no_annotations(
        json!({"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "docker/default"}}),
        fixture_spec(),
        None
    )]
    #[case::annotation_of_no_container_is_ignored(
        json!({"annotations": {"container.seccomp.security.alpha.kubernetes.io/other": "unconfined"}}),
        fixture_spec(),
        None
    )]
    #[case::empty_value_and_same_named_containers_counted_once(
        json!({"annotations": {
            "seccomp.security.alpha.kubernetes.io/pod": "",
            "container.seccomp.security.alpha.kubernetes.io/x": "say \"hi\"",
        }}),
        json!({"containers": [{"name": "x"}], "ephemeralContainers": [{"name": "x"}]}),
        Some(r#"forbidden annotations container.seccomp.security.alpha.kubernetes.io/x="say \"hi\"", seccomp.security.alpha.kubernetes.io/pod="""#)
    )]
    #[case::malformed_input(
        json!({"annotations": {"seccomp.security.alpha.kubernetes.io/pod": 1}}),
        json!({"containers": [{"name": 7}]}),
        None
    )]
    fn seccomp_profile_baseline_1_0_cases(
        #[case] metadata: Value,
        #[case] spec: Value,
        #[case] detail: Option<&str>,
    ) {
        let result = seccomp_profile_baseline_1_0(&metadata, &spec);
        match detail {
            None => assert_eq!(result, CheckResult::allowed()),
            Some(detail) => assert_eq!(result, CheckResult::forbidden("seccompProfile", detail)),
        }
    }

    #[rstest]
    // TestSeccompProfileBaseline_1_19
    #[case::pod_seccomp_invalid(
        json!({"securityContext": {"seccompProfile": {"type": "Unconfined"}}, "containers": [{"name": "a", "securityContext": null}]}),
        Some(r#"pod must not set securityContext.seccompProfile.type to "Unconfined""#)
    )]
    #[case::containers_seccomp_invalid(
        json!({"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}, "containers": containers()}),
        Some(r#"containers "c", "d" must not set securityContext.seccompProfile.type to "Unconfined""#)
    )]
    #[case::pod_and_containers_seccomp_invalid(
        json!({"securityContext": {"seccompProfile": {"type": "Unconfined"}}, "containers": containers()}),
        Some(r#"pod and containers "c", "d" must not set securityContext.seccompProfile.type to "Unconfined""#)
    )]
    // Upstream's fixtures.
    #[case::fixture_runtime_default_init_container_unset(
        json!({
            "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
            "initContainers": [{"name": "initcontainer1", "securityContext": {}}],
            "containers": [{"name": "container1", "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}],
        }),
        None
    )]
    #[case::fixture_unconfined_pod(
        fixture_spec_1_19(json!({"type": "Unconfined"}), Value::Null, Value::Null),
        Some(r#"pod must not set securityContext.seccompProfile.type to "Unconfined""#)
    )]
    #[case::fixture_unconfined_container(
        fixture_spec_1_19(Value::Null, json!({"type": "Unconfined"}), Value::Null),
        Some(r#"container "container1" must not set securityContext.seccompProfile.type to "Unconfined""#)
    )]
    #[case::fixture_unconfined_init_container(
        fixture_spec_1_19(Value::Null, Value::Null, json!({"type": "Unconfined"})),
        Some(r#"container "initcontainer1" must not set securityContext.seccompProfile.type to "Unconfined""#)
    )]
    // Beyond upstream's cases.
    #[case::nothing_set(fixture_spec(), None)]
    #[case::localhost_everywhere(
        fixture_spec_1_19(
            json!({"type": "Localhost", "localhostProfile": "p"}),
            json!({"type": "Localhost", "localhostProfile": "p"}),
            json!({"type": "RuntimeDefault"}),
        ),
        None
    )]
    #[case::empty_profile_and_ephemeral_container(
        json!({
            "securityContext": {"seccompProfile": {}},
            "ephemeralContainers": [{"name": "debug", "securityContext": {"seccompProfile": {"type": "Unconfined"}}}],
        }),
        Some(r#"pod and container "debug" must not set securityContext.seccompProfile.type to "", "Unconfined""#)
    )]
    fn seccomp_profile_baseline_1_19_cases(#[case] spec: Value, #[case] detail: Option<&str>) {
        // From 1.19 the annotations are no longer looked at.
        let metadata =
            json!({"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}});
        let result = seccomp_profile_baseline_1_19(&metadata, &spec);
        match detail {
            None => assert_eq!(result, CheckResult::allowed()),
            Some(detail) => assert_eq!(result, CheckResult::forbidden("seccompProfile", detail)),
        }
    }
}
