//! Rules of `storage.k8s.io/v1` VolumeAttachments, from `pkg/apis/storage/validation`
//! (`ValidateVolumeAttachment`, `ValidateVolumeAttachmentV1`, `ValidateVolumeAttachmentUpdate`)
//! and the strategy's use of them: a create is held to the v1 checks too (the attacher a CSI
//! driver name, the persistent volume's name a path segment); an update (main endpoint or
//! `/status`) runs `ValidateVolumeAttachment` on the new object twice (the strategy's call and
//! the one inside `ValidateVolumeAttachmentUpdate`, so a cause is reported twice, as upstream
//! reports it) and keeps the spec.
//!
//! Not checked: an `inlineVolumeSpec` source's persistent volume spec (CSI migration's; only
//! the one-source rule applies to it). A changed spec is reported with the spec written as
//! JSON, where Go prints the struct with its pointers' addresses.

use serde_json::{json, Value};

use crate::rules::core::pod_spec::csi_driver_name;
use crate::rules::validation::{is_dns1123_subdomain, validate_path_segment_name, Cause};

/// `maxAttachedVolumeMetadataSize` (also the limit upstream names for a too long error
/// message, whose real limit is [`MAX_ERROR_MESSAGE`]).
const MAX_METADATA: i64 = 256 * 1024;
/// `maxVolumeErrorMessageSize`.
const MAX_ERROR_MESSAGE: usize = 1024;

/// `ValidateVolumeAttachment` and, for a new object, `ValidateVolumeAttachmentV1`.
pub fn create_causes(obj: &Value) -> Vec<Cause> {
    let mut causes = volume_attachment(obj);
    causes.extend(v1(obj));
    causes
}

/// The update validation: the object twice, then the spec immutable.
pub fn update_causes(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = volume_attachment(new);
    causes.extend(volume_attachment(new));
    if !crate::rules::same_at("storage.k8s.io", "VolumeAttachment", &["spec"], old, new) {
        causes.push(Cause::invalid(
            "spec",
            new.get("spec").unwrap_or(&Value::Null),
            "field is immutable",
        ));
    }
    causes
}

/// `ValidateVolumeAttachment` after the metadata: the spec and the status.
fn volume_attachment(obj: &Value) -> Vec<Cause> {
    let spec = &obj["spec"];
    let mut causes = Vec::new();
    if spec["attacher"].as_str().unwrap_or_default().is_empty() {
        causes.push(Cause::required("spec.attacher", ""));
    }
    let source = &spec["source"];
    let inline = !source["inlineVolumeSpec"].is_null();
    let pv = source.get("persistentVolumeName").filter(|v| !v.is_null());
    const EXACTLY_ONE: &str =
        "must specify exactly one of inlineVolumeSpec and persistentVolumeName";
    match (inline, pv) {
        (false, None) => causes.push(Cause::required("spec.source", EXACTLY_ONE)),
        (true, Some(_)) => causes.push(Cause::forbidden("spec.source", EXACTLY_ONE)),
        (false, Some(name)) if name.as_str().unwrap_or_default().is_empty() => {
            causes.push(Cause::required(
                "spec.source.persistentVolumeName",
                "must specify non empty persistentVolumeName",
            ))
        }
        _ => {}
    }
    let node = spec["nodeName"].as_str().unwrap_or_default();
    for msg in is_dns1123_subdomain(node) {
        causes.push(Cause::invalid_str("spec.nodeName", node, &msg));
    }
    let status = &obj["status"];
    let metadata_size: usize = status["attachmentMetadata"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if metadata_size as i64 > MAX_METADATA {
        causes.push(Cause::too_long("status.attachmentMetadata", MAX_METADATA));
    }
    for key in ["attachError", "detachError"] {
        let error = &status[key];
        if error.is_null() {
            continue;
        }
        if error["message"].as_str().map_or(0, str::len) > MAX_ERROR_MESSAGE {
            causes.push(Cause::too_long(
                format!("status.{key}.message"),
                MAX_METADATA,
            ));
        }
        if let Some(code) = error["errorCode"].as_i64().filter(|c| *c < 0) {
            causes.push(Cause::invalid(
                format!("status.{key}.errorCode"),
                &json!(code),
                "must be between 0 and 2147483647, inclusive",
            ));
        }
    }
    causes
}

/// `ValidateVolumeAttachmentV1`: the attacher is a CSI driver name and the persistent volume's
/// name a valid one.
fn v1(obj: &Value) -> Vec<Cause> {
    let spec = &obj["spec"];
    let mut causes = csi_driver_name(
        spec["attacher"].as_str().unwrap_or_default(),
        &"spec.attacher",
    );
    if let Some(pv) = spec["source"]["persistentVolumeName"].as_str() {
        for msg in validate_path_segment_name(pv) {
            causes.push(Cause::invalid_str(
                "spec.source.persistentVolumeName",
                pv,
                &msg,
            ));
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn attachment(spec: Value, status: Value) -> Value {
        json!({"metadata": {"name": "va"}, "spec": spec, "status": status})
    }

    use crate::rules::validation::error_texts as texts;

    fn valid_spec() -> Value {
        json!({"attacher": "csi.example.com", "source": {"persistentVolumeName": "pv-1"}, "nodeName": "node-1"})
    }

    #[test]
    fn a_valid_attachment_has_no_causes() {
        assert!(create_causes(&attachment(valid_spec(), json!({"attached": false}))).is_empty());
    }

    #[rstest]
    #[case::no_source(json!({"attacher": "csi.example.com", "source": {}, "nodeName": "n"}),
        &["spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"])]
    #[case::both_sources(json!({"attacher": "csi.example.com", "source": {"persistentVolumeName": "a", "inlineVolumeSpec": {}}, "nodeName": "n"}),
        &["spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName"])]
    #[case::empty_pv(json!({"attacher": "csi.example.com", "source": {"persistentVolumeName": ""}, "nodeName": "n"}),
        &["spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName"])]
    #[case::no_attacher(json!({"source": {"persistentVolumeName": "a"}, "nodeName": "n"}),
        &["spec.attacher: Required value", "spec.attacher: Required value",
          "spec.attacher: Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])]
    #[case::bad_node(json!({"attacher": "csi.example.com", "source": {"persistentVolumeName": "a"}, "nodeName": "Node_1"}),
        &["spec.nodeName: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])]
    #[case::pv_name(json!({"attacher": "csi.example.com", "source": {"persistentVolumeName": ".."}, "nodeName": "n"}),
        &["spec.source.persistentVolumeName: Invalid value: \"..\": may not be '..'"])]
    fn invalid_specs(#[case] spec: Value, #[case] expected: &[&str]) {
        assert_eq!(texts(create_causes(&attachment(spec, json!({})))), expected);
    }

    #[test]
    fn status_errors_are_bounded() {
        let status = json!({"attached": false,
            "attachError": {"message": "x".repeat(1025), "errorCode": -1}});
        assert_eq!(
            texts(create_causes(&attachment(valid_spec(), status))),
            [
                "status.attachError.message: Too long: may not be more than 262144 bytes",
                "status.attachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, inclusive"
            ]
        );
    }

    #[test]
    fn updates_keep_the_spec_and_report_twice() {
        let old = attachment(valid_spec(), json!({}));
        let mut moved = valid_spec();
        moved["nodeName"] = json!("Node_2");
        let found = texts(update_causes(&old, &attachment(moved, json!({}))));
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(found[0], found[1]);
        assert!(found[2].starts_with("spec: Invalid value: {"), "{found:?}");
        assert!(found[2].ends_with(": field is immutable"), "{found:?}");
    }
}
