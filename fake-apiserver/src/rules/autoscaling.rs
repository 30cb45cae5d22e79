//! Rules of `autoscaling/v2` HorizontalPodAutoscalers as a v1.36 server applies them: the v2
//! defaults (`pkg/apis/autoscaling/v2/defaults.go`), the validation of
//! `pkg/apis/autoscaling/validation/validation.go` with the options the registry strategy
//! (`pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go`) passes, and what that
//! strategy keeps from the stored object.
//!
//! Feature gates as 1.36 ships them: `HPAScaleToZero` is alpha (off), so `minReplicas` is at
//! least 1 unless the stored object already had 0; `HPAConfigurableTolerance` is beta (on), so
//! `behavior.scale{Up,Down}.tolerance` is kept; `HPAGeneration` does not exist yet (1.37), so
//! `metadata.generation` is not maintained.

use serde_json::{json, Value};

pub mod v1_conversion;

use super::quantity::Quantity;
use super::str_of;
use crate::rules::validation::{is_dns1123_label, validate_path_segment_name, Cause};

/// `MaxPeriodSeconds`: the longest scaling policy period.
const MAX_PERIOD_SECONDS: i64 = 1800;
/// `MaxStabilizationWindowSeconds`: the longest stabilization window.
const MAX_STABILIZATION_WINDOW_SECONDS: i64 = 3600;
/// `validMetricSourceTypesList` (a sorted set).
const METRIC_SOURCE_TYPES: &[&str] = &[
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];
/// `validSelectPolicyTypesList` (a sorted set).
const SELECT_POLICIES: &[&str] = &["Disabled", "Max", "Min"];
/// `validPolicyTypesList` (a sorted set).
const POLICY_TYPES: &[&str] = &["Percent", "Pods"];
/// `autoscaling.DefaultCPUUtilization`.
const DEFAULT_CPU_UTILIZATION: i64 = 80;

/// `SetDefaults_HorizontalPodAutoscaler` (v2): one replica at least, CPU at 80% when no metric
/// is given, and every scaling rule of a given `behavior` completed from the defaults.
pub fn default_hpa(hpa: &mut Value) {
    let Some(spec) = hpa.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec.get("minReplicas").is_none_or(Value::is_null) {
        spec.insert("minReplicas".into(), json!(1));
    }
    if spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]),
        );
    }
    if let Some(behavior) = spec.get_mut("behavior").and_then(Value::as_object_mut) {
        // `GenerateHPAScaleUpRules`: the old HPA's behaviour, 4 pods or 100% per 15 s.
        let scale_up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        // `GenerateHPAScaleDownRules`: no window (the controller's flag decides), 100% per 15 s.
        let scale_down = json!({"selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        for (direction, defaults) in [("scaleUp", scale_up), ("scaleDown", scale_down)] {
            let rules = behavior.get(direction).filter(|r| !r.is_null());
            let completed = copy_scaling_rules(rules, defaults);
            behavior.insert(direction.into(), completed);
        }
    }
}

/// `copyHPAScalingRules`: the set fields of `from` over the defaults.
fn copy_scaling_rules(from: Option<&Value>, mut to: Value) -> Value {
    let Some(from) = from else {
        return to;
    };
    for field in [
        "selectPolicy",
        "stabilizationWindowSeconds",
        "policies",
        "tolerance",
    ] {
        if let Some(v) = from.get(field).filter(|v| !v.is_null()) {
            to[field] = v.clone();
        }
    }
    to
}

/// The causes of creating an `autoscaling` object of `kind` (beyond metadata).
pub fn create_causes(kind: &str, hpa: &Value) -> Vec<Cause> {
    if kind != "HorizontalPodAutoscaler" {
        return Vec::new();
    }
    spec_causes(&hpa["spec"], &Options::for_write(hpa, None))
}

/// The causes of updating an `autoscaling` object of `kind`: the spec validated again with the
/// stored object's allowances, or for a status write the status counters.
pub fn update_causes(kind: &str, old: &Value, new: &Value, status: bool) -> Vec<Cause> {
    if kind != "HorizontalPodAutoscaler" {
        return Vec::new();
    }
    if status {
        // `ValidateHorizontalPodAutoscalerStatusUpdate`.
        let mut causes = Vec::new();
        for field in ["currentReplicas", "desiredReplicas"] {
            super::nonnegative(
                &mut causes,
                new["status"].get(field),
                &format!("status.{field}"),
            );
        }
        return causes;
    }
    spec_causes(&new["spec"], &Options::for_write(new, Some(old)))
}

/// `CrossVersionObjectReferenceValidationOptions`.
#[derive(Debug, Clone, Copy)]
struct ReferenceOptions {
    allow_invalid_api_version: bool,
    allow_empty_api_group: bool,
}

/// `HorizontalPodAutoscalerSpecValidationOptions`.
#[derive(Debug, Clone, Copy)]
struct Options {
    min_replicas_lower_bound: i64,
    scale_target_ref: ReferenceOptions,
    object_metrics: ReferenceOptions,
}

impl Options {
    /// `validationOptionsForHorizontalPodAutoscaler` with `HPAScaleToZero` off.
    fn for_write(new: &Value, old: Option<&Value>) -> Self {
        let mut opts = Options {
            min_replicas_lower_bound: 1,
            scale_target_ref: ReferenceOptions {
                allow_invalid_api_version: false,
                allow_empty_api_group: false,
            },
            object_metrics: ReferenceOptions {
                allow_invalid_api_version: false,
                allow_empty_api_group: true,
            },
        };
        if old.is_some_and(|o| o["spec"]["minReplicas"].as_i64() == Some(0)) {
            opts.min_replicas_lower_bound = 0;
        }
        let new_ref = &new["spec"]["scaleTargetRef"];
        let old_ref = old.map(|o| &o["spec"]["scaleTargetRef"]);
        if old_ref.is_some_and(|o| {
            str_of(o, "apiVersion") == str_of(new_ref, "apiVersion")
                && str_of(o, "kind") == str_of(new_ref, "kind")
        }) {
            // An update that keeps the target's kind and apiVersion is not held to the check.
            opts.scale_target_ref.allow_invalid_api_version = true;
        } else if str_of(new_ref, "kind") == "ReplicationController" {
            // The one scalable kind of the core group.
            opts.scale_target_ref.allow_empty_api_group = true;
        }
        if let Some(old) = old {
            let stored_invalid = metrics(&old["spec"]).iter().any(|m| {
                str_of(m, "type") == "Object"
                    && m.get("object").is_some_and(|o| {
                        api_version_error(&o["describedObject"], opts.object_metrics).is_some()
                    })
            });
            if stored_invalid {
                opts.object_metrics.allow_invalid_api_version = true;
            }
        }
        opts
    }
}

fn metrics(spec: &Value) -> &[Value] {
    spec["metrics"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// `validateHorizontalPodAutoscalerSpec`.
fn spec_causes(spec: &Value, opts: &Options) -> Vec<Cause> {
    let mut causes = Vec::new();
    let min = spec["minReplicas"].as_i64();
    let max = spec["maxReplicas"].as_i64().unwrap_or(0);
    if let Some(min) = min.filter(|m| *m < opts.min_replicas_lower_bound) {
        causes.push(Cause::invalid(
            "spec.minReplicas",
            &json!(min),
            &format!(
                "must be greater than or equal to {}",
                opts.min_replicas_lower_bound
            ),
        ));
    }
    if max < 1 {
        causes.push(Cause::invalid(
            "spec.maxReplicas",
            &json!(max),
            "must be greater than 0",
        ));
    }
    if min.is_some_and(|min| max < min) {
        causes.push(Cause::invalid(
            "spec.maxReplicas",
            &json!(max),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    causes.extend(reference_causes(
        &spec["scaleTargetRef"],
        "spec.scaleTargetRef",
        opts.scale_target_ref,
    ));
    causes.extend(metrics_causes(spec, min, opts.object_metrics));
    if let Some(behavior) = spec.get("behavior").filter(|b| b.is_object()) {
        for direction in ["scaleUp", "scaleDown"] {
            if let Some(rules) = behavior.get(direction).filter(|r| r.is_object()) {
                causes.extend(scaling_rules_causes(
                    rules,
                    &format!("spec.behavior.{direction}"),
                ));
            }
        }
    }
    causes
}

/// `ValidateCrossVersionObjectReference`: kind and name are path segments, the apiVersion
/// names a group unless the options allow otherwise.
fn reference_causes(reference: &Value, path: &str, opts: ReferenceOptions) -> Vec<Cause> {
    let mut causes = Vec::new();
    for field in ["kind", "name"] {
        let value = str_of(reference, field);
        if value.is_empty() {
            causes.push(Cause::required(format!("{path}.{field}"), ""));
        } else {
            for msg in validate_path_segment_name(value) {
                causes.push(Cause::invalid_str(format!("{path}.{field}"), value, &msg));
            }
        }
    }
    if let Some(msg) = api_version_error(reference, opts) {
        causes.push(Cause::invalid_str(
            format!("{path}.apiVersion"),
            str_of(reference, "apiVersion"),
            &msg,
        ));
    }
    causes
}

/// `ValidateAPIVersion`: the apiVersion parses (`schema.ParseGroupVersion`) and names a group.
fn api_version_error(reference: &Value, opts: ReferenceOptions) -> Option<String> {
    if opts.allow_invalid_api_version {
        return None;
    }
    let api_version = str_of(reference, "apiVersion");
    let group = match api_version.matches('/').count() {
        _ if api_version.is_empty() || api_version == "/" => "",
        0 => "",
        1 => api_version
            .split_once('/')
            .map(|(g, _)| g)
            .unwrap_or_default(),
        _ => return Some(format!("unexpected GroupVersion string: {api_version}")),
    };
    (!opts.allow_empty_api_group && group.is_empty())
        .then(|| "apiVersion must specify API group".to_string())
}

/// `validateMetrics`, with the scale-to-zero rule: `minReplicas: 0` needs an Object or External
/// metric.
fn metrics_causes(spec: &Value, min: Option<i64>, opts: ReferenceOptions) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut object_or_external = false;
    for (i, metric) in metrics(spec).iter().enumerate() {
        causes.extend(metric_causes(metric, &format!("spec.metrics[{i}]"), opts));
        object_or_external |= matches!(str_of(metric, "type"), "Object" | "External");
    }
    if min == Some(0) && !object_or_external {
        causes.push(Cause::forbidden(
            "spec.metrics",
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    causes
}

/// `validateMetricSpec`: a known type, its source present and the only one.
fn metric_causes(metric: &Value, path: &str, opts: ReferenceOptions) -> Vec<Cause> {
    let mut causes = Vec::new();
    let kind = str_of(metric, "type");
    let supported: Vec<String> = METRIC_SOURCE_TYPES.iter().map(|s| s.to_string()).collect();
    if kind.is_empty() {
        causes.push(Cause::required(
            format!("{path}.type"),
            "must specify a metric source type",
        ));
    }
    if !METRIC_SOURCE_TYPES.contains(&kind) {
        causes.push(Cause::not_supported(
            format!("{path}.type"),
            &json!(kind),
            &supported,
        ));
    }
    let mut present: Vec<&str> = Vec::new();
    for field in [
        "object",
        "external",
        "pods",
        "resource",
        "containerResource",
    ] {
        let Some(source) = metric.get(field).filter(|s| !s.is_null()) else {
            continue;
        };
        present.push(field);
        if present.len() > 1 {
            continue;
        }
        let at = format!("{path}.{field}");
        causes.extend(match field {
            "object" => object_source(source, &at, opts),
            "external" => external_source(source, &at),
            "pods" => pods_source(source, &at),
            "resource" => resource_source(source, &at),
            _ => container_resource_source(source, &at),
        });
    }
    let expected = match kind {
        "Object" => Some("object"),
        "Pods" => Some("pods"),
        "Resource" => Some("resource"),
        "External" => Some("external"),
        "ContainerResource" => Some("containerResource"),
        _ => None,
    };
    match expected {
        Some(field) if !present.contains(&field) => causes.push(Cause::required(
            format!("{path}.{field}"),
            "must populate information for the given metric source",
        )),
        Some(_) => {}
        None => causes.push(Cause::not_supported(
            format!("{path}.type"),
            &json!(kind),
            &supported,
        )),
    }
    if present.len() != 1 {
        // Go ranges over a set here; the order of these causes follows the source fields.
        for field in present.iter().filter(|f| Some(**f) != expected) {
            causes.push(Cause::forbidden(
                format!("{path}.{field}"),
                "must populate the given metric source only",
            ));
        }
    }
    causes
}

fn object_source(source: &Value, path: &str, opts: ReferenceOptions) -> Vec<Cause> {
    let mut causes = reference_causes(
        &source["describedObject"],
        &format!("{path}.describedObject"),
        opts,
    );
    causes.extend(metric_identifier(
        &source["metric"],
        &format!("{path}.metric"),
    ));
    let target = &source["target"];
    causes.extend(metric_target(target, &format!("{path}.target")));
    if is_unset(target, "value") && is_unset(target, "averageValue") {
        causes.push(Cause::required(
            format!("{path}.target.averageValue"),
            "must set either a target value or averageValue",
        ));
    }
    causes
}

fn external_source(source: &Value, path: &str) -> Vec<Cause> {
    let mut causes = metric_identifier(&source["metric"], &format!("{path}.metric"));
    let target = &source["target"];
    causes.extend(metric_target(target, &format!("{path}.target")));
    if is_unset(target, "value") && is_unset(target, "averageValue") {
        causes.push(Cause::required(
            format!("{path}.target.averageValue"),
            "must set either a target value for metric or a per-pod target",
        ));
    }
    if !is_unset(target, "value") && !is_unset(target, "averageValue") {
        causes.push(Cause::forbidden(
            format!("{path}.target.value"),
            "may not set both a target value for metric and a per-pod target",
        ));
    }
    causes
}

fn pods_source(source: &Value, path: &str) -> Vec<Cause> {
    let mut causes = metric_identifier(&source["metric"], &format!("{path}.metric"));
    let target = &source["target"];
    causes.extend(metric_target(target, &format!("{path}.target")));
    if is_unset(target, "averageValue") {
        causes.push(Cause::required(
            format!("{path}.target.averageValue"),
            "must specify a positive target averageValue",
        ));
    }
    causes
}

fn resource_source(source: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if str_of(source, "name").is_empty() {
        causes.push(Cause::required(
            format!("{path}.name"),
            "must specify a resource name",
        ));
    }
    causes.extend(utilization_target(&source["target"], path));
    causes
}

fn container_resource_source(source: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let name = str_of(source, "name");
    if name.is_empty() {
        causes.push(Cause::required(
            format!("{path}.name"),
            "must specify a resource name",
        ));
    } else {
        // `ValidateContainerResourceName`: a standard name or a qualified one.
        causes.extend(super::core::pod_spec::container_resource_name(
            name,
            &format!("{path}.name"),
        ));
    }
    let container = str_of(source, "container");
    if container.is_empty() {
        causes.push(Cause::required(
            format!("{path}.container"),
            "must specify a container",
        ));
    } else {
        for msg in is_dns1123_label(container) {
            causes.push(Cause::invalid_str(
                format!("{path}.container"),
                container,
                &msg,
            ));
        }
    }
    causes.extend(utilization_target(&source["target"], path));
    causes
}

/// The target of a Resource or ContainerResource source: a raw value or a utilization, not
/// both.
fn utilization_target(target: &Value, path: &str) -> Vec<Cause> {
    let mut causes = metric_target(target, &format!("{path}.target"));
    let utilization = !is_unset(target, "averageUtilization");
    let value = !is_unset(target, "averageValue");
    if !utilization && !value {
        causes.push(Cause::required(
            format!("{path}.target.averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if utilization && value {
        causes.push(Cause::forbidden(
            format!("{path}.target.averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
    causes
}

/// `validateMetricTarget`.
fn metric_target(target: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let kind = str_of(target, "type");
    if kind.is_empty() {
        causes.push(Cause::required(
            format!("{path}.type"),
            "must specify a metric target type",
        ));
    }
    if !matches!(kind, "Utilization" | "Value" | "AverageValue") {
        causes.push(Cause::invalid_str(
            format!("{path}.type"),
            kind,
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for field in ["value", "averageValue"] {
        if let Some(q) = target.get(field).filter(|v| !v.is_null()) {
            if Quantity::from_value(q).is_none_or(|q| q.nanos() <= 0) {
                causes.push(Cause::invalid(
                    format!("{path}.{field}"),
                    q,
                    "must be positive",
                ));
            }
        }
    }
    if let Some(u) = target["averageUtilization"].as_i64().filter(|u| *u < 1) {
        causes.push(Cause::invalid(
            format!("{path}.averageUtilization"),
            &json!(u),
            "must be greater than 0",
        ));
    }
    causes
}

/// `validateMetricIdentifier`.
fn metric_identifier(id: &Value, path: &str) -> Vec<Cause> {
    let name = str_of(id, "name");
    if name.is_empty() {
        return vec![Cause::required(
            format!("{path}.name"),
            "must specify a metric name",
        )];
    }
    validate_path_segment_name(name)
        .iter()
        .map(|msg| Cause::invalid_str(format!("{path}.name"), name, msg))
        .collect()
}

/// `validateScalingRules`.
fn scaling_rules_causes(rules: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(window) = rules["stabilizationWindowSeconds"].as_i64() {
        if window < 0 {
            causes.push(Cause::invalid(
                format!("{path}.stabilizationWindowSeconds"),
                &json!(window),
                "must be greater than or equal to zero",
            ));
        }
        if window > MAX_STABILIZATION_WINDOW_SECONDS {
            causes.push(Cause::invalid(
                format!("{path}.stabilizationWindowSeconds"),
                &json!(window),
                &format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(policy) = rules["selectPolicy"].as_str() {
        if !SELECT_POLICIES.contains(&policy) {
            let valid: Vec<String> = SELECT_POLICIES.iter().map(|s| s.to_string()).collect();
            causes.push(Cause::not_supported(
                format!("{path}.selectPolicy"),
                &json!(policy),
                &valid,
            ));
        }
    }
    let policies = rules["policies"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if policies.is_empty() {
        causes.push(Cause::required(
            format!("{path}.policies"),
            "must specify at least one Policy",
        ));
    }
    for (i, policy) in policies.iter().enumerate() {
        causes.extend(scaling_policy_causes(
            policy,
            &format!("{path}.policies[{i}]"),
        ));
    }
    if let Some(tolerance) = rules.get("tolerance").filter(|t| !t.is_null()) {
        // `ValidateNonnegativeQuantity`.
        if Quantity::from_value(tolerance).is_some_and(|q| q.is_negative()) {
            causes.push(Cause::invalid(
                format!("{path}.tolerance"),
                tolerance,
                "must be greater than or equal to 0",
            ));
        }
    }
    causes
}

/// `validateScalingPolicy`.
fn scaling_policy_causes(policy: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let kind = str_of(policy, "type");
    if !POLICY_TYPES.contains(&kind) {
        let valid: Vec<String> = POLICY_TYPES.iter().map(|s| s.to_string()).collect();
        causes.push(Cause::not_supported(
            format!("{path}.type"),
            &json!(kind),
            &valid,
        ));
    }
    let value = policy["value"].as_i64().unwrap_or(0);
    if value <= 0 {
        causes.push(Cause::invalid(
            format!("{path}.value"),
            &json!(value),
            "must be greater than zero",
        ));
    }
    let period = policy["periodSeconds"].as_i64().unwrap_or(0);
    if period <= 0 {
        causes.push(Cause::invalid(
            format!("{path}.periodSeconds"),
            &json!(period),
            "must be greater than zero",
        ));
    }
    if period > MAX_PERIOD_SECONDS {
        causes.push(Cause::invalid(
            format!("{path}.periodSeconds"),
            &json!(period),
            &format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
        ));
    }
    causes
}

/// Whether an optional field is absent (or null, which Go decodes as a nil pointer).
fn is_unset(v: &Value, field: &str) -> bool {
    v.get(field).is_none_or(Value::is_null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn hpa(spec: Value) -> Value {
        let mut spec = spec;
        if spec.get("scaleTargetRef").is_none() {
            spec["scaleTargetRef"] =
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"});
        }
        if spec.get("maxReplicas").is_none() {
            spec["maxReplicas"] = json!(3);
        }
        json!({"metadata": {"name": "h"}, "spec": spec})
    }

    fn errors(causes: &[Cause]) -> Vec<String> {
        causes.iter().map(Cause::error_text).collect()
    }

    #[rstest]
    #[case::valid(json!({"minReplicas": 1}), &[])]
    #[case::no_group(json!({"scaleTargetRef": {"apiVersion": "v1", "kind": "Deployment", "name": "web"}}),
        &["spec.scaleTargetRef.apiVersion: Invalid value: \"v1\": apiVersion must specify API group"])]
    #[case::bad_group_version(json!({"scaleTargetRef": {"apiVersion": "a/b/c", "kind": "Deployment", "name": "web"}}),
        &["spec.scaleTargetRef.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c"])]
    #[case::replication_controller(json!({"scaleTargetRef": {"apiVersion": "v1", "kind": "ReplicationController", "name": "web"}}), &[])]
    #[case::path_segments(json!({"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "a/b", "name": ".."}}),
        &["spec.scaleTargetRef.kind: Invalid value: \"a/b\": may not contain '/'",
          "spec.scaleTargetRef.name: Invalid value: \"..\": may not be '..'"])]
    #[case::object_metric_without_group(json!({"metrics": [{"type": "Object", "object": {
        "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "s"},
        "metric": {"name": "rps"}, "target": {"type": "Value", "value": "10"}}}]}), &[])]
    #[case::object_target_required(json!({"metrics": [{"type": "Object", "object": {
        "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "s"},
        "metric": {"name": "rps"}, "target": {"type": "Value"}}}]}),
        &["spec.metrics[0].object.target.averageValue: Required value: must set either a target value or averageValue"])]
    #[case::external_both(json!({"metrics": [{"type": "External", "external": {
        "metric": {"name": "queue"}, "target": {"type": "Value", "value": "1", "averageValue": "0"}}}]}),
        &["spec.metrics[0].external.target.averageValue: Invalid value: \"0\": must be positive",
          "spec.metrics[0].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target"])]
    #[case::container_resource(json!({"metrics": [{"type": "ContainerResource", "containerResource": {
        "name": "cpu", "container": "Web", "target": {"type": "Utilization", "averageUtilization": 0}}}]}),
        &["spec.metrics[0].containerResource.container: Invalid value: \"Web\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
          "spec.metrics[0].containerResource.target.averageUtilization: Invalid value: 0: must be greater than 0"])]
    #[case::empty_policies(json!({"behavior": {"scaleDown": {"policies": []}}}),
        &["spec.behavior.scaleDown.policies: Required value: must specify at least one Policy"])]
    fn creates_are_validated(#[case] spec: Value, #[case] expected: &[&str]) {
        assert_eq!(
            errors(&create_causes("HorizontalPodAutoscaler", &hpa(spec))),
            expected
        );
    }

    #[test]
    fn an_update_keeps_what_the_stored_object_was_allowed() {
        // Scale-to-zero objects written while the gate was on stay writable.
        let old = hpa(
            json!({"minReplicas": 0, "metrics": [{"type": "External", "external": {
            "metric": {"name": "queue"}, "target": {"type": "Value", "value": "1"}}}]}),
        );
        let mut new = old.clone();
        new["spec"]["maxReplicas"] = json!(4);
        assert!(update_causes("HorizontalPodAutoscaler", &old, &new, false).is_empty());
        assert_eq!(
            errors(&create_causes("HorizontalPodAutoscaler", &new)),
            ["spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"]
        );
        // A target whose kind and apiVersion do not change is not checked again.
        let old = hpa(
            json!({"scaleTargetRef": {"apiVersion": "v1", "kind": "Deployment", "name": "web"}}),
        );
        let mut new = old.clone();
        new["spec"]["maxReplicas"] = json!(5);
        assert!(update_causes("HorizontalPodAutoscaler", &old, &new, false).is_empty());
        new["spec"]["scaleTargetRef"]["kind"] = json!("StatefulSet");
        assert_eq!(
            errors(&update_causes("HorizontalPodAutoscaler", &old, &new, false)),
            ["spec.scaleTargetRef.apiVersion: Invalid value: \"v1\": apiVersion must specify API group"]
        );
    }

    #[test]
    fn defaults_complete_the_spec_and_each_scaling_rule() {
        let mut object = hpa(json!({"behavior": {"scaleUp": {"selectPolicy": "Min"}}}));
        default_hpa(&mut object);
        let spec = &object["spec"];
        assert_eq!(spec["minReplicas"], 1);
        assert_eq!(
            spec["metrics"][0]["resource"]["target"]["averageUtilization"],
            80
        );
        assert_eq!(spec["behavior"]["scaleUp"]["selectPolicy"], "Min");
        assert_eq!(spec["behavior"]["scaleUp"]["stabilizationWindowSeconds"], 0);
        assert_eq!(
            spec["behavior"]["scaleUp"]["policies"]
                .as_array()
                .map(Vec::len),
            Some(2)
        );
        assert!(spec["behavior"]["scaleDown"]
            .get("stabilizationWindowSeconds")
            .is_none());
        // No behaviour: none is made up.
        let mut plain = hpa(json!({}));
        default_hpa(&mut plain);
        assert!(plain["spec"].get("behavior").is_none());
    }
}
