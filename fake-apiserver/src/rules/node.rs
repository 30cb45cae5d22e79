//! Rules of `node.k8s.io/v1` RuntimeClasses, from `pkg/apis/node/validation/validation.go`
//! (`ValidateRuntimeClass`, `ValidateRuntimeClassUpdate`): the handler is a DNS label and
//! immutable, the pod overhead is validated as resource limits, the scheduling constraints as
//! labels and tolerations.

use serde_json::{json, Value};

use super::core::{pod_spec, tolerations};
use super::same;
use crate::rules::validation::{is_dns1123_label, validate_labels, Cause};

/// The causes of creating a `node.k8s.io` object of `kind` (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "RuntimeClass" => runtime_class(obj),
        _ => Vec::new(),
    }
}

/// The causes of updating a `node.k8s.io` object of `kind`: the whole object is validated again,
/// and a RuntimeClass's handler may not change.
pub fn update_causes(kind: &str, old: &Value, new: &Value) -> Vec<Cause> {
    if kind != "RuntimeClass" {
        return Vec::new();
    }
    let mut causes = runtime_class(new);
    if !same(old.get("handler"), new.get("handler")) {
        causes.push(Cause::invalid(
            "handler",
            new.get("handler").unwrap_or(&Value::Null),
            "field is immutable",
        ));
    }
    causes
}

/// `ValidateRuntimeClass` (after the metadata, which the generic rules check).
fn runtime_class(obj: &Value) -> Vec<Cause> {
    let handler = obj["handler"].as_str().unwrap_or_default();
    let mut causes: Vec<Cause> = is_dns1123_label(handler)
        .iter()
        .map(|msg| Cause::invalid_str("handler", handler, msg))
        .collect();
    if let Some(pod_fixed) = obj["overhead"].get("podFixed") {
        // `validateOverhead` reuses the resource requirements check on `limits`.
        causes.extend(pod_spec::resources(
            &json!({ "limits": pod_fixed }),
            &"overhead",
        ));
    }
    let scheduling = &obj["scheduling"];
    if scheduling.is_object() {
        causes.extend(validate_labels(
            scheduling.get("nodeSelector"),
            &"scheduling.nodeSelector",
        ));
        causes.extend(tolerations(
            &scheduling["tolerations"],
            &"scheduling.tolerations",
        ));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn texts(causes: &[Cause]) -> Vec<String> {
        causes.iter().map(Cause::error_text).collect()
    }

    #[rstest]
    #[case::valid(json!({"handler": "runc"}), vec![])]
    #[case::handler_with_dots(json!({"handler": "a.b"}), vec!["handler: Invalid value: \"a.b\": must not contain dots"])]
    #[case::handler_missing(json!({}), vec!["handler: Invalid value: \"\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])]
    #[case::overhead(json!({"handler": "kata", "overhead": {"podFixed": {"cpu": "250m", "memory": "-1"}}}),
        vec!["overhead.limits[memory]: Invalid value: \"-1\": must be greater than or equal to 0"])]
    #[case::scheduling(json!({"handler": "kata", "scheduling": {"nodeSelector": {"a b": "x"}, "tolerations": [{"operator": "Exists", "value": "v"}]}}),
        vec![
            "scheduling.nodeSelector: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            // (ValidateTolerations reports the whole toleration.)
            "scheduling.tolerations[0].operator: Invalid value: {\"operator\":\"Exists\",\"value\":\"v\"}: value must be empty when `operator` is 'Exists'",
        ])]
    fn runtime_classes_are_validated(#[case] obj: Value, #[case] expected: Vec<&str>) {
        assert_eq!(texts(&create_causes("RuntimeClass", &obj)), expected);
    }

    #[test]
    fn the_handler_is_immutable() {
        let old = json!({"handler": "runc"});
        assert!(update_causes("RuntimeClass", &old, &old).is_empty());
        assert_eq!(
            texts(&update_causes(
                "RuntimeClass",
                &old,
                &json!({"handler": "kata"})
            )),
            vec!["handler: Invalid value: \"kata\": field is immutable"]
        );
    }
}
