//! Rules of `policy/v1` PodDisruptionBudgets, from `pkg/apis/policy/validation/validation.go`
//! (`ValidatePodDisruptionBudgetSpec`, `ValidatePodDisruptionBudgetStatusUpdate`).

use serde_json::Value;

use super::{int_or_percent, nonnegative, not_more_than_100_percent, selector, Target};
use crate::rules::validation::{go_json, Cause};

/// The causes of creating a `policy` object of `kind` (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "PodDisruptionBudget" => pdb_spec(&obj["spec"]),
        _ => Vec::new(),
    }
}

/// The causes of updating a `policy` object of `kind`: the spec stays mutable in `policy/v1`;
/// a status write has its counters checked.
pub fn update_causes(kind: &str, new: &Value, target: Target) -> Vec<Cause> {
    match (kind, target) {
        ("PodDisruptionBudget", Target::Main) => pdb_spec(&new["spec"]),
        ("PodDisruptionBudget", Target::Status) => {
            let mut causes = Vec::new();
            for f in [
                "disruptionsAllowed",
                "currentHealthy",
                "desiredHealthy",
                "expectedPods",
            ] {
                nonnegative(&mut causes, new["status"].get(f), &format!("status.{f}"));
            }
            causes
        }
        _ => Vec::new(),
    }
}

/// `ValidatePodDisruptionBudgetSpec`.
fn pdb_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let min = spec.get("minAvailable").filter(|v| !v.is_null());
    let max = spec.get("maxUnavailable").filter(|v| !v.is_null());
    if min.is_some() && max.is_some() {
        // Upstream prints the spec struct with `%#v`; the JSON form stands in for it.
        causes.push(Cause::new(
            crate::rules::validation::FieldErrorType::Invalid,
            "spec",
            Some(go_json(spec)),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for (field, value) in [("minAvailable", min), ("maxUnavailable", max)] {
        if let Some(v) = value {
            let at = format!("spec.{field}");
            causes.extend(int_or_percent(v, &at));
            causes.extend(not_more_than_100_percent(v, &at));
        }
    }
    if let Some(sel) = spec.get("selector").filter(|v| v.is_object()) {
        causes.extend(selector::causes(sel, "spec.selector"));
    }
    if let Some(policy) = spec
        .get("unhealthyPodEvictionPolicy")
        .and_then(Value::as_str)
    {
        if !matches!(policy, "AlwaysAllow" | "IfHealthyBudget") {
            causes.push(Cause::not_supported(
                "spec.unhealthyPodEvictionPolicy",
                &Value::from(policy),
                &["AlwaysAllow".into(), "IfHealthyBudget".into()],
            ));
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    #[rstest]
    #[case::min_int(json!({"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}}), vec![])]
    #[case::max_percent(json!({"maxUnavailable": "50%"}), vec![])]
    #[case::negative(json!({"minAvailable": -1}), vec!["spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"])]
    #[case::bad_percent(json!({"minAvailable": "half"}),
        vec!["spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"half\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"])]
    #[case::over_100(json!({"maxUnavailable": "120%"}),
        vec!["spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"120%\"}: must not be greater than 100%"])]
    #[case::both(json!({"minAvailable": 1, "maxUnavailable": 1}),
        vec!["spec: Invalid value: {\"maxUnavailable\":1,\"minAvailable\":1}: minAvailable and maxUnavailable cannot be both set"])]
    #[case::eviction_policy(json!({"unhealthyPodEvictionPolicy": "Sometimes"}),
        vec!["spec.unhealthyPodEvictionPolicy: Unsupported value: \"Sometimes\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\""])]
    #[case::selector(json!({"selector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}),
        vec!["spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"])]
    fn pdbs(#[case] spec: Value, #[case] expected: Vec<&str>) {
        let causes = create_causes("PodDisruptionBudget", &json!({"spec": spec}));
        let texts: Vec<String> = causes.iter().map(Cause::error_text).collect();
        assert_eq!(texts, expected);
    }
}
