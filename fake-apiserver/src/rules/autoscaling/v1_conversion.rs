//! `autoscaling/v1` HorizontalPodAutoscalers as views of the stored `autoscaling/v2` ones, as
//! `pkg/apis/autoscaling/v1/conversion.go` converts them: the CPU utilization target is v1's
//! `targetCPUUtilizationPercentage`; every other metric, the current metrics, the conditions
//! and the behaviour travel in annotations (`autoscaling.alpha.kubernetes.io/*`) so that a v1
//! client's read-modify-write keeps them.
//!
//! The annotations hold Go's `json.Marshal` of the v1 types (field order, `omitempty`), except
//! the behaviour, which upstream marshals from its internal type: field names as declared in
//! Go (`{"ScaleUp":{"StabilizationWindowSeconds":0,...}}`), every field written.

use serde_json::{json, Map, Value};

/// `autoscaling.MetricSpecsAnnotation`.
pub const METRIC_SPECS: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// `autoscaling.MetricStatusesAnnotation`.
pub const METRIC_STATUSES: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
/// `autoscaling.HorizontalPodAutoscalerConditionsAnnotation`.
pub const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// `autoscaling.BehaviorSpecsAnnotation`.
pub const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";

/// A stored (v2) HorizontalPodAutoscaler as `autoscaling/v1` serves it.
pub fn to_v1(v2: &Value) -> Value {
    let spec = &v2["spec"];
    let status = &v2["status"];
    let metrics = arr(&spec["metrics"]);
    let mut out = v2.as_object().cloned().unwrap_or_default();

    let mut v1_spec = Map::new();
    v1_spec.insert("scaleTargetRef".into(), reference(&spec["scaleTargetRef"]));
    copy(spec, &mut v1_spec, "minReplicas");
    v1_spec.insert("maxReplicas".into(), int_or_zero(&spec["maxReplicas"]));
    // The first CPU metric decides, whether or not it is a utilization.
    if let Some(cpu) = metrics.iter().find(|m| is_resource(m, "cpu")) {
        if let Some(u) = non_null(&cpu["resource"]["target"]["averageUtilization"]) {
            v1_spec.insert("targetCPUUtilizationPercentage".into(), u.clone());
        }
    }
    out.insert("spec".into(), Value::Object(v1_spec));

    let mut v1_status = Map::new();
    copy(status, &mut v1_status, "observedGeneration");
    copy(status, &mut v1_status, "lastScaleTime");
    v1_status.insert(
        "currentReplicas".into(),
        int_or_zero(&status["currentReplicas"]),
    );
    v1_status.insert(
        "desiredReplicas".into(),
        int_or_zero(&status["desiredReplicas"]),
    );
    let current = arr(&status["currentMetrics"]);
    // Every CPU utilization is read; the last one stays.
    for metric in current.iter().filter(|m| is_resource(m, "cpu")) {
        if let Some(u) = non_null(&metric["resource"]["current"]["averageUtilization"]) {
            v1_status.insert("currentCPUUtilizationPercentage".into(), u.clone());
        }
    }
    out.insert("status".into(), Value::Object(v1_status));

    let other: Vec<String> = metrics
        .iter()
        .filter(|m| {
            !(is_resource(m, "cpu")
                && non_null(&m["resource"]["target"]["averageUtilization"]).is_some())
        })
        .map(metric_spec_to_v1)
        .collect();
    let conditions = arr(&status["conditions"]);
    let mut annotations: Vec<(&str, String)> = Vec::new();
    if !other.is_empty() {
        annotations.push((METRIC_SPECS, format!("[{}]", other.join(","))));
    }
    if !current.is_empty() {
        let list: Vec<String> = current.iter().map(metric_status_to_v1).collect();
        annotations.push((METRIC_STATUSES, format!("[{}]", list.join(","))));
    }
    if !conditions.is_empty() {
        let list: Vec<String> = conditions.iter().map(condition_to_v1).collect();
        annotations.push((CONDITIONS, format!("[{}]", list.join(","))));
    }
    if let Some(behavior) = non_null(&spec["behavior"]) {
        annotations.push((BEHAVIOR, internal_behavior(behavior)));
    }
    if !annotations.is_empty() {
        let metadata = out.entry("metadata").or_insert_with(|| json!({}));
        if !metadata["annotations"].is_object() {
            metadata["annotations"] = json!({});
        }
        for (key, value) in annotations {
            metadata["annotations"][key] = Value::String(value);
        }
    }
    Value::Object(out)
}

/// An `autoscaling/v1` HorizontalPodAutoscaler as the v2 object it is stored as; the
/// round-tripping annotations become fields again and are dropped. The `apiVersion` becomes
/// `autoscaling/v2`.
pub fn from_v1(v1: &Value) -> Value {
    let spec = &v1["spec"];
    let status = &v1["status"];
    let mut out = v1.as_object().cloned().unwrap_or_default();
    if out.contains_key("apiVersion") {
        out.insert("apiVersion".into(), json!("autoscaling/v2"));
    }
    let annotation = |key: &str| v1["metadata"]["annotations"][key].as_str();
    let mut consumed: Vec<&str> = Vec::new();

    let mut v2_spec = Map::new();
    v2_spec.insert("scaleTargetRef".into(), reference(&spec["scaleTargetRef"]));
    copy(spec, &mut v2_spec, "minReplicas");
    v2_spec.insert("maxReplicas".into(), int_or_zero(&spec["maxReplicas"]));
    let cpu = non_null(&spec["targetCPUUtilizationPercentage"]).map(|u| {
        json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": u}}})
    });
    let mut metrics: Vec<Value> = cpu.iter().cloned().collect();
    if let Some(list) = annotation(METRIC_SPECS).and_then(parse_list) {
        // The annotation's metrics first, then the CPU target.
        metrics = list.iter().map(metric_spec_from_v1).chain(cpu).collect();
        consumed.push(METRIC_SPECS);
    }
    if metrics.is_empty() {
        // v1 used to leave the default to the controller; the conversion makes it explicit.
        metrics.push(json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}));
    }
    v2_spec.insert("metrics".into(), Value::Array(metrics));
    if let Some(behavior) = annotation(BEHAVIOR) {
        if let Some(b) = serde_json::from_str::<Value>(behavior)
            .ok()
            .and_then(|b| behavior_from_internal(&b))
        {
            v2_spec.insert("behavior".into(), b);
        }
        consumed.push(BEHAVIOR);
    }
    out.insert("spec".into(), Value::Object(v2_spec));

    let mut v2_status = Map::new();
    copy(status, &mut v2_status, "observedGeneration");
    copy(status, &mut v2_status, "lastScaleTime");
    copy(status, &mut v2_status, "currentReplicas");
    v2_status.insert(
        "desiredReplicas".into(),
        int_or_zero(&status["desiredReplicas"]),
    );
    if let Some(u) = non_null(&status["currentCPUUtilizationPercentage"]) {
        v2_status.insert(
            "currentMetrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": u}}}]),
        );
    }
    if let Some(list) = annotation(METRIC_STATUSES).and_then(parse_list) {
        let current: Vec<Value> = list.iter().map(metric_status_from_v1).collect();
        v2_status.insert("currentMetrics".into(), Value::Array(current));
        consumed.push(METRIC_STATUSES);
    }
    if let Some(list) = annotation(CONDITIONS).and_then(parse_list) {
        v2_status.insert("conditions".into(), Value::Array(list));
        consumed.push(CONDITIONS);
    }
    out.insert("status".into(), Value::Object(v2_status));

    if let Some(annotations) = out
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        for key in consumed {
            annotations.remove(key);
        }
        if annotations.is_empty() {
            if let Some(m) = out.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("annotations");
            }
        }
    }
    Value::Object(out)
}

fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn non_null(v: &Value) -> Option<&Value> {
    (!v.is_null()).then_some(v)
}

fn copy(from: &Value, to: &mut Map<String, Value>, field: &str) {
    if let Some(v) = non_null(&from[field]) {
        to.insert(field.into(), v.clone());
    }
}

fn int_or_zero(v: &Value) -> Value {
    non_null(v).cloned().unwrap_or(json!(0))
}

fn is_resource(metric: &Value, name: &str) -> bool {
    metric["type"] == "Resource" && metric["resource"]["name"] == name
}

/// A `CrossVersionObjectReference` (kind and name always, apiVersion when set).
fn reference(r: &Value) -> Value {
    let mut out = Map::new();
    out.insert("kind".into(), json!(r["kind"].as_str().unwrap_or_default()));
    out.insert("name".into(), json!(r["name"].as_str().unwrap_or_default()));
    if let Some(v) = r["apiVersion"].as_str().filter(|v| !v.is_empty()) {
        out.insert("apiVersion".into(), json!(v));
    }
    Value::Object(out)
}

fn parse_list(text: &str) -> Option<Vec<Value>> {
    serde_json::from_str::<Vec<Value>>(text).ok()
}

/// Go's `json.Marshal` of a struct: the fields in declaration order, `None` ones left out.
fn go_struct(fields: &[(&str, Option<String>)]) -> String {
    let body: Vec<String> = fields
        .iter()
        .filter_map(|(name, value)| value.as_ref().map(|v| format!("\"{name}\":{v}")))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// A JSON value as Go writes it (`None` for an absent, omitted field).
fn opt(v: &Value) -> Option<String> {
    non_null(v).map(go_value)
}

/// A required field: the value, or the type's zero value.
fn req(v: &Value, zero: &str) -> Option<String> {
    Some(opt(v).unwrap_or_else(|| zero.to_string()))
}

/// A JSON value with Go's key order for the types that appear here: label selectors put
/// `matchLabels` before `matchExpressions`, requirements `key`, `operator`, `values`; maps
/// sort their keys (as serde_json does).
fn go_value(v: &Value) -> String {
    match v {
        Value::Object(m) if m.contains_key("matchLabels") || m.contains_key("matchExpressions") => {
            let expressions = m
                .get("matchExpressions")
                .and_then(Value::as_array)
                .map(|list| {
                    let items: Vec<String> = list
                        .iter()
                        .map(|r| {
                            go_struct(&[
                                ("key", req(&r["key"], "\"\"")),
                                ("operator", req(&r["operator"], "\"\"")),
                                ("values", opt(&r["values"])),
                            ])
                        })
                        .collect();
                    format!("[{}]", items.join(","))
                });
            go_struct(&[
                ("matchLabels", m.get("matchLabels").and_then(opt_ref)),
                ("matchExpressions", expressions),
            ])
        }
        other => other.to_string(),
    }
}

fn opt_ref(v: &Value) -> Option<String> {
    opt(v)
}

fn reference_go(r: &Value) -> String {
    go_struct(&[
        ("kind", req(&r["kind"], "\"\"")),
        ("name", req(&r["name"], "\"\"")),
        (
            "apiVersion",
            r["apiVersion"]
                .as_str()
                .filter(|v| !v.is_empty())
                .map(|v| json!(v).to_string()),
        ),
    ])
}

/// `Convert_autoscaling_MetricSpec_To_v1_MetricSpec`, written as `json.Marshal` writes it.
fn metric_spec_to_v1(m: &Value) -> String {
    let source = |field: &str, f: fn(&Value) -> String| non_null(&m[field]).map(f);
    go_struct(&[
        ("type", req(&m["type"], "\"\"")),
        (
            "object",
            source("object", |o| {
                go_struct(&[
                    ("target", Some(reference_go(&o["describedObject"]))),
                    ("metricName", req(&o["metric"]["name"], "\"\"")),
                    ("targetValue", req(&o["target"]["value"], "\"0\"")),
                    ("selector", opt(&o["metric"]["selector"])),
                    ("averageValue", opt(&o["target"]["averageValue"])),
                ])
            }),
        ),
        (
            "pods",
            source("pods", |p| {
                go_struct(&[
                    ("metricName", req(&p["metric"]["name"], "\"\"")),
                    (
                        "targetAverageValue",
                        req(&p["target"]["averageValue"], "\"0\""),
                    ),
                    ("selector", opt(&p["metric"]["selector"])),
                ])
            }),
        ),
        (
            "resource",
            source("resource", |r| {
                go_struct(&[
                    ("name", req(&r["name"], "\"\"")),
                    (
                        "targetAverageUtilization",
                        opt(&r["target"]["averageUtilization"]),
                    ),
                    ("targetAverageValue", opt(&r["target"]["averageValue"])),
                ])
            }),
        ),
        (
            "containerResource",
            source("containerResource", |r| {
                go_struct(&[
                    ("name", req(&r["name"], "\"\"")),
                    (
                        "targetAverageUtilization",
                        opt(&r["target"]["averageUtilization"]),
                    ),
                    ("targetAverageValue", opt(&r["target"]["averageValue"])),
                    ("container", req(&r["container"], "\"\"")),
                ])
            }),
        ),
        (
            "external",
            source("external", |e| {
                go_struct(&[
                    ("metricName", req(&e["metric"]["name"], "\"\"")),
                    ("metricSelector", opt(&e["metric"]["selector"])),
                    ("targetValue", opt(&e["target"]["value"])),
                    ("targetAverageValue", opt(&e["target"]["averageValue"])),
                ])
            }),
        ),
    ])
}

/// `Convert_autoscaling_MetricStatus_To_v1_MetricStatus`, written as `json.Marshal` writes it.
fn metric_status_to_v1(m: &Value) -> String {
    let source = |field: &str, f: fn(&Value) -> String| non_null(&m[field]).map(f);
    go_struct(&[
        ("type", req(&m["type"], "\"\"")),
        (
            "object",
            source("object", |o| {
                go_struct(&[
                    ("target", Some(reference_go(&o["describedObject"]))),
                    ("metricName", req(&o["metric"]["name"], "\"\"")),
                    ("currentValue", req(&o["current"]["value"], "\"0\"")),
                    ("selector", opt(&o["metric"]["selector"])),
                    ("averageValue", opt(&o["current"]["averageValue"])),
                ])
            }),
        ),
        (
            "pods",
            source("pods", |p| {
                go_struct(&[
                    ("metricName", req(&p["metric"]["name"], "\"\"")),
                    (
                        "currentAverageValue",
                        req(&p["current"]["averageValue"], "\"0\""),
                    ),
                    ("selector", opt(&p["metric"]["selector"])),
                ])
            }),
        ),
        (
            "resource",
            source("resource", |r| {
                go_struct(&[
                    ("name", req(&r["name"], "\"\"")),
                    (
                        "currentAverageUtilization",
                        opt(&r["current"]["averageUtilization"]),
                    ),
                    (
                        "currentAverageValue",
                        req(&r["current"]["averageValue"], "\"0\""),
                    ),
                ])
            }),
        ),
        (
            "containerResource",
            source("containerResource", |r| {
                go_struct(&[
                    ("name", req(&r["name"], "\"\"")),
                    (
                        "currentAverageUtilization",
                        opt(&r["current"]["averageUtilization"]),
                    ),
                    (
                        "currentAverageValue",
                        req(&r["current"]["averageValue"], "\"0\""),
                    ),
                    ("container", req(&r["container"], "\"\"")),
                ])
            }),
        ),
        (
            "external",
            source("external", |e| {
                go_struct(&[
                    ("metricName", req(&e["metric"]["name"], "\"\"")),
                    ("metricSelector", opt(&e["metric"]["selector"])),
                    ("currentValue", req(&e["current"]["value"], "\"0\"")),
                    ("currentAverageValue", opt(&e["current"]["averageValue"])),
                ])
            }),
        ),
    ])
}

/// A v2 condition as v1's `HorizontalPodAutoscalerCondition` marshals (its
/// `lastTransitionTime` is a struct, so `omitempty` keeps a zero one as `null`).
fn condition_to_v1(c: &Value) -> String {
    go_struct(&[
        ("type", req(&c["type"], "\"\"")),
        ("status", req(&c["status"], "\"\"")),
        ("lastTransitionTime", req(&c["lastTransitionTime"], "null")),
        (
            "reason",
            c["reason"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(|s| json!(s).to_string()),
        ),
        (
            "message",
            c["message"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(|s| json!(s).to_string()),
        ),
    ])
}

/// `json.Marshal` of the internal `HorizontalPodAutoscalerBehavior` (no JSON tags: Go field
/// names, every field written, nil pointers as `null`).
fn internal_behavior(b: &Value) -> String {
    let rules = |r: &Value| -> String {
        if r.is_null() {
            return "null".into();
        }
        let policies = match r["policies"].as_array() {
            Some(list) => {
                let items: Vec<String> = list
                    .iter()
                    .map(|p| {
                        go_struct(&[
                            ("Type", req(&p["type"], "\"\"")),
                            ("Value", req(&p["value"], "0")),
                            ("PeriodSeconds", req(&p["periodSeconds"], "0")),
                        ])
                    })
                    .collect();
                format!("[{}]", items.join(","))
            }
            None => "null".into(),
        };
        go_struct(&[
            (
                "StabilizationWindowSeconds",
                req(&r["stabilizationWindowSeconds"], "null"),
            ),
            ("SelectPolicy", req(&r["selectPolicy"], "null")),
            ("Policies", Some(policies)),
            ("Tolerance", req(&r["tolerance"], "null")),
        ])
    };
    go_struct(&[
        ("ScaleUp", Some(rules(&b["scaleUp"]))),
        ("ScaleDown", Some(rules(&b["scaleDown"]))),
    ])
}

/// The internal behaviour of the annotation as v2's `behavior`; `None` for an empty one.
fn behavior_from_internal(b: &Value) -> Option<Value> {
    let rules = |r: &Value| -> Option<Value> {
        let r = r.as_object()?;
        let mut out = Map::new();
        let mut field = |go: &str, json: &str| {
            if let Some(v) = r.get(go).filter(|v| !v.is_null()) {
                out.insert(json.into(), v.clone());
            }
        };
        field("StabilizationWindowSeconds", "stabilizationWindowSeconds");
        field("SelectPolicy", "selectPolicy");
        field("Tolerance", "tolerance");
        if let Some(list) = r.get("Policies").and_then(Value::as_array) {
            let policies: Vec<Value> = list
                .iter()
                .map(|p| json!({"type": p["Type"], "value": p["Value"], "periodSeconds": p["PeriodSeconds"]}))
                .collect();
            out.insert("policies".into(), Value::Array(policies));
        }
        Some(Value::Object(out))
    };
    let mut out = Map::new();
    if let Some(up) = rules(&b["ScaleUp"]) {
        out.insert("scaleUp".into(), up);
    }
    if let Some(down) = rules(&b["ScaleDown"]) {
        out.insert("scaleDown".into(), down);
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// `Convert_v1_MetricSpec_To_autoscaling_MetricSpec` and the source conversions it calls.
fn metric_spec_from_v1(m: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), m["type"].clone());
    if let Some(o) = non_null(&m["object"]) {
        let mut target = json!({"type": if non_null(&o["averageValue"]).is_none() { "Value" } else { "AverageValue" },
            "value": non_null(&o["targetValue"]).cloned().unwrap_or(json!("0"))});
        put(&mut target, "averageValue", &o["averageValue"]);
        out.insert(
            "object".into(),
            json!({"describedObject": reference(&o["target"]), "metric": identifier(&o["metricName"], &o["selector"]), "target": target}),
        );
    }
    if let Some(p) = non_null(&m["pods"]) {
        out.insert(
            "pods".into(),
            json!({"metric": identifier(&p["metricName"], &p["selector"]),
                "target": {"type": "AverageValue",
                    "averageValue": non_null(&p["targetAverageValue"]).cloned().unwrap_or(json!("0"))}}),
        );
    }
    for field in ["resource", "containerResource"] {
        if let Some(r) = non_null(&m[field]) {
            let utilization = non_null(&r["targetAverageUtilization"]);
            let mut target =
                json!({"type": if utilization.is_none() { "AverageValue" } else { "Utilization" }});
            put(&mut target, "averageValue", &r["targetAverageValue"]);
            put(
                &mut target,
                "averageUtilization",
                &r["targetAverageUtilization"],
            );
            let mut source =
                json!({"name": r["name"].as_str().unwrap_or_default(), "target": target});
            if field == "containerResource" {
                source["container"] = json!(r["container"].as_str().unwrap_or_default());
            }
            out.insert(field.into(), source);
        }
    }
    if let Some(e) = non_null(&m["external"]) {
        let mut target = json!({"type": if non_null(&e["targetValue"]).is_none() { "AverageValue" } else { "Value" }});
        put(&mut target, "value", &e["targetValue"]);
        put(&mut target, "averageValue", &e["targetAverageValue"]);
        out.insert(
            "external".into(),
            json!({"metric": identifier(&e["metricName"], &e["metricSelector"]), "target": target}),
        );
    }
    Value::Object(out)
}

/// `Convert_v1_MetricStatus_To_autoscaling_MetricStatus` and the source conversions it calls.
fn metric_status_from_v1(m: &Value) -> Value {
    let zero = || json!("0");
    let mut out = Map::new();
    out.insert("type".into(), m["type"].clone());
    if let Some(o) = non_null(&m["object"]) {
        let mut current =
            json!({"value": non_null(&o["currentValue"]).cloned().unwrap_or_else(zero)});
        put(&mut current, "averageValue", &o["averageValue"]);
        out.insert(
            "object".into(),
            json!({"describedObject": reference(&o["target"]), "metric": identifier(&o["metricName"], &o["selector"]), "current": current}),
        );
    }
    if let Some(p) = non_null(&m["pods"]) {
        out.insert(
            "pods".into(),
            json!({"metric": identifier(&p["metricName"], &p["selector"]),
                "current": {"averageValue": non_null(&p["currentAverageValue"]).cloned().unwrap_or_else(zero)}}),
        );
    }
    for field in ["resource", "containerResource"] {
        if let Some(r) = non_null(&m[field]) {
            let mut current = json!({"averageValue": non_null(&r["currentAverageValue"]).cloned().unwrap_or_else(zero)});
            put(
                &mut current,
                "averageUtilization",
                &r["currentAverageUtilization"],
            );
            let mut source =
                json!({"name": r["name"].as_str().unwrap_or_default(), "current": current});
            if field == "containerResource" {
                source["container"] = json!(r["container"].as_str().unwrap_or_default());
            }
            out.insert(field.into(), source);
        }
    }
    if let Some(e) = non_null(&m["external"]) {
        let mut current =
            json!({"value": non_null(&e["currentValue"]).cloned().unwrap_or_else(zero)});
        put(&mut current, "averageValue", &e["currentAverageValue"]);
        out.insert(
            "external".into(),
            json!({"metric": identifier(&e["metricName"], &e["metricSelector"]), "current": current}),
        );
    }
    Value::Object(out)
}

/// A v2 `MetricIdentifier`.
fn identifier(name: &Value, selector: &Value) -> Value {
    let mut out = json!({"name": name.as_str().unwrap_or_default()});
    put(&mut out, "selector", selector);
    out
}

/// Sets `field` when `value` is set.
fn put(target: &mut Value, field: &str, value: &Value) {
    if let Some(v) = non_null(value) {
        target[field] = v.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2_with_everything() -> Value {
        json!({
            "metadata": {"name": "web", "namespace": "default", "annotations": {"team": "a"}},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 2, "maxReplicas": 10,
                "metrics": [
                    {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}},
                    {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}},
                    {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}}
                ],
                "behavior": {
                    "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}]},
                    "scaleDown": {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
                }
            },
            "status": {
                "currentReplicas": 3, "desiredReplicas": 3,
                "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 55, "averageValue": "120m"}}}],
                "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "ReadyForNewScale"}]
            }
        })
    }

    #[test]
    fn v1_carries_the_cpu_target_in_fields_and_the_rest_in_annotations() {
        let v1 = to_v1(&v2_with_everything());
        assert_eq!(
            v1["spec"],
            json!({"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 2, "maxReplicas": 10, "targetCPUUtilizationPercentage": 70})
        );
        assert_eq!(
            v1["status"],
            json!({"currentReplicas": 3, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 55})
        );
        let annotations = &v1["metadata"]["annotations"];
        assert_eq!(annotations["team"], "a");
        assert_eq!(
            annotations[METRIC_SPECS],
            r#"[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}},{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"1k"}}]"#
        );
        assert_eq!(
            annotations[METRIC_STATUSES],
            r#"[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":55,"currentAverageValue":"120m"}}]"#
        );
        assert_eq!(
            annotations[CONDITIONS],
            r#"[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"ReadyForNewScale"}]"#
        );
        assert_eq!(
            annotations[BEHAVIOR],
            r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15}],"Tolerance":null},"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}"#
        );
    }

    #[test]
    fn a_v1_round_trip_keeps_every_v2_field() {
        let v2 = v2_with_everything();
        let back = from_v1(&to_v1(&v2));
        // The CPU target comes back after the annotation's metrics; the rest is as it was.
        let mut expected = v2.clone();
        let metrics = expected["spec"]["metrics"].as_array_mut().unwrap();
        let cpu = metrics.remove(1);
        metrics.push(cpu);
        expected["status"]["currentMetrics"][0]["resource"]["current"] =
            json!({"averageUtilization": 55, "averageValue": "120m"});
        assert_eq!(back["spec"], expected["spec"]);
        assert_eq!(back["status"], expected["status"]);
        assert_eq!(back["metadata"]["annotations"], json!({"team": "a"}));
    }

    #[test]
    fn a_v1_object_without_a_target_gets_the_default_cpu_metric() {
        let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}, "maxReplicas": 3}});
        let v2 = from_v1(&v1);
        assert_eq!(v2["apiVersion"], "autoscaling/v2");
        assert_eq!(
            v2["spec"]["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}])
        );
        assert_eq!(v2["status"], json!({"desiredReplicas": 0}));
        assert!(v2["metadata"].get("annotations").is_none());
    }

    #[test]
    fn a_v1_cpu_target_becomes_a_utilization_metric() {
        let v1 = json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "maxReplicas": 3, "targetCPUUtilizationPercentage": 50},
            "status": {"currentReplicas": 1, "desiredReplicas": 1, "currentCPUUtilizationPercentage": 20}});
        let v2 = from_v1(&v1);
        assert_eq!(
            v2["spec"]["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}])
        );
        assert_eq!(
            v2["status"]["currentMetrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 20}}}])
        );
        assert_eq!(to_v1(&v2)["spec"]["targetCPUUtilizationPercentage"], 50);
    }
}
