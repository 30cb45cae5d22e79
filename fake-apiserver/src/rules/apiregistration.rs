//! Rules of `apiregistration.k8s.io/v1` APIServices, as the kube-aggregator has them:
//! `ValidateAPIService` (`pkg/apis/apiregistration/validation`: the name is
//! `spec.version + "." + spec.group`, the priorities in range, a local service without TLS
//! settings, a remote one with its namespace, name and port), the status validation, the create
//! strategy that marks a local APIService `Available` at once, and the priorities kube-apiserver
//! registers its own group versions with (`apiVersionPriorities`).

use serde_json::{json, Value};

use super::validation::{
    is_dns1035_label, is_dns1123_subdomain, validate_path_segment_name, Cause,
};
use super::Target;

/// The label the autoregistration controller puts on the APIServices it manages.
pub const AUTOMANAGED_LABEL: &str = "kube-aggregator.kubernetes.io/automanaged";

/// `(group, version, groupPriorityMinimum, versionPriority)` of the group versions
/// kube-apiserver registers on start (`apiVersionPriorities` merged over
/// `DefaultGenericAPIServicePriorities`); a served group version missing here gets no
/// APIService, as upstream skips it.
pub const PRIORITIES: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v1", 17500, 15),
    ("autoscaling", "v2", 17500, 30),
    ("batch", "v1", 17400, 15),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("networking.k8s.io", "v1", 17200, 15),
    ("policy", "v1", 17100, 15),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("node.k8s.io", "v1", 16300, 15),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
];

/// The priorities of a custom resource group version (`crdRegistrationController`: "CRDs should
/// have relatively low priority").
pub const CUSTOM_PRIORITY: (i64, i64) = (1000, 100);

/// An APIService for a group version served by this server, managed by the autoregistration
/// controller (`manage` is `onstart` for the server's own groups, `true` for CRDs').
pub fn local_api_service(
    group: &str,
    version: &str,
    (group_priority, version_priority): (i64, i64),
    manage: &str,
) -> Value {
    json!({
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": format!("{version}.{group}"), "labels": {AUTOMANAGED_LABEL: manage}},
        "spec": {"group": group, "version": version,
            "groupPriorityMinimum": group_priority, "versionPriority": version_priority},
    })
}

/// The create strategy: the status is reset, and a local APIService (no `spec.service`) is
/// `Available` from the start (`NewLocalAvailableAPIServiceCondition`).
pub fn prepare_create(obj: &mut Value, now: &str) {
    let Some(object) = obj.as_object_mut() else {
        return;
    };
    let local = object
        .get("spec")
        .is_none_or(|spec| spec.get("service").is_none_or(Value::is_null));
    let status = if local {
        json!({"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": now,
            "reason": "Local", "message": "Local APIServices are always available"}]})
    } else {
        json!({})
    };
    object.insert("status".into(), status);
}

/// The causes of creating a `apiregistration.k8s.io` object of `kind` (beyond the generic
/// metadata rules).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "APIService" => api_service(obj),
        _ => Vec::new(),
    }
}

/// The causes of an update: the whole APIService again, or only its status conditions through
/// `/status`.
pub fn update_causes(kind: &str, new: &Value, target: Target) -> Vec<Cause> {
    match (kind, target) {
        ("APIService", Target::Status) => status(new),
        ("APIService", _) => api_service(new),
        _ => Vec::new(),
    }
}

/// `ValidateAPIService`.
fn api_service(obj: &Value) -> Vec<Cause> {
    let spec = &obj["spec"];
    let group = spec["group"].as_str().unwrap_or_default();
    let version = spec["version"].as_str().unwrap_or_default();
    let mut causes = Vec::new();
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    let required = format!("{version}.{group}");
    let name_errors = match validate_path_segment_name(name) {
        errors if !errors.is_empty() => errors,
        _ if name != required => vec![format!(
            "must be `spec.version+\".\"+spec.group`: {}",
            super::validation::go_quote(&required)
        )],
        _ => Vec::new(),
    };
    if !name.is_empty() {
        for message in name_errors {
            causes.push(Cause::invalid_str("metadata.name", name, &message));
        }
    }
    if group.is_empty() && version != "v1" {
        causes.push(Cause::required(
            "spec.group",
            "only v1 may have an empty group and it better be legacy kube",
        ));
    }
    if !group.is_empty() {
        for message in is_dns1123_subdomain(group) {
            causes.push(Cause::invalid_str("spec.group", group, &message));
        }
    }
    for message in is_dns1035_label(version) {
        causes.push(Cause::invalid_str("spec.version", version, &message));
    }
    let group_priority = spec["groupPriorityMinimum"].as_i64().unwrap_or(0);
    if !(1..=20000).contains(&group_priority) {
        causes.push(Cause::invalid(
            "spec.groupPriorityMinimum",
            &json!(group_priority),
            "must be positive and less than 20000",
        ));
    }
    let version_priority = spec["versionPriority"].as_i64().unwrap_or(0);
    if !(1..=1000).contains(&version_priority) {
        causes.push(Cause::invalid(
            "spec.versionPriority",
            &json!(version_priority),
            "must be positive and less than 1000",
        ));
    }
    let ca_bundle = spec["caBundle"].as_str().unwrap_or_default();
    let insecure = spec["insecureSkipTLSVerify"].as_bool().unwrap_or(false);
    let service = &spec["service"];
    if service.is_null() {
        if !ca_bundle.is_empty() {
            causes.push(Cause::invalid_str(
                "spec.caBundle",
                &format!("{} bytes", decoded_len(ca_bundle)),
                "local APIServices may not have a caBundle",
            ));
        }
        if insecure {
            causes.push(Cause::invalid(
                "spec.insecureSkipTLSVerify",
                &json!(true),
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return causes;
    }
    for key in ["namespace", "name"] {
        if service[key].as_str().unwrap_or_default().is_empty() {
            causes.push(Cause::required(format!("spec.service.{key}"), ""));
        }
    }
    // `port` is defaulted to 443 before validation.
    let port = service["port"].as_i64().unwrap_or(443);
    if !(1..=65535).contains(&port) {
        causes.push(Cause::invalid(
            "spec.service.port",
            &json!(port),
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    if insecure && !ca_bundle.is_empty() {
        causes.push(Cause::invalid(
            "spec.insecureSkipTLSVerify",
            &json!(true),
            "may not be true if caBundle is present",
        ));
    }
    causes
}

/// `ValidateAPIServiceStatus`: every condition's status is `True`, `False` or `Unknown`.
fn status(obj: &Value) -> Vec<Cause> {
    let conditions = obj["status"]["conditions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let allowed: Vec<String> = ["True", "False", "Unknown"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    conditions
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let status = c["status"].as_str().unwrap_or_default();
            (!allowed.iter().any(|a| a == status)).then(|| {
                Cause::not_supported(
                    format!("status.conditions[{i}].status"),
                    &json!(status),
                    &allowed,
                )
            })
        })
        .collect()
}

/// The length of the bytes a base64 `[]byte` field holds.
fn decoded_len(b64: &str) -> usize {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_or(0, |b| b.len())
}

/// The table's Available column (the aggregator's `ConvertToTable`): `True`, else the
/// condition's status with its reason, else `Unknown` without an `Available` condition.
pub fn printed_available(obj: &Value) -> String {
    let available = obj["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Available");
    let Some(condition) = available else {
        return "Unknown".into();
    };
    let status = condition["status"].as_str().unwrap_or_default();
    let reason = condition["reason"].as_str().unwrap_or_default();
    if status == "True" || reason.is_empty() {
        status.into()
    } else {
        format!("{status} ({reason})")
    }
}

/// The table's Service column: `Local`, or `namespace/name`.
pub fn printed_service(obj: &Value) -> String {
    match &obj["spec"]["service"] {
        Value::Null => "Local".into(),
        service => format!(
            "{}/{}",
            service["namespace"].as_str().unwrap_or_default(),
            service["name"].as_str().unwrap_or_default()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn local(name: &str, spec: Value) -> Value {
        json!({"metadata": {"name": name}, "spec": spec})
    }

    fn messages(causes: Vec<Cause>) -> Vec<String> {
        causes.iter().map(Cause::error_text).collect()
    }

    #[test]
    fn the_registered_services_are_valid() {
        for (group, version, g, v) in PRIORITIES {
            let service = local_api_service(group, version, (*g, *v), "onstart");
            assert!(
                create_causes("APIService", &service).is_empty(),
                "{service}"
            );
        }
        let core = local_api_service("", "v1", (18000, 1), "onstart");
        assert_eq!(core["metadata"]["name"], "v1.");
    }

    #[rstest]
    #[case::wrong_name(local("v1.other", json!({"group": "ex.com", "version": "v1", "groupPriorityMinimum": 1, "versionPriority": 1})),
        &["metadata.name: Invalid value: \"v1.other\": must be `spec.version+\".\"+spec.group`: \"v1.ex.com\""])]
    #[case::priorities(local("v1.ex.com", json!({"group": "ex.com", "version": "v1", "groupPriorityMinimum": 20001, "versionPriority": 0})),
        &["spec.groupPriorityMinimum: Invalid value: 20001: must be positive and less than 20000",
          "spec.versionPriority: Invalid value: 0: must be positive and less than 1000"])]
    #[case::empty_group(local("v2.", json!({"group": "", "version": "v2", "groupPriorityMinimum": 1, "versionPriority": 1})),
        &["spec.group: Required value: only v1 may have an empty group and it better be legacy kube"])]
    #[case::local_tls(local("v1.ex.com", json!({"group": "ex.com", "version": "v1", "groupPriorityMinimum": 1, "versionPriority": 1, "caBundle": "AAEC", "insecureSkipTLSVerify": true})),
        &["spec.caBundle: Invalid value: \"3 bytes\": local APIServices may not have a caBundle",
          "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify"])]
    #[case::remote(local("v1.ex.com", json!({"group": "ex.com", "version": "v1", "groupPriorityMinimum": 1, "versionPriority": 1, "service": {"port": 0}})),
        &["spec.service.namespace: Required value", "spec.service.name: Required value",
          "spec.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive"])]
    fn invalid_services(#[case] obj: Value, #[case] expected: &[&str]) {
        assert_eq!(messages(create_causes("APIService", &obj)), expected);
    }

    #[test]
    fn local_services_are_available_at_once() {
        let mut obj = local("v1.ex.com", json!({"group": "ex.com", "version": "v1"}));
        obj["status"] = json!({"conditions": [{"type": "Available", "status": "False"}]});
        prepare_create(&mut obj, "2026-12-03T00:00:00Z");
        assert_eq!(printed_available(&obj), "True");
        assert_eq!(obj["status"]["conditions"][0]["reason"], "Local");
        let mut remote = local(
            "v1.ex.com",
            json!({"service": {"namespace": "a", "name": "b"}}),
        );
        prepare_create(&mut remote, "2026-12-03T00:00:00Z");
        assert_eq!(remote["status"], json!({}));
        assert_eq!(printed_available(&remote), "Unknown");
        assert_eq!(printed_service(&remote), "a/b");
    }

    #[test]
    fn status_writes_check_condition_statuses() {
        let obj = json!({"status": {"conditions": [{"type": "Available", "status": "Maybe"}]}});
        assert_eq!(
            messages(update_causes("APIService", &obj, Target::Status)),
            ["status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"True\", \"False\", \"Unknown\""]
        );
        let unavailable = json!({"status": {"conditions": [{"type": "Available", "status": "False", "reason": "ServiceNotFound"}]}});
        assert_eq!(printed_available(&unavailable), "False (ServiceNotFound)");
    }
}
