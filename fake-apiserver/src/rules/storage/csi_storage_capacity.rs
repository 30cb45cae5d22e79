//! Rules of `storage.k8s.io/v1` CSIStorageCapacities, from `pkg/apis/storage/validation`
//! (`ValidateCSIStorageCapacity`, `ValidateCSIStorageCapacityUpdate`) and the strategy
//! (`pkg/registry/storage/csistoragecapacity`): the node topology a valid label selector (an
//! update tolerates invalid label values when the stored one has them), the storage class name a
//! DNS subdomain, a non-negative capacity; on update the topology and the class are fixed.
//! Warnings for deprecated node labels in the topology (`GetWarningsForNodeSelector`).

use serde_json::Value;

use crate::rules::selector;
use crate::rules::validation::{go_json, is_dns1123_subdomain, Cause, FieldErrorType};
use crate::rules::Quantity;

/// `ValidateCSIStorageCapacity` after the metadata.
pub fn create_causes(obj: &Value) -> Vec<Cause> {
    causes(obj, false)
}

/// The strategy's update validation: the new object (tolerating invalid label values in the
/// topology when the stored one had them), then the fixed fields.
pub fn update_causes(old: &Value, new: &Value) -> Vec<Cause> {
    let tolerate = old
        .get("nodeTopology")
        .filter(|t| !t.is_null())
        .is_some_and(|t| !selector::causes(t, "nodeTopology").is_empty());
    let mut causes = causes(new, tolerate);
    let topology = |o: &Value| o.get("nodeTopology").cloned().unwrap_or(Value::Null);
    if topology(old) != topology(new) {
        causes.push(Cause::new(
            FieldErrorType::Invalid,
            "nodeTopology",
            Some(label_selector_json(&topology(new))),
            "field is immutable",
        ));
    }
    let class = |o: &Value| {
        o["storageClassName"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    if class(old) != class(new) {
        causes.push(Cause::invalid_str(
            "storageClassName",
            &class(new),
            "field is immutable",
        ));
    }
    causes
}

/// `GetWarningsForCSIStorageCapacity`.
pub fn warnings(obj: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(topology) = obj.get("nodeTopology").filter(|t| t.is_object()) {
        crate::rules::warnings::label_selector(topology, "nodeTopology", &mut out);
    }
    out
}

fn causes(obj: &Value, tolerate_invalid_label_values: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(topology) = obj.get("nodeTopology").filter(|t| !t.is_null()) {
        causes.extend(selector::causes_with(
            topology,
            "nodeTopology",
            tolerate_invalid_label_values,
        ));
    }
    let class = obj["storageClassName"].as_str().unwrap_or_default();
    for msg in is_dns1123_subdomain(class) {
        causes.push(Cause::invalid_str("storageClassName", class, &msg));
    }
    if let Some(capacity) = obj.get("capacity").and_then(Quantity::from_value) {
        if capacity.is_negative() {
            causes.push(Cause::invalid_str(
                "capacity",
                &capacity.canonical(),
                "must be greater than or equal to 0",
            ));
        }
    }
    causes
}

/// A `*metav1.LabelSelector` as `encoding/json` writes it (struct order: `matchLabels`, then
/// `matchExpressions`, each requirement `key`, `operator`, `values`; empty ones left out).
fn label_selector_json(selector: &Value) -> String {
    if !selector.is_object() {
        return "null".into();
    }
    let mut parts = Vec::new();
    if let Some(labels) = selector["matchLabels"]
        .as_object()
        .filter(|m| !m.is_empty())
    {
        parts.push(format!(
            "\"matchLabels\":{}",
            go_json(&Value::Object(labels.clone()))
        ));
    }
    if let Some(requirements) = selector["matchExpressions"]
        .as_array()
        .filter(|a| !a.is_empty())
    {
        let items: Vec<String> = requirements
            .iter()
            .map(|r| {
                let mut fields = vec![
                    format!("\"key\":{}", go_json(&r["key"])),
                    format!("\"operator\":{}", go_json(&r["operator"])),
                ];
                if let Some(values) = r["values"].as_array().filter(|v| !v.is_empty()) {
                    fields.push(format!(
                        "\"values\":{}",
                        go_json(&Value::Array(values.clone()))
                    ));
                }
                format!("{{{}}}", fields.join(","))
            })
            .collect();
        parts.push(format!("\"matchExpressions\":[{}]", items.join(",")));
    }
    format!("{{{}}}", parts.join(","))
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    use crate::rules::validation::error_texts as texts;

    #[rstest]
    #[case::valid(json!({"storageClassName": "fast", "capacity": "10Gi", "nodeTopology": {"matchLabels": {"zone": "a"}}}), vec![])]
    #[case::no_class(json!({}),
        vec!["storageClassName: Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])]
    #[case::negative(json!({"storageClassName": "fast", "capacity": "-1Gi"}),
        vec!["capacity: Invalid value: \"-1Gi\": must be greater than or equal to 0"])]
    #[case::bad_operator(json!({"storageClassName": "fast", "nodeTopology": {"matchExpressions": [{"key": "zone", "operator": "Near"}]}}),
        vec!["nodeTopology.matchExpressions[0].operator: Invalid value: \"Near\": not a valid selector operator"])]
    fn creates(#[case] obj: Value, #[case] expected: Vec<&str>) {
        assert_eq!(texts(create_causes(&obj)), expected);
    }

    #[test]
    fn the_topology_and_the_class_are_fixed() {
        let old =
            json!({"storageClassName": "fast", "nodeTopology": {"matchLabels": {"zone": "a"}}});
        let new = json!({"storageClassName": "slow", "capacity": "1Gi", "nodeTopology": {
            "matchLabels": {"zone": "b"},
            "matchExpressions": [{"key": "rack", "operator": "Exists"}]}});
        assert_eq!(
            texts(update_causes(&old, &new)),
            vec![
                "nodeTopology: Invalid value: {\"matchLabels\":{\"zone\":\"b\"},\"matchExpressions\":[{\"key\":\"rack\",\"operator\":\"Exists\"}]}: field is immutable",
                "storageClassName: Invalid value: \"slow\": field is immutable"
            ]
        );
        let capacity_only = json!({"storageClassName": "fast", "capacity": "5Gi", "nodeTopology": {"matchLabels": {"zone": "a"}}});
        assert!(update_causes(&old, &capacity_only).is_empty());
    }

    #[test]
    fn stored_invalid_label_values_are_tolerated_on_update() {
        let topology =
            json!({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a b"]}]});
        let obj = json!({"storageClassName": "fast", "nodeTopology": topology});
        assert_eq!(texts(create_causes(&obj)).len(), 1);
        assert!(update_causes(&obj, &obj).is_empty());
    }

    #[test]
    fn deprecated_node_labels_warn() {
        let obj = json!({"nodeTopology": {
            "matchLabels": {"failure-domain.beta.kubernetes.io/zone": "a"},
            "matchExpressions": [{"key": "beta.kubernetes.io/os", "operator": "Exists"}]}});
        assert_eq!(
            warnings(&obj),
            vec![
                "nodeTopology.matchExpressions[0].key: beta.kubernetes.io/os is deprecated since v1.14; use \"kubernetes.io/os\" instead",
                "nodeTopology.matchLabels.failure-domain.beta.kubernetes.io/zone: deprecated since v1.17; use \"topology.kubernetes.io/zone\" instead"
            ]
        );
    }
}
