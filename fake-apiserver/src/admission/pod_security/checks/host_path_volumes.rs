//! `hostPathVolumes` (baseline, 1.0+): no `hostPath` volumes (`check_hostPathVolumes.go`).
//! The restricted `restrictedVolumes` check replaces it.

use serde_json::Value;

use crate::admission::pod_security::helpers::{join_quote, pluralize};
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// The check.
pub(crate) const CHECK: Check = Check {
    id: "hostPathVolumes",
    level: Level::Baseline,
    versions: &[VersionedCheck {
        minimum_version: 0,
        check_pod: host_path_volumes_1_0,
        override_check_ids: &[],
    }],
};

fn host_path_volumes_1_0(_metadata: &Value, spec: &Value) -> CheckResult {
    let host_volumes: Vec<String> = spec["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|volume| !volume["hostPath"].is_null())
        .map(|volume| volume["name"].as_str().unwrap_or_default().to_string())
        .collect();
    if host_volumes.is_empty() {
        return CheckResult::allowed();
    }
    CheckResult::forbidden(
        "hostPath volumes",
        format!(
            "{} {}",
            pluralize("volume", "volumes", host_volumes.len()),
            join_quote(&host_volumes)
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
        json!({"volumes": [{"name": "a", "hostPath": {"path": "/a"}}, {"name": "b", "emptyDir": {}}]}),
        Some("volume \"a\"")
    )]
    #[case::several(
        json!({"volumes": [{"name": "a", "hostPath": {"path": "/a"}}, {"name": "b", "hostPath": {"path": "/b"}}]}),
        Some("volumes \"a\", \"b\"")
    )]
    #[case::none(json!({"volumes": [{"name": "b", "emptyDir": {}}]}), None)]
    fn host_path_volumes_are_named(#[case] spec: Value, #[case] detail: Option<&str>) {
        let result = host_path_volumes_1_0(&json!({}), &spec);
        assert_eq!(result.allowed, detail.is_none());
        if let Some(detail) = detail {
            assert_eq!(result.forbidden_reason, "hostPath volumes");
            assert_eq!(result.forbidden_detail, detail);
        }
    }
}
