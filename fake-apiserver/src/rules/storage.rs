//! Rules of `storage.k8s.io/v1` StorageClasses, from `pkg/apis/storage/validation`
//! (`ValidateStorageClass`, `ValidateStorageClassUpdate`), and VolumeAttachments
//! ([`volume_attachment`]).

pub mod volume_attachment;

use serde_json::Value;

use super::{same, selector, str_of};
use crate::rules::validation::{is_qualified_name, Cause};

/// The causes of creating a `storage.k8s.io` object of `kind` (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "StorageClass" => storage_class(obj),
        "VolumeAttachment" => volume_attachment::create_causes(obj),
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
        _ => return causes,
    }
    if !same(old.get("parameters"), new.get("parameters")) {
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

/// `ValidateStorageClass` (reclaim policy and binding mode default to `Delete` and `Immediate`).
fn storage_class(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let provisioner = str_of(obj, "provisioner");
    if provisioner.is_empty() {
        causes.push(Cause::required("provisioner", ""));
    } else {
        let lower = provisioner.to_lowercase();
        for msg in is_qualified_name(&lower) {
            causes.push(Cause::invalid_str("provisioner", &lower, &msg));
        }
    }
    if let Some(params) = obj["parameters"].as_object() {
        if params.len() > 512 {
            causes.push(Cause::too_many("parameters", params.len() as i64, 512));
        } else {
            let mut total = 0;
            for (k, v) in params {
                if k.is_empty() {
                    causes.push(Cause::invalid_str(
                        "parameters",
                        k,
                        "field can not be empty.",
                    ));
                }
                total += k.len() + v.as_str().map_or(0, str::len);
            }
            if total > 256 * 1024 {
                causes.push(Cause::too_long("parameters", 256 * 1024));
            }
        }
    }
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
    let _ = selector::parses;
    causes
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    fn texts(causes: Vec<Cause>) -> Vec<String> {
        causes.iter().map(Cause::error_text).collect()
    }

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
