//! `seLinuxOptions` (baseline, 1.0+): the pod and its containers may set
//! `securityContext.seLinuxOptions.type` only to one of the container types (none,
//! `container_t`, `container_init_t`, `container_kvm_t`, and from 1.31 `container_engine_t`),
//! and may not set its `user` or `role` at all (`check_seLinuxOptions.go`).

use serde_json::Value;

use crate::admission::pod_security::helpers::{
    container_name, containers_phrase, join_quote, pluralize, sorted_set, visit_containers,
};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// The check: from 1.0, and from 1.31 with `container_engine_t` allowed too.
pub(crate) const CHECK: Check = Check {
    id: "seLinuxOptions",
    level: Level::Baseline,
    versions: &[
        VersionedCheck {
            minimum_version: 0,
            check_pod: se_linux_options_1_0,
            override_check_ids: &[],
        },
        VersionedCheck {
            minimum_version: 31,
            check_pod: se_linux_options_1_31,
            override_check_ids: &[],
        },
    ],
};

/// The SELinux types allowed before 1.31 (`selinuxAllowedTypes1_0`); the empty one is unset.
const ALLOWED_TYPES_1_0: &[&str] = &["", "container_t", "container_init_t", "container_kvm_t"];

/// The SELinux types allowed from 1.31 (`selinuxAllowedTypes1_31`).
const ALLOWED_TYPES_1_31: &[&str] = &[
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];

fn se_linux_options_1_0(metadata: &Value, spec: &Value) -> CheckResult {
    se_linux_options(metadata, spec, ALLOWED_TYPES_1_0)
}

fn se_linux_options_1_31(metadata: &Value, spec: &Value) -> CheckResult {
    se_linux_options(metadata, spec, ALLOWED_TYPES_1_31)
}

/// What the forbidden `seLinuxOptions` of a pod and its containers set, all together.
#[derive(Default)]
struct Findings {
    bad_types: Vec<String>,
    set_user: bool,
    set_role: bool,
}

impl Findings {
    /// Records what is wrong with `options` if set; whether they are wrong (`validSELinuxOptions`
    /// negated).
    fn forbids(&mut self, options: &Value, allowed_types: &[&str]) -> bool {
        if options.is_null() {
            return false;
        }
        let field = |name: &str| options[name].as_str().unwrap_or_default();
        let mut forbidden = false;
        if !allowed_types.contains(&field("type")) {
            forbidden = true;
            self.bad_types.push(field("type").to_string());
        }
        if !field("user").is_empty() {
            forbidden = true;
            self.set_user = true;
        }
        if !field("role").is_empty() {
            forbidden = true;
            self.set_role = true;
        }
        forbidden
    }
}

fn se_linux_options(_metadata: &Value, spec: &Value, allowed_types: &[&str]) -> CheckResult {
    let mut findings = Findings::default();
    let mut bad_setters = Vec::new();

    if findings.forbids(&spec["securityContext"]["seLinuxOptions"], allowed_types) {
        bad_setters.push("pod".to_string());
    }

    let mut bad_containers = Vec::new();
    visit_containers(spec, |container| {
        if findings.forbids(
            &container["securityContext"]["seLinuxOptions"],
            allowed_types,
        ) {
            bad_containers.push(container_name(container));
        }
    });
    if !bad_containers.is_empty() {
        bad_setters.push(containers_phrase(&bad_containers));
    }

    if bad_setters.is_empty() {
        return CheckResult::allowed();
    }
    let mut bad_data = Vec::new();
    let bad_types = sorted_set(findings.bad_types);
    if !bad_types.is_empty() {
        bad_data.push(format!(
            "{} {}",
            pluralize("type", "types", bad_types.len()),
            join_quote(&bad_types)
        ));
    }
    if findings.set_user {
        bad_data.push("user may not be set".to_string());
    }
    if findings.set_role {
        bad_data.push("role may not be set".to_string());
    }
    CheckResult::forbidden(
        "seLinuxOptions",
        format!(
            "{} set forbidden securityContext.seLinuxOptions: {}",
            bad_setters.join(" and "),
            bad_data.join("; ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    /// The containers of upstream's test cases: the allowed types (`d`: from 1.31 only), then a
    /// bad type, a user and a role.
    fn containers(with_bad: bool) -> Value {
        let mut containers = vec![
            json!({"name": "a", "securityContext": {"seLinuxOptions": {"type": "container_t"}}}),
            json!({"name": "b", "securityContext": {"seLinuxOptions": {"type": "container_init_t"}}}),
            json!({"name": "c", "securityContext": {"seLinuxOptions": {"type": "container_kvm_t"}}}),
            json!({"name": "d", "securityContext": {"seLinuxOptions": {"type": "container_engine_t"}}}),
        ];
        if with_bad {
            containers.extend([
                json!({"name": "e", "securityContext": {"seLinuxOptions": {"type": "bar"}}}),
                json!({"name": "f", "securityContext": {"seLinuxOptions": {"user": "bar"}}}),
                json!({"name": "g", "securityContext": {"seLinuxOptions": {"role": "baz"}}}),
            ]);
        }
        Value::Array(containers)
    }

    /// Upstream's fixtures' pod: every security context and `seLinuxOptions` set, empty.
    fn fixture_spec(pod: Value, container: Value, init_container: Value) -> Value {
        json!({
            "securityContext": {"seLinuxOptions": pod},
            "initContainers": [{"name": "initcontainer1", "securityContext": {"seLinuxOptions": init_container}}],
            "containers": [{"name": "container1", "securityContext": {"seLinuxOptions": container}}],
        })
    }

    #[rstest]
    // TestSELinuxOptions (upstream runs them at 1.31).
    #[case::invalid_pod_and_containers(
        json!({"securityContext": {"seLinuxOptions": {"type": "foo", "user": "bar", "role": "baz"}}, "containers": containers(true)}),
        Some(r#"pod and containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: types "bar", "foo"; user may not be set; role may not be set"#)
    )]
    #[case::invalid_pod(
        json!({"securityContext": {"seLinuxOptions": {"type": "foo", "user": "bar", "role": "baz"}}, "containers": containers(false)}),
        Some(r#"pod set forbidden securityContext.seLinuxOptions: type "foo"; user may not be set; role may not be set"#)
    )]
    #[case::invalid_containers(
        json!({"securityContext": {"seLinuxOptions": {}}, "containers": containers(true)}),
        Some(r#"containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: type "bar"; user may not be set; role may not be set"#)
    )]
    #[case::bad_type(
        json!({"securityContext": {"seLinuxOptions": {"type": "bad"}}}),
        Some(r#"pod set forbidden securityContext.seLinuxOptions: type "bad""#)
    )]
    #[case::bad_user(
        json!({"securityContext": {"seLinuxOptions": {"user": "bad"}}}),
        Some("pod set forbidden securityContext.seLinuxOptions: user may not be set")
    )]
    #[case::bad_role(
        json!({"securityContext": {"seLinuxOptions": {"role": "bad"}}}),
        Some("pod set forbidden securityContext.seLinuxOptions: role may not be set")
    )]
    // Upstream's fixtures.
    #[case::fixture_unset_and_empty(
        json!({
            "securityContext": {},
            "initContainers": [{"name": "initcontainer1", "securityContext": {"seLinuxOptions": {}}}],
            "containers": [{"name": "container1", "securityContext": {"seLinuxOptions": null}}],
        }),
        None
    )]
    #[case::fixture_allowed_types_any_level(
        fixture_spec(
            json!({"type": "container_t", "level": ""}),
            json!({"type": "container_init_t", "level": "somevalue"}),
            json!({"type": "container_kvm_t"}),
        ),
        None
    )]
    #[case::fixture_pod_type(
        fixture_spec(json!({"type": "somevalue"}), json!({}), json!({})),
        Some(r#"pod set forbidden securityContext.seLinuxOptions: type "somevalue""#)
    )]
    #[case::fixture_container_type(
        fixture_spec(json!({}), json!({"type": "somevalue"}), json!({})),
        Some(r#"container "container1" set forbidden securityContext.seLinuxOptions: type "somevalue""#)
    )]
    #[case::fixture_init_container_type(
        fixture_spec(json!({}), json!({}), json!({"type": "somevalue"})),
        Some(r#"container "initcontainer1" set forbidden securityContext.seLinuxOptions: type "somevalue""#)
    )]
    #[case::fixture_pod_user(
        fixture_spec(json!({"user": "somevalue"}), json!({}), json!({})),
        Some("pod set forbidden securityContext.seLinuxOptions: user may not be set")
    )]
    #[case::fixture_pod_role(
        fixture_spec(json!({"role": "somevalue"}), json!({}), json!({})),
        Some("pod set forbidden securityContext.seLinuxOptions: role may not be set")
    )]
    // Beyond upstream's cases.
    #[case::ephemeral_container_and_shared_bad_type(
        json!({
            "securityContext": {"seLinuxOptions": {"type": "spc_t"}},
            "ephemeralContainers": [{"name": "debug", "securityContext": {"seLinuxOptions": {"type": "spc_t", "user": "u"}}}],
        }),
        Some(r#"pod and container "debug" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set"#)
    )]
    #[case::malformed_input(
        json!({"securityContext": [], "containers": [{"securityContext": {"seLinuxOptions": "x"}}, 1]}),
        None
    )]
    fn se_linux_options_1_31_cases(#[case] spec: Value, #[case] detail: Option<&str>) {
        let result = se_linux_options_1_31(&json!({}), &spec);
        match detail {
            None => assert_eq!(result, CheckResult::allowed()),
            Some(detail) => assert_eq!(result, CheckResult::forbidden("seLinuxOptions", detail)),
        }
    }

    #[rstest]
    #[case::container_engine_t_only_from_1_31(
        json!({"containers": [{"name": "d", "securityContext": {"seLinuxOptions": {"type": "container_engine_t"}}}]}),
        Some(r#"container "d" set forbidden securityContext.seLinuxOptions: type "container_engine_t""#)
    )]
    #[case::older_types(
        json!({
            "securityContext": {"seLinuxOptions": {"type": "container_t"}},
            "initContainers": [{"name": "i", "securityContext": {"seLinuxOptions": {"type": "container_init_t"}}}],
            "containers": [{"name": "c", "securityContext": {"seLinuxOptions": {"type": "container_kvm_t"}}}],
        }),
        None
    )]
    fn se_linux_options_1_0_cases(#[case] spec: Value, #[case] detail: Option<&str>) {
        let result = se_linux_options_1_0(&json!({}), &spec);
        match detail {
            None => assert_eq!(result, CheckResult::allowed()),
            Some(detail) => assert_eq!(result, CheckResult::forbidden("seLinuxOptions", detail)),
        }
    }
}
