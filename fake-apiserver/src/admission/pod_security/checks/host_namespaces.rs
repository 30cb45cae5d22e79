//! `hostNamespaces` (baseline, 1.0+): a pod may not share the host's network, PID or IPC
//! namespace (`check_hostNamespaces.go`).

use serde_json::Value;

use crate::admission::pod_security::helpers::is_true;
use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// The check.
pub(crate) const CHECK: Check = Check {
    id: "hostNamespaces",
    level: Level::Baseline,
    versions: &[VersionedCheck {
        minimum_version: 0,
        check_pod: host_namespaces_1_0,
        override_check_ids: &[],
    }],
};

fn host_namespaces_1_0(_metadata: &Value, spec: &Value) -> CheckResult {
    let shared: Vec<&str> = [
        ("hostNetwork", "hostNetwork=true"),
        ("hostPID", "hostPID=true"),
        ("hostIPC", "hostIPC=true"),
    ]
    .into_iter()
    .filter(|(field, _)| is_true(&spec[*field]))
    .map(|(_, text)| text)
    .collect();
    if shared.is_empty() {
        return CheckResult::allowed();
    }
    CheckResult::forbidden("host namespaces", shared.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::network(json!({"hostNetwork": true}), Some("hostNetwork=true"))]
    #[case::pid(json!({"hostPID": true}), Some("hostPID=true"))]
    #[case::ipc(json!({"hostIPC": true}), Some("hostIPC=true"))]
    #[case::all(
        json!({"hostIPC": true, "hostNetwork": true, "hostPID": true}),
        Some("hostNetwork=true, hostPID=true, hostIPC=true")
    )]
    #[case::none(json!({"hostIPC": false, "hostNetwork": false}), None)]
    fn host_namespaces_are_listed(#[case] spec: Value, #[case] detail: Option<&str>) {
        let result = host_namespaces_1_0(&json!({}), &spec);
        assert_eq!(result.allowed, detail.is_none());
        if let Some(detail) = detail {
            assert_eq!(result.forbidden_reason, "host namespaces");
            assert_eq!(result.forbidden_detail, detail);
        }
    }
}
