//! Rules of `storage.k8s.io/v1` StorageClasses, from `pkg/apis/storage/validation`
//! (`ValidateStorageClass`, `ValidateStorageClassUpdate`, `SetDefaults_StorageClass`), and of
//! the group's other kinds: VolumeAttachments ([`volume_attachment`]), CSIDrivers
//! ([`csi_driver`]), CSINodes ([`csi_node`]), CSIStorageCapacities ([`csi_storage_capacity`])
//! and VolumeAttributesClasses ([`volume_attributes_class`]).

pub mod csi_driver;
pub mod csi_node;
pub mod csi_storage_capacity;
pub mod volume_attachment;
pub mod volume_attributes_class;

use serde_json::Value;

use super::{same_at, str_of};
use crate::rules::validation::{is_qualified_name, Cause};

/// The group's defaulters (`SetDefaults_StorageClass`, `SetDefaults_CSIDriver`), run on every
/// decoded write.
pub fn defaults(kind: &str, obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    match kind {
        "StorageClass" => {
            for (key, value) in [
                ("reclaimPolicy", "Delete"),
                ("volumeBindingMode", "Immediate"),
            ] {
                if map.get(key).is_none_or(Value::is_null) {
                    map.insert(key.into(), Value::from(value));
                }
            }
        }
        "CSIDriver" => {
            let spec = map
                .entry("spec")
                .or_insert_with(|| Value::Object(Default::default()));
            if spec.is_null() {
                *spec = Value::Object(Default::default());
            }
            if let Some(spec) = spec.as_object_mut() {
                csi_driver::defaults(spec);
            }
        }
        _ => {}
    }
}

/// The causes of creating a `storage.k8s.io` object of `kind` (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "StorageClass" => storage_class(obj),
        "VolumeAttachment" => volume_attachment::create_causes(obj),
        "CSIDriver" => csi_driver::create_causes(obj),
        "CSINode" => csi_node::create_causes(obj),
        "CSIStorageCapacity" => csi_storage_capacity::create_causes(obj),
        "VolumeAttributesClass" => volume_attributes_class::create_causes(obj),
        _ => Vec::new(),
    }
}

/// The causes of updating one: a StorageClass's parameters, provisioner, reclaim policy and
/// binding mode are fixed.
pub fn update_causes(kind: &str, old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    match kind {
        "StorageClass" => {}
        "VolumeAttachment" => return volume_attachment::update_causes(old, new),
        "CSIDriver" => return csi_driver::update_causes(old, new),
        "CSINode" => return csi_node::update_causes(old, new),
        "CSIStorageCapacity" => return csi_storage_capacity::update_causes(old, new),
        "VolumeAttributesClass" => return volume_attributes_class::update_causes(old, new),
        _ => return causes,
    }
    if !same_at("storage.k8s.io", "StorageClass", &["parameters"], old, new) {
        causes.push(Cause::forbidden(
            "parameters",
            "updates to parameters are forbidden.",
        ));
    }
    if str_of(old, "provisioner") != str_of(new, "provisioner") {
        causes.push(Cause::forbidden(
            "provisioner",
            "updates to provisioner are forbidden.",
        ));
    }
    let policy = |o: &Value| o["reclaimPolicy"].as_str().unwrap_or("Delete").to_string();
    if policy(old) != policy(new) {
        causes.push(Cause::forbidden(
            "reclaimPolicy",
            "updates to reclaimPolicy are forbidden.",
        ));
    }
    let mode = |o: &Value| {
        o["volumeBindingMode"]
            .as_str()
            .unwrap_or("Immediate")
            .to_string()
    };
    if mode(old) != mode(new) {
        causes.push(Cause::invalid(
            "volumeBindingMode",
            &Value::from(mode(new)),
            "field is immutable",
        ));
    }
    causes
}

/// `validateProvisioner` (also a VolumeAttributesClass's driver name): required, and in lower
/// case a qualified name.
fn provisioner_causes(provisioner: &str, path: &str) -> Vec<Cause> {
    if provisioner.is_empty() {
        return vec![Cause::required(path, "")];
    }
    let lower = provisioner.to_lowercase();
    is_qualified_name(&lower)
        .iter()
        .map(|msg| Cause::invalid_str(path, &lower, msg))
        .collect()
}

/// `maxProvisionerParameterLen`.
const MAX_PARAMETERS: usize = 512;
/// `maxProvisionerParameterSize`.
const MAX_PARAMETERS_SIZE: i64 = 256 * 1024;

/// `validateParameters` at `parameters`: at most 512 of them (`TooLong`, as upstream reports
/// it), no empty key, 256 KiB of keys and values; `allow_empty: false` (a VolumeAttributesClass)
/// requires one.
fn parameters_causes(params: Option<&Value>, allow_empty: bool) -> Vec<Cause> {
    let params = params.and_then(Value::as_object);
    let count = params.map_or(0, |p| p.len());
    if count > MAX_PARAMETERS {
        return vec![Cause::too_long("parameters", MAX_PARAMETERS as i64)];
    }
    let mut causes = Vec::new();
    let mut total = 0;
    for (k, v) in params.into_iter().flatten() {
        if k.is_empty() {
            causes.push(Cause::invalid_str(
                "parameters",
                k,
                "field can not be empty.",
            ));
        }
        total += k.len() + v.as_str().map_or(0, str::len);
    }
    if total as i64 > MAX_PARAMETERS_SIZE {
        causes.push(Cause::too_long("parameters", MAX_PARAMETERS_SIZE));
    }
    if !allow_empty && count == 0 {
        causes.push(Cause::required(
            "parameters",
            "must contain at least one key/value pair",
        ));
    }
    causes
}

/// `ValidateStorageClass` (reclaim policy and binding mode default to `Delete` and `Immediate`).
fn storage_class(obj: &Value) -> Vec<Cause> {
    let mut causes = provisioner_causes(str_of(obj, "provisioner"), "provisioner");
    causes.extend(parameters_causes(obj.get("parameters"), true));
    if let Some(policy) = obj.get("reclaimPolicy").and_then(Value::as_str) {
        if !policy.is_empty() && !matches!(policy, "Delete" | "Retain") {
            causes.push(Cause::not_supported(
                "reclaimPolicy",
                &Value::from(policy),
                &["Delete".into(), "Retain".into()],
            ));
        }
    }
    if let Some(mode) = obj.get("volumeBindingMode").and_then(Value::as_str) {
        if !matches!(mode, "Immediate" | "WaitForFirstConsumer") {
            causes.push(Cause::not_supported(
                "volumeBindingMode",
                &Value::from(mode),
                &["Immediate".into(), "WaitForFirstConsumer".into()],
            ));
        }
    }
    for (i, term) in obj["allowedTopologies"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        // `validateAllowedTopologies` via `ValidateTopologySelectorTerm`.
        let mut keys = std::collections::BTreeSet::new();
        for (j, req) in term["matchLabelExpressions"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("allowedTopologies[{i}].matchLabelExpressions[{j}]");
            let values = req["values"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            if values.is_empty() {
                causes.push(Cause::required(format!("{at}.values"), ""));
            }
            let key = str_of(req, "key");
            for msg in is_qualified_name(key) {
                causes.push(Cause::invalid_str(format!("{at}.key"), key, &msg));
            }
            if !keys.insert(key) {
                causes.push(Cause::duplicate(format!("{at}.key"), &Value::from(key)));
            }
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    use crate::rules::validation::error_texts as texts;

    #[rstest]
    #[case::ok(json!({"provisioner": "kubernetes.io/no-provisioner"}), vec![])]
    #[case::no_provisioner(json!({}), vec!["provisioner: Required value"])]
    #[case::policy(json!({"provisioner": "a.io/b", "reclaimPolicy": "Recycle"}),
        vec!["reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\""])]
    #[case::mode(json!({"provisioner": "a.io/b", "volumeBindingMode": "Later"}),
        vec!["volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\""])]
    fn storage_classes(#[case] sc: Value, #[case] expected: Vec<&str>) {
        assert_eq!(texts(create_causes("StorageClass", &sc)), expected);
    }

    #[test]
    fn more_than_512_parameters_are_too_long() {
        let params: serde_json::Map<String, Value> =
            (0..513).map(|i| (format!("k{i}"), json!("v"))).collect();
        let sc = json!({"provisioner": "a.io/b", "parameters": params});
        assert_eq!(
            texts(create_causes("StorageClass", &sc)),
            vec!["parameters: Too long: may not be more than 512 bytes"]
        );
    }

    #[test]
    fn a_storage_class_is_defaulted_to_delete_and_immediate() {
        let mut sc = json!({"provisioner": "a.io/b"});
        defaults("StorageClass", &mut sc);
        assert_eq!(sc["reclaimPolicy"], "Delete");
        assert_eq!(sc["volumeBindingMode"], "Immediate");
        let mut kept = json!({"provisioner": "a.io/b", "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer"});
        defaults("StorageClass", &mut kept);
        assert_eq!(kept["reclaimPolicy"], "Retain");
        assert_eq!(kept["volumeBindingMode"], "WaitForFirstConsumer");
    }

    #[test]
    fn parameters_and_provisioner_are_fixed() {
        let old = json!({"provisioner": "a.io/b", "parameters": {"type": "ssd"}});
        let new = json!({"provisioner": "a.io/c", "parameters": {"type": "hdd"}});
        assert_eq!(
            texts(update_causes("StorageClass", &old, &new)),
            vec![
                "parameters: Forbidden: updates to parameters are forbidden.",
                "provisioner: Forbidden: updates to provisioner are forbidden."
            ]
        );
    }
}
