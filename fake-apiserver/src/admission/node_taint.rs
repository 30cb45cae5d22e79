//! The `TaintNodesByCondition` admission plugin (`plugin/pkg/admission/nodetaint`), on by
//! default in every real server: a Node is created with the `node.kubernetes.io/not-ready:
//! NoSchedule` taint, so nothing is scheduled on it before the node lifecycle controller
//! ([`crate::controllers::node_lifecycle`]) has looked at its conditions. Only creates of the
//! main resource; a Node that already has the taint (same key and effect) keeps its own.

use serde_json::{json, Value};

use crate::resource::ResourceInfo;

/// The taint's key (`v1.TaintNodeNotReady`).
pub(crate) const NOT_READY: &str = "node.kubernetes.io/not-ready";

/// `Admit` on a create: adds the not-ready taint to a new Node (`addNotReadyTaint`).
pub(crate) fn admit_create(info: &ResourceInfo, object: &mut Value) {
    if !info.is_builtin("", "Node") {
        return;
    }
    let Some(spec) = object
        .as_object_mut()
        .and_then(|o| o.entry("spec").or_insert_with(|| json!({})).as_object_mut())
    else {
        return;
    };
    let taints = spec.entry("taints").or_insert_with(|| json!([]));
    if taints.is_null() {
        *taints = json!([]);
    }
    let Some(taints) = taints.as_array_mut() else {
        return;
    };
    let present = taints
        .iter()
        .any(|t| t["key"] == NOT_READY && t["effect"] == "NoSchedule");
    if !present {
        taints.push(json!({"key": NOT_READY, "effect": "NoSchedule"}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn nodes() -> ResourceInfo {
        crate::resource::builtin_info("", "Node")
    }

    #[rstest]
    #[case::no_spec(json!({"metadata": {"name": "n"}}), json!([{"key": NOT_READY, "effect": "NoSchedule"}]))]
    #[case::null_taints(json!({"spec": {"taints": null}}), json!([{"key": NOT_READY, "effect": "NoSchedule"}]))]
    #[case::appended(
        json!({"spec": {"taints": [{"key": "a", "effect": "NoExecute"}]}}),
        json!([{"key": "a", "effect": "NoExecute"}, {"key": NOT_READY, "effect": "NoSchedule"}])
    )]
    #[case::kept_with_its_value(
        json!({"spec": {"taints": [{"key": NOT_READY, "value": "x", "effect": "NoSchedule"}]}}),
        json!([{"key": NOT_READY, "value": "x", "effect": "NoSchedule"}])
    )]
    #[case::other_effect_is_another_taint(
        json!({"spec": {"taints": [{"key": NOT_READY, "effect": "NoExecute"}]}}),
        json!([{"key": NOT_READY, "effect": "NoExecute"}, {"key": NOT_READY, "effect": "NoSchedule"}])
    )]
    fn a_new_node_gets_the_not_ready_taint(#[case] mut node: Value, #[case] taints: Value) {
        admit_create(&nodes(), &mut node);
        assert_eq!(node["spec"]["taints"], taints);
    }
}
