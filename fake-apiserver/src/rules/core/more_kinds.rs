//! The other core kinds: ReplicationControllers and PodTemplates (`ValidateReplicationController`,
//! `ValidatePodTemplate`), Endpoints (`ValidateEndpoints`), PersistentVolumeClaims and
//! PersistentVolumes (`ValidatePersistentVolumeClaim(Update)`, `ValidatePersistentVolume(Update)`),
//! from `pkg/apis/core/validation/validation.go`.

use std::collections::BTreeSet;

use serde_json::Value;

use super::super::quantity::Quantity;
use super::super::{nonnegative, port_name_errors, same, same_at, same_values_at, str_of, Target};
use super::service::non_special_ip;
use super::{nonnegative_fields, pod_template};
use crate::rules::validation::{is_dns1123_label, is_dns1123_subdomain, is_qualified_name, Cause};

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The causes of creating one of these kinds (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Option<Vec<Cause>> {
    Some(match kind {
        "ReplicationController" => rc_spec(&obj["spec"]),
        "PodTemplate" => pod_template(&obj["template"], "template"),
        "Endpoints" => endpoints(obj),
        "PersistentVolumeClaim" => pvc_spec(&obj["spec"]),
        "PersistentVolume" => pv_spec(&obj["spec"]),
        other => return super::quota::create_causes(other, obj),
    })
}

/// The causes of updating one of these kinds (beyond metadata).
pub fn update_causes(kind: &str, old: &Value, new: &Value, target: Target) -> Option<Vec<Cause>> {
    Some(match (kind, target) {
        ("ReplicationController", Target::Main) => rc_spec(&new["spec"]),
        ("ReplicationController", Target::Status) => rc_status(&new["status"]),
        ("PodTemplate", Target::Main) => pod_template(&new["template"], "template"),
        ("Endpoints", _) => endpoints(new),
        ("PersistentVolumeClaim", Target::Main) => pvc_update(old, new),
        ("PersistentVolume", Target::Main) => pv_update(old, new),
        (other, target) => return super::quota::update_causes(other, old, new, target),
    })
}

/// `ValidateReplicationControllerSpec`.
fn rc_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    nonnegative(
        &mut causes,
        spec.get("minReadySeconds"),
        &"spec.minReadySeconds",
    );
    let selector = spec["selector"].as_object();
    if selector.is_none_or(|s| s.is_empty()) {
        causes.push(Cause::required("spec.selector", ""));
    }
    nonnegative(&mut causes, spec.get("replicas"), &"spec.replicas");
    // `ValidatePodTemplateSpecForRC`.
    let template = spec.get("template").filter(|t| t.is_object());
    let Some(template) = template else {
        causes.push(Cause::required("spec.template", ""));
        return causes;
    };
    if let Some(selector) = selector.filter(|s| !s.is_empty()) {
        let labels = &template["metadata"]["labels"];
        let matches = selector
            .iter()
            .all(|(k, v)| labels.get(k).is_some_and(|l| l == v));
        if !matches {
            causes.push(Cause::invalid(
                "spec.template.metadata.labels",
                labels,
                "`selector` does not match template `labels`",
            ));
        }
    }
    causes.extend(pod_template(template, "spec.template"));
    let restart = match str_of(&template["spec"], "restartPolicy") {
        "" => "Always",
        other => other,
    };
    if restart != "Always" {
        causes.push(Cause::not_supported(
            "spec.template.spec.restartPolicy",
            &Value::from(restart),
            &["Always".into()],
        ));
    }
    if template["spec"]
        .get("activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null())
    {
        causes.push(Cause::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            "activeDeadlineSeconds in ReplicationController is not Supported",
        ));
    }
    causes
}

/// `ValidateReplicationControllerStatus`.
fn rc_status(status: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    nonnegative_fields(
        &mut causes,
        status,
        "status",
        &[
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
        ],
    );
    let n = |k: &str| status[k].as_i64().unwrap_or(0);
    let msg = "cannot be greater than status.replicas";
    for f in ["fullyLabeledReplicas", "readyReplicas", "availableReplicas"] {
        if n(f) > n("replicas") {
            causes.push(Cause::invalid(
                format!("status.{f}"),
                &Value::from(n(f)),
                msg,
            ));
        }
    }
    if n("availableReplicas") > n("readyReplicas") {
        causes.push(Cause::invalid(
            "status.availableReplicas",
            &Value::from(n("availableReplicas")),
            "cannot be greater than readyReplicas",
        ));
    }
    causes
}

/// `ValidateEndpoints` (`validateEndpointSubsets`).
fn endpoints(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, subset) in arr(obj, "subsets").iter().enumerate() {
        let at = format!("subsets[{i}]");
        let (ready, not_ready) = (arr(subset, "addresses"), arr(subset, "notReadyAddresses"));
        if ready.is_empty() && not_ready.is_empty() {
            causes.push(Cause::required(
                &at,
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for (list, addresses) in [("addresses", ready), ("notReadyAddresses", not_ready)] {
            for (j, address) in addresses.iter().enumerate() {
                let ap = format!("{at}.{list}[{j}]");
                let ip = str_of(address, "ip");
                if ip.parse::<std::net::IpAddr>().is_err() {
                    causes.push(Cause::invalid_str(
                        format!("{ap}.ip"),
                        ip,
                        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                    ));
                }
                let host = str_of(address, "hostname");
                if !host.is_empty() {
                    for msg in is_dns1123_label(host) {
                        causes.push(Cause::invalid_str(format!("{ap}.hostname"), host, &msg));
                    }
                }
                if let Some(node) = address.get("nodeName").and_then(Value::as_str) {
                    for msg in is_dns1123_subdomain(node) {
                        causes.push(Cause::invalid_str(format!("{ap}.nodeName"), node, &msg));
                    }
                }
                causes.extend(non_special_ip(ip, &format!("{ap}.ip")));
            }
        }
        let ports = arr(subset, "ports");
        for (j, port) in ports.iter().enumerate() {
            // `validateEndpointPort`.
            let pp = format!("{at}.ports[{j}]");
            let name = str_of(port, "name");
            if ports.len() > 1 && name.is_empty() {
                causes.push(Cause::required(format!("{pp}.name"), ""));
            } else if !name.is_empty() {
                for msg in is_dns1123_label(name) {
                    causes.push(Cause::invalid_str(format!("{pp}.name"), name, &msg));
                }
            }
            let number = port["port"].as_i64().unwrap_or(0);
            if !(1..=65535).contains(&number) {
                causes.push(Cause::invalid(
                    format!("{pp}.port"),
                    &Value::from(number),
                    "must be between 1 and 65535, inclusive",
                ));
            }
            let protocol = port
                .get("protocol")
                .and_then(Value::as_str)
                .unwrap_or("TCP");
            causes.extend(super::pod_spec::protocol_causes(
                protocol,
                &format!("{pp}.protocol"),
            ));
            if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
                for msg in is_qualified_name(app) {
                    causes.push(Cause::invalid_str(format!("{pp}.appProtocol"), app, &msg));
                }
            }
        }
    }
    let _ = port_name_errors;
    causes
}

const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

/// The access-mode checks shared by claims and volumes.
fn access_modes(spec: &Value, path: &str, required_detail: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let modes = arr(spec, "accessModes");
    if modes.is_empty() {
        causes.push(Cause::required(
            format!("{path}.accessModes"),
            required_detail,
        ));
    }
    let (mut once_pod, mut other) = (false, false);
    for mode in modes {
        let m = mode.as_str().unwrap_or_default();
        if !ACCESS_MODES.contains(&m) {
            causes.push(Cause::not_supported(
                format!("{path}.accessModes"),
                &Value::from(m),
                &ACCESS_MODES
                    .iter()
                    .map(|s| (*s).to_string())
                    .collect::<Vec<_>>(),
            ));
        } else if m == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            other = true;
        }
    }
    if once_pod && other {
        causes.push(Cause::forbidden(
            format!("{path}.accessModes"),
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    causes
}

/// `ValidatePersistentVolumeClaimSpec`.
fn pvc_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = access_modes(spec, "spec", "at least 1 access mode is required");
    if let Some(sel) = spec.get("selector").filter(|v| v.is_object()) {
        // Upstream checks the selector before the access modes' values; both are reported.
        causes.extend(super::super::selector::causes(sel, "spec.selector"));
    }
    let at = "spec.resources[storage]";
    match spec["resources"]["requests"].get("storage") {
        None => causes.push(Cause::required(at, "")),
        Some(v) => {
            if let Some(q) = Quantity::from_value(v) {
                if q.is_negative() || q.canonical() == "0" {
                    causes.push(Cause::invalid_str(
                        at,
                        &q.canonical(),
                        "must be greater than zero",
                    ));
                }
            }
        }
    }
    if let Some(class) = spec.get("storageClassName").and_then(Value::as_str) {
        if !class.is_empty() {
            for msg in is_dns1123_subdomain(class) {
                causes.push(Cause::invalid_str("spec.storageClassName", class, &msg));
            }
        }
    }
    if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str) {
        if !matches!(mode, "Block" | "Filesystem") {
            causes.push(Cause::not_supported(
                "spec.volumeMode",
                &Value::from(mode),
                &["Block".into(), "Filesystem".into()],
            ));
        }
    }
    causes
}

/// `ValidatePersistentVolumeClaimUpdate`: the spec is immutable except the requested storage
/// (of a bound claim, and never below its old value) and `volumeName` once.
fn pvc_update(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = pvc_spec(&new["spec"]);
    let mut old_spec = old["spec"].clone();
    let mut new_spec = new["spec"].clone();
    if str_of(&old_spec, "volumeName").is_empty() {
        old_spec["volumeName"] = new_spec["volumeName"].clone();
    }
    if old_spec.get("storageClassName").is_none_or(Value::is_null) {
        // Setting a class on a claim without one (and no beta annotation) is allowed once.
        old_spec["storageClassName"] = new_spec["storageClassName"].clone();
    }
    let bound = new["status"]["phase"] == "Bound";
    if bound && new_spec["resources"]["requests"].is_object() {
        new_spec["resources"]["requests"]["storage"] =
            old["spec"]["resources"]["requests"]["storage"].clone();
    }
    let normalize = |s: &mut Value| {
        if let Some(m) = s.as_object_mut() {
            m.retain(|_, v| !v.is_null());
        }
    };
    normalize(&mut old_spec);
    normalize(&mut new_spec);
    let same_spec = same_values_at(
        "",
        "PersistentVolumeClaim",
        &["spec"],
        Some(&old_spec),
        Some(&new_spec),
    );
    if !same_spec {
        causes.push(Cause::forbidden(
            "spec",
            "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
        ));
    }
    let size = |v: &Value| Quantity::from_value(&v["spec"]["resources"]["requests"]["storage"]);
    if let (Some(o), Some(n)) = (size(old), size(new)) {
        if n < o {
            causes.push(Cause::forbidden(
                "spec.resources.requests.storage",
                "field can not be less than status.capacity",
            ));
        }
    }
    causes
}

const PV_SOURCES: [&str; 20] = [
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "flocker",
    "nfs",
    "rbd",
    "quobyte",
    "cephfs",
    "iscsi",
    "cinder",
    "fc",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "local",
];

/// `ValidatePersistentVolumeSpec` (access modes, capacity, reclaim policy, exactly one source).
fn pv_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = access_modes(spec, "spec", "");
    let capacity = spec["capacity"].as_object();
    if capacity.is_none_or(|c| c.is_empty()) {
        causes.push(Cause::required("spec.capacity", ""));
    }
    let only_storage = capacity.is_some_and(|c| c.len() == 1 && c.contains_key("storage"));
    if !only_storage {
        causes.push(Cause::not_supported(
            "spec.capacity",
            &spec.get("capacity").cloned().unwrap_or(Value::Null),
            &["storage".into()],
        ));
    }
    for (name, v) in capacity.into_iter().flatten() {
        if let Some(q) = Quantity::from_value(v) {
            let at = format!("spec.capacity[{name}]");
            if q.is_negative() || q.canonical() == "0" {
                causes.push(Cause::invalid_str(
                    &at,
                    &q.canonical(),
                    "must be greater than zero",
                ));
            }
        }
    }
    if let Some(policy) = spec
        .get("persistentVolumeReclaimPolicy")
        .and_then(Value::as_str)
    {
        if !policy.is_empty() && !matches!(policy, "Delete" | "Recycle" | "Retain") {
            causes.push(Cause::not_supported(
                "spec.persistentVolumeReclaimPolicy",
                &Value::from(policy),
                &["Delete".into(), "Recycle".into(), "Retain".into()],
            ));
        }
    }
    let mut count = 0;
    for key in PV_SOURCES.iter().chain(["csi"].iter()) {
        if spec.get(*key).is_some_and(|v| !v.is_null()) {
            if count > 0 {
                causes.push(Cause::forbidden(
                    format!("spec.{key}"),
                    "may not specify more than 1 volume type",
                ));
            }
            count += 1;
        }
    }
    if count == 0 {
        causes.push(Cause::required("spec", "must specify a volume type"));
    }
    if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str) {
        if !matches!(mode, "Block" | "Filesystem") {
            causes.push(Cause::not_supported(
                "spec.volumeMode",
                &Value::from(mode),
                &["Block".into(), "Filesystem".into()],
            ));
        }
    }
    causes
}

/// `ValidatePersistentVolumeUpdate`: the volume source and mode are immutable.
fn pv_update(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = pv_spec(&new["spec"]);
    let sources: BTreeSet<&str> = PV_SOURCES.iter().copied().chain(["csi"]).collect();
    let changed = sources
        .iter()
        .any(|k| !same_at("", "PersistentVolume", &["spec", k], old, new));
    if changed {
        causes.push(Cause::forbidden(
            "spec.persistentvolumesource",
            "spec.persistentvolumesource is immutable after creation",
        ));
    }
    if !same(old["spec"].get("volumeMode"), new["spec"].get("volumeMode")) {
        causes.push(Cause::invalid(
            "volumeMode",
            new["spec"].get("volumeMode").unwrap_or(&Value::Null),
            "field is immutable",
        ));
    }
    causes
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    fn texts(causes: Option<Vec<Cause>>) -> Vec<String> {
        causes
            .unwrap_or_default()
            .iter()
            .map(Cause::error_text)
            .collect()
    }

    fn template(labels: Value, restart: &str) -> Value {
        json!({"metadata": {"labels": labels}, "spec": {"restartPolicy": restart,
            "containers": [{"name": "c", "image": "busybox"}]}})
    }

    #[rstest]
    #[case::ok(json!({"selector": {"a": "b"}, "template": template(json!({"a": "b"}), "Always")}), vec![])]
    #[case::no_selector(json!({"template": template(json!({"a": "b"}), "Always")}), vec!["spec.selector: Required value"])]
    #[case::mismatch(json!({"selector": {"a": "c"}, "template": template(json!({"a": "b"}), "Always")}),
        vec!["spec.template.metadata.labels: Invalid value: {\"a\":\"b\"}: `selector` does not match template `labels`"])]
    #[case::never(json!({"selector": {"a": "b"}, "template": template(json!({"a": "b"}), "Never")}),
        vec!["spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\""])]
    fn replication_controllers(#[case] spec: Value, #[case] expected: Vec<&str>) {
        assert_eq!(
            texts(create_causes(
                "ReplicationController",
                &json!({"spec": spec})
            )),
            expected
        );
    }

    #[rstest]
    #[case::ok(json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}), vec![])]
    #[case::no_modes(json!({"resources": {"requests": {"storage": "1Gi"}}}),
        vec!["spec.accessModes: Required value: at least 1 access mode is required"])]
    #[case::no_storage(json!({"accessModes": ["ReadWriteOnce"]}), vec!["spec.resources[storage]: Required value"])]
    #[case::bad_mode(json!({"accessModes": ["ReadWriteSometimes"], "resources": {"requests": {"storage": "1Gi"}}}),
        vec!["spec.accessModes: Unsupported value: \"ReadWriteSometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\""])]
    #[case::zero(json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "0"}}}),
        vec!["spec.resources[storage]: Invalid value: \"0\": must be greater than zero"])]
    fn claims(#[case] spec: Value, #[case] expected: Vec<&str>) {
        assert_eq!(
            texts(create_causes(
                "PersistentVolumeClaim",
                &json!({"spec": spec})
            )),
            expected
        );
    }

    #[test]
    fn a_claims_spec_is_immutable_but_volume_name_is_set_once() {
        let old = json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
        let mut bound = old.clone();
        bound["spec"]["volumeName"] = json!("pv-1");
        assert!(texts(update_causes(
            "PersistentVolumeClaim",
            &old,
            &bound,
            Target::Main
        ))
        .is_empty());
        let mut changed = old.clone();
        changed["spec"]["accessModes"] = json!(["ReadWriteMany"]);
        assert_eq!(
            texts(update_causes("PersistentVolumeClaim", &old, &changed, Target::Main)),
            vec!["spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"]
        );
    }

    #[test]
    fn volumes_need_one_source_and_storage_capacity() {
        let pv =
            json!({"spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}});
        assert_eq!(
            texts(create_causes("PersistentVolume", &pv)),
            vec!["spec: Required value: must specify a volume type"]
        );
        let ok = json!({"spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "hostPath": {"path": "/d"}}});
        assert!(texts(create_causes("PersistentVolume", &ok)).is_empty());
    }

    #[test]
    fn endpoints_need_addresses_with_real_ips() {
        let ep = json!({"subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"port": 80}]}, {"ports": [{"port": 80}]}]});
        assert_eq!(
            texts(create_causes("Endpoints", &ep)),
            vec![
                "subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
                "subsets[1]: Required value: must specify `addresses` or `notReadyAddresses`"
            ]
        );
    }
}
