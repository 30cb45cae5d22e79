//! The `RuntimeClass` admission plugin (`plugin/pkg/admission/runtimeclass`), on by default in
//! every real server. On pod create: a pod naming a RuntimeClass that does not exist is refused;
//! the class's pod overhead becomes the pod's `spec.overhead` (a pod that sets a different one
//! is refused, and so is a pod that sets one without a class defining it); the class's
//! scheduling constraints are merged into the pod's node selector (a conflicting value is
//! refused) and tolerations (`tolerations.MergeTolerations`).

use serde_json::Value;

use crate::auth::attributes::forbidden_error;
use crate::context::Shared;
use crate::error::ApiError;
use crate::resource::ResourceInfo;
use crate::rules::Quantity;

use super::admitted_name;

/// Where RuntimeClasses are stored.
const RUNTIME_CLASSES: &str = "node.k8s.io/runtimeclasses";

/// Admits the creation of `object` (pods only): `Admit` (overhead and scheduling), then
/// `Validate` (overhead).
pub(crate) fn admit_create(
    shared: &Shared,
    info: &ResourceInfo,
    object: &mut Value,
) -> Result<(), ApiError> {
    if info.custom || !info.group.is_empty() || info.kind != "Pod" || !object["spec"].is_object() {
        return Ok(());
    }
    let forbidden = |pod: &Value, why: &str| forbidden_error("", "pods", admitted_name(pod), why);
    let rejected = |pod: &Value, why: &str| forbidden(pod, &format!("pod rejected: {why}"));
    let class = match object["spec"]["runtimeClassName"].as_str() {
        None => None,
        Some(name) => match shared.store.get_value(RUNTIME_CLASSES, "", name) {
            Some(class) => Some(class),
            None => {
                return Err(rejected(
                    object,
                    &format!("RuntimeClass \"{name}\" not found"),
                ))
            }
        },
    };
    if let Some(class) = &class {
        set_overhead(object, class).map_err(|why| rejected(object, why))?;
        set_scheduling(object, class).map_err(|why| forbidden(object, &why))?;
    }
    validate_overhead(object, class.as_ref()).map_err(|why| rejected(object, why))
}

/// `setOverhead`: the class's `overhead.podFixed` becomes the pod's overhead, unless the pod
/// already has a different one.
fn set_overhead(pod: &mut Value, class: &Value) -> Result<(), &'static str> {
    let Some(overhead) = class.get("overhead").filter(|o| o.is_object()) else {
        return Ok(());
    };
    let pod_fixed = overhead.get("podFixed").filter(|p| !p.is_null());
    let current = pod["spec"].get("overhead").filter(|o| !o.is_null());
    if current.is_some() && !resource_lists_equal(pod_fixed, current) {
        return Err(OVERHEAD_MISMATCH);
    }
    let spec = &mut pod["spec"];
    match pod_fixed {
        Some(fixed) => spec["overhead"] = fixed.clone(),
        None => {
            if let Some(spec) = spec.as_object_mut() {
                spec.remove("overhead");
            }
        }
    }
    Ok(())
}

/// The refusal of a pod whose overhead is not its class's.
const OVERHEAD_MISMATCH: &str = "Pod's Overhead doesn't match RuntimeClass's defined Overhead";

/// `validateOverhead`: with a class defining an overhead the pod's must equal it; without one
/// the pod may not set any.
fn validate_overhead(pod: &Value, class: Option<&Value>) -> Result<(), &'static str> {
    let current = pod["spec"].get("overhead").filter(|o| !o.is_null());
    match class
        .and_then(|c| c.get("overhead"))
        .filter(|o| o.is_object())
    {
        Some(overhead) => {
            if !resource_lists_equal(overhead.get("podFixed"), current) {
                return Err(OVERHEAD_MISMATCH);
            }
        }
        None => {
            if current.is_some() {
                return Err("Pod Overhead set without corresponding RuntimeClass defined Overhead");
            }
        }
    }
    Ok(())
}

/// `setScheduling`: the class's node selector is added to the pod's (a key both set to
/// different values is a conflict) and its tolerations merged into the pod's.
fn set_scheduling(pod: &mut Value, class: &Value) -> Result<(), String> {
    let Some(scheduling) = class.get("scheduling").filter(|s| s.is_object()) else {
        return Ok(());
    };
    let spec = &mut pod["spec"];
    if let Some(class_selector) = scheduling["nodeSelector"].as_object() {
        match spec["nodeSelector"].as_object_mut() {
            None => spec["nodeSelector"] = Value::Object(class_selector.clone()),
            Some(selector) => {
                for (key, class_value) in class_selector {
                    let class_text = class_value.as_str().unwrap_or_default();
                    if let Some(pod_value) = selector.get(key).and_then(Value::as_str) {
                        if pod_value != class_text {
                            return Err(format!("conflict: runtimeClass.scheduling.nodeSelector[{key}] = {class_text}; pod.spec.nodeSelector[{key}] = {pod_value}"));
                        }
                    }
                    selector.insert(key.clone(), class_value.clone());
                }
            }
        }
    }
    let pod_tolerations = spec["tolerations"].as_array().cloned().unwrap_or_default();
    let class_tolerations = scheduling["tolerations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let merged = merge_tolerations(pod_tolerations, class_tolerations);
    if merged.is_empty() {
        if let Some(spec) = spec.as_object_mut() {
            spec.remove("tolerations");
        }
    } else {
        spec["tolerations"] = Value::Array(merged);
    }
    Ok(())
}

/// `apiequality.Semantic.DeepEqual` of two resource lists: the same names, quantities equal by
/// amount; absent and empty are the same (nil) list.
fn resource_lists_equal(a: Option<&Value>, b: Option<&Value>) -> bool {
    let entries = |v: Option<&Value>| -> Vec<(String, Option<Quantity>)> {
        v.and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), Quantity::from_value(v)))
            .collect()
    };
    let (a, b) = (entries(a), entries(b));
    a.len() == b.len()
        && a.iter().zip(&b).all(|((ka, qa), (kb, qb))| {
            ka == kb
                && match (qa, qb) {
                    (Some(x), Some(y)) => x.partial_cmp(y) == Some(std::cmp::Ordering::Equal),
                    _ => false,
                }
        })
}

/// A toleration's fields, with absent and empty the same (Go's zero values).
#[derive(PartialEq)]
struct Toleration<'a> {
    key: &'a str,
    operator: &'a str,
    value: &'a str,
    effect: &'a str,
    seconds: Option<i64>,
}

impl<'a> Toleration<'a> {
    fn of(t: &'a Value) -> Self {
        let text = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or_default();
        Toleration {
            key: text("key"),
            operator: text("operator"),
            value: text("value"),
            effect: text("effect"),
            seconds: t.get("tolerationSeconds").and_then(Value::as_i64),
        }
    }

    /// `isSuperset`: whether `self` tolerates everything `t` does.
    fn is_superset_of(&self, t: &Toleration<'_>) -> bool {
        if self == t {
            return true;
        }
        // An empty key with `Exists` matches every key.
        if t.key != self.key && (!self.key.is_empty() || self.operator != "Exists") {
            return false;
        }
        // An empty effect matches every effect.
        if t.effect != self.effect && !self.effect.is_empty() {
            return false;
        }
        if self.effect == "NoExecute" {
            if let Some(limit) = self.seconds {
                if t.seconds.is_none_or(|s| s > limit) {
                    return false;
                }
            }
        }
        match self.operator {
            "Equal" | "" => t.operator == "Equal" && t.value == self.value,
            "Exists" => true,
            _ => false,
        }
    }
}

/// `tolerations.MergeTolerations`: `first` then `second`, leaving out each toleration another
/// one already kept, or a later different one, tolerates a superset of.
fn merge_tolerations(first: Vec<Value>, second: Vec<Value>) -> Vec<Value> {
    let all: Vec<Value> = first.into_iter().chain(second).collect();
    let parsed: Vec<Toleration<'_>> = all.iter().map(Toleration::of).collect();
    let mut kept: Vec<usize> = Vec::new();
    for (i, t) in parsed.iter().enumerate() {
        let redundant = kept.iter().any(|&k| parsed[k].is_superset_of(t))
            || parsed[i + 1..]
                .iter()
                .any(|later| later != t && later.is_superset_of(t));
        if !redundant {
            kept.push(i);
        }
    }
    kept.into_iter().map(|i| all[i].clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::disjoint(json!([{"key": "a", "operator": "Exists"}]), json!([{"key": "b", "operator": "Exists"}]),
        json!([{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}]))]
    #[case::duplicate(json!([{"key": "a", "operator": "Equal", "value": "x"}]), json!([{"key": "a", "operator": "Equal", "value": "x"}]),
        json!([{"key": "a", "operator": "Equal", "value": "x"}]))]
    #[case::exists_covers_equal(json!([{"key": "a", "operator": "Equal", "value": "x", "effect": "NoSchedule"}]), json!([{"key": "a", "operator": "Exists"}]),
        json!([{"key": "a", "operator": "Exists"}]))]
    #[case::tolerate_everything(json!([{"key": "a", "operator": "Exists"}]), json!([{"operator": "Exists"}]),
        json!([{"operator": "Exists"}]))]
    #[case::shorter_no_execute_is_covered(
        json!([{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]),
        json!([{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]),
        json!([{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]))]
    #[case::unbounded_is_not_covered_by_bounded(
        json!([{"key": "a", "operator": "Exists", "effect": "NoExecute"}]),
        json!([{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]),
        json!([{"key": "a", "operator": "Exists", "effect": "NoExecute"}]))]
    fn tolerations_merge_as_merge_tolerations_does(
        #[case] first: Value,
        #[case] second: Value,
        #[case] expected: Value,
    ) {
        let as_vec = |v: Value| v.as_array().cloned().unwrap_or_default();
        assert_eq!(
            Value::Array(merge_tolerations(as_vec(first), as_vec(second))),
            expected
        );
    }

    #[test]
    fn overheads_compare_by_amount() {
        assert!(resource_lists_equal(
            Some(&json!({"cpu": "250m", "memory": "1Gi"})),
            Some(&json!({"cpu": "0.25", "memory": "1024Mi"}))
        ));
        assert!(!resource_lists_equal(
            Some(&json!({"cpu": "250m"})),
            Some(&json!({"cpu": "250m", "memory": "1Gi"}))
        ));
        assert!(resource_lists_equal(None, Some(&json!({}))));
    }
}
