//! Rules of `coordination.k8s.io` Leases, from `pkg/apis/coordination/validation/validation.go`
//! (`ValidateLease`, `ValidateLeaseSpec`, `ValidateLeaseUpdate`).

use serde_json::Value;

use super::str_of;
use crate::rules::validation::Cause;

/// The causes of creating a Lease (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "Lease" => lease_spec(&obj["spec"]),
        _ => Vec::new(),
    }
}

/// The causes of updating a Lease (`ValidateLeaseUpdate` validates the new spec).
pub fn update_causes(kind: &str, _old: &Value, new: &Value) -> Vec<Cause> {
    create_causes(kind, new)
}

/// `ValidateLeaseSpec`: positive duration, non-negative transitions, a known strategy that a
/// preferred holder needs.
fn lease_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(n) = spec["leaseDurationSeconds"].as_i64() {
        if n <= 0 {
            causes.push(Cause::invalid(
                "spec.leaseDurationSeconds",
                &Value::from(n),
                "must be greater than 0",
            ));
        }
    }
    if let Some(n) = spec["leaseTransitions"].as_i64() {
        if n < 0 {
            causes.push(Cause::invalid(
                "spec.leaseTransitions",
                &Value::from(n),
                "must be greater than or equal to 0",
            ));
        }
    }
    let strategy = str_of(spec, "strategy");
    if !strategy.is_empty() && strategy != "OldestEmulationVersion" {
        causes.push(Cause::not_supported(
            "spec.strategy",
            &Value::from(strategy),
            &["OldestEmulationVersion".into()],
        ));
    }
    if !str_of(spec, "preferredHolder").is_empty() && strategy.is_empty() {
        causes.push(Cause::forbidden(
            "spec.preferredHolder",
            "may only be specified if `strategy` is defined",
        ));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::ok(json!({"holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 0}), vec![])]
    #[case::zero_duration(json!({"leaseDurationSeconds": 0}), vec!["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"])]
    #[case::negative_transitions(json!({"leaseTransitions": -1}), vec!["spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"])]
    #[case::preferred_without_strategy(json!({"preferredHolder": "b"}), vec!["spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"])]
    #[case::unknown_strategy(json!({"strategy": "Newest"}), vec!["spec.strategy: Unsupported value: \"Newest\": supported values: \"OldestEmulationVersion\""])]
    fn lease_specs(#[case] spec: Value, #[case] errors: Vec<&str>) {
        let got: Vec<String> = create_causes("Lease", &json!({"spec": spec}))
            .iter()
            .map(Cause::error_text)
            .collect();
        assert_eq!(got, errors);
    }
}
