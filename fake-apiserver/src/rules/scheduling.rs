//! Rules of `scheduling.k8s.io/v1` PriorityClasses, from
//! `pkg/apis/scheduling/validation/validation.go` (`ValidatePriorityClass`,
//! `ValidatePriorityClassUpdate`) and `pkg/apis/scheduling/v1` (`IsKnownSystemPriorityClass`).

use serde_json::Value;

use super::same;
use crate::rules::validation::Cause;

/// `scheduling.HighestUserDefinablePriority`.
const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;

/// The system priority classes a real server creates at start: (name, value, description).
pub(crate) const SYSTEM_PRIORITY_CLASSES: [(&str, i64, &str); 2] = [
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// The causes of creating a `scheduling.k8s.io` object of `kind` (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "PriorityClass" => priority_class(obj),
        _ => Vec::new(),
    }
}

/// The causes of updating a `scheduling.k8s.io` object of `kind`: a PriorityClass's value and
/// preemption policy are immutable.
pub fn update_causes(kind: &str, old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    if kind != "PriorityClass" {
        return causes;
    }
    if !same(old.get("value"), new.get("value")) {
        causes.push(Cause::forbidden(
            "value",
            "may not be changed in an update.",
        ));
    }
    if !same(old.get("preemptionPolicy"), new.get("preemptionPolicy")) {
        causes.push(Cause::invalid(
            "preemptionPolicy",
            new.get("preemptionPolicy").unwrap_or(&Value::Null),
            "field is immutable",
        ));
    }
    causes
}

/// `ValidatePriorityClass`: `system-` names are reserved for the system classes (with their
/// values, not global defaults); user classes are at most 1000000000; a known preemption policy.
fn priority_class(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    let value = obj["value"].as_i64().unwrap_or(0);
    if name.starts_with("system-") {
        let error = match SYSTEM_PRIORITY_CLASSES.iter().find(|(n, _, _)| *n == name) {
            None => Some(format!("{name} is not a known system priority class")),
            Some((_, v, _)) if *v != value => {
                Some(format!("value of {name} PriorityClass must be {v}"))
            }
            Some(_) if obj["globalDefault"] == Value::Bool(true) => Some(format!(
                "globalDefault of {name} PriorityClass must be false"
            )),
            Some(_) => None,
        };
        if let Some(error) = error {
            causes.push(Cause::forbidden(
                "metadata.name",
                &format!(
                    "priority class names with 'system-' prefix are reserved for system use only. error: {error}"
                ),
            ));
        }
    } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
        causes.push(Cause::forbidden(
            "value",
            &format!(
                "maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            ),
        ));
    }
    if let Some(policy) = obj.get("preemptionPolicy").and_then(Value::as_str) {
        match policy {
            "PreemptLowerPriority" | "Never" => {}
            "" => causes.push(Cause::required("preemptionPolicy", "")),
            other => causes.push(Cause::not_supported(
                "preemptionPolicy",
                &Value::from(other),
                &["PreemptLowerPriority".into(), "Never".into()],
            )),
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
    #[case::user(json!({"metadata": {"name": "high"}, "value": 1000}), vec![])]
    #[case::too_high(json!({"metadata": {"name": "high"}, "value": 1_000_000_001}),
        vec!["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"])]
    #[case::reserved(json!({"metadata": {"name": "system-mine"}, "value": 1}),
        vec!["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"])]
    #[case::system_value(json!({"metadata": {"name": "system-node-critical"}, "value": 1}),
        vec!["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000"])]
    #[case::policy(json!({"metadata": {"name": "p"}, "value": 1, "preemptionPolicy": "Always"}),
        vec!["preemptionPolicy: Unsupported value: \"Always\": supported values: \"PreemptLowerPriority\", \"Never\""])]
    fn priority_classes(#[case] pc: Value, #[case] expected: Vec<&str>) {
        assert_eq!(texts(create_causes("PriorityClass", &pc)), expected);
    }

    #[test]
    fn value_and_policy_are_immutable() {
        let old = json!({"value": 1, "preemptionPolicy": "Never"});
        let new = json!({"value": 2, "preemptionPolicy": "PreemptLowerPriority"});
        assert_eq!(
            texts(update_causes("PriorityClass", &old, &new)),
            vec![
                "value: Forbidden: may not be changed in an update.",
                "preemptionPolicy: Invalid value: \"PreemptLowerPriority\": field is immutable"
            ]
        );
    }
}
