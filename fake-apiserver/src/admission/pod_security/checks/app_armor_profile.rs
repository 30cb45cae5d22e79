//! `appArmorProfile` (baseline, 1.0+): the pod and its containers may not set an AppArmor
//! profile type other than `RuntimeDefault` or `Localhost`, and the deprecated
//! `container.apparmor.security.beta.kubernetes.io/*` annotations may only be empty,
//! `runtime/default` or `localhost/*` (`check_appArmorProfile.go`).

use serde_json::Value;

use crate::rules::validation::go_quote;

use crate::admission::pod_security::helpers::{
    container_name, containers_phrase, join_quote, pluralize, sorted_set, visit_containers,
};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// The check: one implementation, from 1.0 on.
pub(crate) const CHECK: Check = Check {
    id: "appArmorProfile",
    level: Level::Baseline,
    versions: &[VersionedCheck {
        minimum_version: 0,
        check_pod: app_armor_profile_1_0,
        override_check_ids: &[],
    }],
};

/// `corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix`.
const ANNOTATION_KEY_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

/// An annotation value the check lets through (`allowedAnnotationValue`): none,
/// `runtime/default` or a `localhost/` profile.
fn allowed_annotation_value(profile: &str) -> bool {
    profile.is_empty() || profile == "runtime/default" || profile.starts_with("localhost/")
}

/// A profile type the check lets through (`allowedProfileType`).
fn allowed_profile_type(profile_type: &str) -> bool {
    matches!(profile_type, "RuntimeDefault" | "Localhost")
}

/// The type an `appArmorProfile` that is set names, if it names a forbidden one (a missing type
/// is the empty string, itself forbidden).
fn forbidden_profile_type(profile: &Value) -> Option<String> {
    if profile.is_null() {
        return None;
    }
    let profile_type = profile["type"].as_str().unwrap_or_default();
    (!allowed_profile_type(profile_type)).then(|| profile_type.to_string())
}

fn app_armor_profile_1_0(metadata: &Value, spec: &Value) -> CheckResult {
    // What set a forbidden profile: "pod", the containers, "annotations".
    let mut bad_setters = Vec::new();
    let mut bad_values = Vec::new();

    if let Some(bad) = forbidden_profile_type(&spec["securityContext"]["appArmorProfile"]) {
        bad_setters.push("pod".to_string());
        bad_values.push(bad);
    }

    let mut bad_containers = Vec::new();
    visit_containers(spec, |container| {
        if let Some(bad) = forbidden_profile_type(&container["securityContext"]["appArmorProfile"])
        {
            bad_containers.push(container_name(container));
            bad_values.push(bad);
        }
    });
    if !bad_containers.is_empty() {
        bad_setters.push(containers_phrase(&bad_containers));
    }

    // Go ranges over the annotation map, then sorts the `key="value"` strings (not the keys);
    // so do we. A value that is not a string cannot come out of Go's typed decode: skipped.
    let mut forbidden_annotations: Vec<String> = metadata["annotations"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(key, _)| key.starts_with(ANNOTATION_KEY_PREFIX))
        .filter_map(|(key, value)| Some((key, value.as_str()?)))
        .filter(|(_, value)| !allowed_annotation_value(value))
        .map(|(key, value)| format!("{key}={}", go_quote(value)))
        .collect();
    forbidden_annotations.sort();

    let mut bad_value_list = sorted_set(bad_values);
    if !forbidden_annotations.is_empty() {
        bad_setters
            .push(pluralize("annotation", "annotations", forbidden_annotations.len()).to_string());
        bad_value_list.extend(forbidden_annotations);
    }

    if bad_setters.is_empty() {
        return CheckResult::allowed();
    }
    CheckResult::forbidden(
        pluralize(
            "forbidden AppArmor profile",
            "forbidden AppArmor profiles",
            bad_value_list.len(),
        ),
        format!(
            "{} must not set AppArmor profile type to {}",
            bad_setters.join(" and "),
            join_quote(&bad_value_list)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    /// A pod spec with the minimal containers of upstream's fixtures.
    fn fixture_spec() -> Value {
        json!({
            "initContainers": [{"name": "initcontainer1", "image": "registry.k8s.io/pause"}],
            "containers": [{"name": "container1", "image": "registry.k8s.io/pause"}],
        })
    }

    #[rstest]
    // TestCheckAppArmor_Allowed
    #[case::default_annotation_and_others(
        json!({"annotations": {"container.apparmor.security.beta.kubernetes.io/test": "runtime/default", "env": "prod"}}),
        json!({}),
        None
    )]
    #[case::localhost_annotation_and_others(
        json!({"annotations": {"container.apparmor.security.beta.kubernetes.io/test": "localhost/sec-profile01", "env": "dev"}}),
        json!({}),
        None
    )]
    #[case::no_apparmor_annotations(json!({"annotations": {"env": "dev"}}), json!({}), None)]
    #[case::no_annotations(json!({}), json!({}), None)]
    #[case::pod_runtime_default(
        json!({}),
        json!({"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}}),
        None
    )]
    #[case::container_runtime_default(
        json!({}),
        json!({"containers": [{"name": "foo", "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}}]}),
        None
    )]
    // TestCheckAppArmor_Forbidden
    #[case::unconfined_pod(
        json!({}),
        json!({"securityContext": {"appArmorProfile": {"type": "Unconfined"}}}),
        Some(("forbidden AppArmor profile", r#"pod must not set AppArmor profile type to "Unconfined""#))
    )]
    #[case::unconfined_container(
        json!({}),
        json!({
            "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "foo", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}],
        }),
        Some(("forbidden AppArmor profile", r#"container "foo" must not set AppArmor profile type to "Unconfined""#))
    )]
    #[case::unconfined_init_container(
        json!({}),
        json!({
            "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "foo"}],
            "initContainers": [{"name": "bar", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}],
        }),
        Some(("forbidden AppArmor profile", r#"container "bar" must not set AppArmor profile type to "Unconfined""#))
    )]
    #[case::multiple_annotations(
        json!({"annotations": {
            "container.apparmor.security.beta.kubernetes.io/": "bogus",
            "container.apparmor.security.beta.kubernetes.io/a": "",
            "container.apparmor.security.beta.kubernetes.io/b": "runtime/default",
            "container.apparmor.security.beta.kubernetes.io/c": "localhost/",
            "container.apparmor.security.beta.kubernetes.io/d": "localhost/foo",
            "container.apparmor.security.beta.kubernetes.io/e": "unconfined",
            "container.apparmor.security.beta.kubernetes.io/f": "unknown",
        }}),
        json!({}),
        Some((
            "forbidden AppArmor profiles",
            concat!(
                r#"annotations must not set AppArmor profile type to "#,
                r#""container.apparmor.security.beta.kubernetes.io/="bogus"", "#,
                r#""container.apparmor.security.beta.kubernetes.io/e="unconfined"", "#,
                r#""container.apparmor.security.beta.kubernetes.io/f="unknown"""#,
            )
        ))
    )]
    // Upstream's fixtures.
    #[case::fixture_runtime_default_and_localhost_annotations(
        json!({"annotations": {
            "container.apparmor.security.beta.kubernetes.io/container1": "localhost/foo",
            "container.apparmor.security.beta.kubernetes.io/initcontainer1": "runtime/default",
        }}),
        fixture_spec(),
        None
    )]
    #[case::fixture_unconfined_container_annotation(
        json!({"annotations": {"container.apparmor.security.beta.kubernetes.io/container1": "unconfined"}}),
        fixture_spec(),
        Some((
            "forbidden AppArmor profile",
            r#"annotation must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/container1="unconfined"""#
        ))
    )]
    #[case::fixture_unconfined_init_container_annotation(
        json!({"annotations": {"container.apparmor.security.beta.kubernetes.io/initcontainer1": "unconfined"}}),
        fixture_spec(),
        Some((
            "forbidden AppArmor profile",
            r#"annotation must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/initcontainer1="unconfined"""#
        ))
    )]
    // Beyond upstream's cases.
    #[case::localhost_type_everywhere(
        json!({}),
        json!({
            "securityContext": {"appArmorProfile": {"type": "Localhost", "localhostProfile": "p"}},
            "initContainers": [{"name": "i", "securityContext": {"appArmorProfile": {"type": "Localhost", "localhostProfile": "p"}}}],
            "ephemeralContainers": [{"name": "e", "securityContext": {"appArmorProfile": null}}],
        }),
        None
    )]
    #[case::everything_forbidden_values_deduplicated_then_annotations(
        json!({"annotations": {
            "container.apparmor.security.beta.kubernetes.io/a": "unconfined",
            "container.apparmor.security.beta.kubernetes.io/a-b": "x\ty",
        }}),
        json!({
            "securityContext": {"appArmorProfile": {"type": "Unconfined"}},
            "containers": [
                {"name": "c1", "securityContext": {"appArmorProfile": {}}},
                {"name": "c2", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}},
            ],
            "ephemeralContainers": [{"name": "e", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}],
        }),
        Some((
            "forbidden AppArmor profiles",
            concat!(
                r#"pod and containers "c1", "c2", "e" and annotations must not set AppArmor profile type to "#,
                r#""", "Unconfined", "container.apparmor.security.beta.kubernetes.io/a-b="x\ty"", "#,
                r#""container.apparmor.security.beta.kubernetes.io/a="unconfined"""#,
            )
        ))
    )]
    #[case::malformed_input(
        json!({"annotations": ["container.apparmor.security.beta.kubernetes.io/a"]}),
        json!({"securityContext": "x", "containers": {"name": "c"}}),
        None
    )]
    fn app_armor_profile_1_0_cases(
        #[case] metadata: Value,
        #[case] spec: Value,
        #[case] expected: Option<(&str, &str)>,
    ) {
        let result = app_armor_profile_1_0(&metadata, &spec);
        match expected {
            None => assert_eq!(result, CheckResult::allowed()),
            Some((reason, detail)) => assert_eq!(result, CheckResult::forbidden(reason, detail)),
        }
    }
}
