//! Initialization (spec §4.3): the first failing check sets `Initialized=False`; when all pass,
//! the Node gets `karpenter.sh/initialized=true` and the NodeClaim `Initialized=True`.
//! `Registered=True` is not required (faithful, spec §6.8).

use k8s_openapi::api::core::v1::Node;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::json;

use crate::karpenter::conditions::{mark_false, mark_true};
use crate::karpenter::context::Context;
use crate::karpenter::error::Error;
use crate::karpenter::metrics::Metrics;
use crate::karpenter::nodes::node_for_nodeclaim;
use crate::karpenter::resources;
use crate::karpenter::taints;
use crate::karpenter::types::{
    condition_types::{INITIALIZED, LAUNCHED},
    NodeClaim, NODE_INITIALIZED_LABEL,
};

use super::Outcome;

/// Why a Node is not initialized yet: the condition reason and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotInitialized {
    /// Condition reason.
    pub reason: &'static str,
    /// Condition message.
    pub message: String,
}

/// Checks 4–7 on a found Node: Ready, startup taints gone, ephemeral taints gone, requested
/// resources registered. `None` when all pass.
pub fn check_node(nodeclaim: &NodeClaim, node: &Node) -> Option<NotInitialized> {
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
        .is_some_and(|c| c.status == "True");
    if !ready {
        return Some(NotInitialized {
            reason: "NodeNotReady",
            message: "Node status is NotReady".into(),
        });
    }
    let node_taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default();
    if let Some(t) = taints::first_present(&node_taints, &nodeclaim.spec.startup_taints) {
        return Some(NotInitialized {
            reason: "StartupTaintsExist",
            message: format!("StartupTaint \"{}\" still exists", taints::format(t)),
        });
    }
    if let Some(t) = taints::first_present(&node_taints, &taints::known_ephemeral_taints()) {
        return Some(NotInitialized {
            reason: "KnownEphemeralTaintsExist",
            message: format!("KnownEphemeralTaint \"{}\" still exists", taints::format(t)),
        });
    }
    // The kubelet zeroes extended resources until their device plugin registers them; wait on
    // allocatable since that is what scheduling uses.
    let allocatable = node
        .status
        .as_ref()
        .and_then(|s| s.allocatable.clone())
        .unwrap_or_default();
    for (name, quantity) in &nodeclaim.spec.resources.requests {
        if resources::is_zero(Some(quantity)) {
            continue;
        }
        if resources::is_zero(allocatable.get(name)) {
            return Some(NotInitialized {
                reason: "ResourceNotRegistered",
                message: format!("Resource \"{name}\" was requested but not registered"),
            });
        }
    }
    None
}

/// Initialization's pass over the in-memory NodeClaim.
pub async fn reconcile(ctx: &Context, nodeclaim: &mut NodeClaim) -> Result<Outcome, Error> {
    // Initialized: done.
    if nodeclaim.condition_is_true(INITIALIZED) {
        return Ok(Outcome::Done);
    }
    let now = ctx.clock.now();
    // Not launched: no Node to look at.
    if !nodeclaim.condition_is_true(LAUNCHED) {
        mark_false(
            nodeclaim,
            INITIALIZED,
            "NotLaunched",
            "Node not launched",
            now,
        );
        return Ok(Outcome::Done);
    }
    // Any lookup failure (none or several Nodes) reads as NodeNotFound, as upstream.
    let Ok(node) = node_for_nodeclaim(&ctx.nodes, nodeclaim) else {
        mark_false(
            nodeclaim,
            INITIALIZED,
            "NodeNotFound",
            "Node not registered with cluster",
            now,
        );
        return Ok(Outcome::Done);
    };
    if let Some(not) = check_node(nodeclaim, &node) {
        mark_false(nodeclaim, INITIALIZED, not.reason, &not.message, now);
        return Ok(Outcome::Done);
    }
    let has_label = node
        .labels()
        .get(NODE_INITIALIZED_LABEL)
        .is_some_and(|v| v == "true");
    if !has_label {
        let body = json!({"metadata": {"labels": {NODE_INITIALIZED_LABEL: "true"}}});
        Api::<Node>::all(ctx.client.clone())
            .patch(
                &node.name_any(),
                &PatchParams::default(),
                &Patch::Strategic(&body),
            )
            .await
            .map_err(|e| Error::api("labeling node initialized", e))?;
    }
    tracing::info!(
        node = %node.name_any(),
        allocatable = ?node.status.as_ref().and_then(|s| s.allocatable.as_ref()),
        "initialized nodeclaim"
    );
    mark_true(nodeclaim, INITIALIZED, ctx.clock.now());
    ctx.metrics
        .initialized
        .get_or_create(&Metrics::pool(nodeclaim.nodepool()))
        .inc();
    Ok(Outcome::Done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::karpenter::taints::taint;
    use crate::karpenter::types::NodeClaimSpec;
    use k8s_openapi::api::core::v1::{NodeCondition, NodeSpec, NodeStatus, Taint};
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use rstest::rstest;
    use std::collections::BTreeMap;

    fn node(ready: &str, node_taints: Vec<Taint>, allocatable: &[(&str, &str)]) -> Node {
        Node {
            metadata: Default::default(),
            spec: Some(NodeSpec {
                taints: Some(node_taints),
                ..Default::default()
            }),
            status: Some(NodeStatus {
                conditions: Some(vec![NodeCondition {
                    type_: "Ready".into(),
                    status: ready.into(),
                    ..Default::default()
                }]),
                allocatable: Some(
                    allocatable
                        .iter()
                        .map(|(k, v)| (k.to_string(), Quantity(v.to_string())))
                        .collect(),
                ),
                ..Default::default()
            }),
        }
    }

    fn nodeclaim(requests: &[(&str, &str)]) -> NodeClaim {
        let mut spec = NodeClaimSpec {
            startup_taints: vec![taint("agent", Some("x"), "NoSchedule")],
            ..Default::default()
        };
        spec.resources.requests = requests
            .iter()
            .map(|(k, v)| (k.to_string(), Quantity(v.to_string())))
            .collect::<BTreeMap<_, _>>();
        NodeClaim::new("nc", spec)
    }

    #[rstest]
    #[case::all_met(node("True", vec![], &[("cpu", "2")]), &[("cpu", "1")], None)]
    #[case::not_ready(node("False", vec![], &[]), &[], Some("NodeNotReady"))]
    #[case::unknown_ready(node("Unknown", vec![], &[]), &[], Some("NodeNotReady"))]
    #[case::startup_taint(node("True", vec![taint("agent", Some("x"), "NoSchedule")], &[]), &[], Some("StartupTaintsExist"))]
    #[case::startup_taint_other_effect_is_fine(node("True", vec![taint("agent", Some("x"), "NoExecute")], &[]), &[], None)]
    #[case::ephemeral(node("True", vec![taint("node.kubernetes.io/not-ready", None, "NoSchedule")], &[]), &[], Some("KnownEphemeralTaintsExist"))]
    #[case::gpu_not_registered(node("True", vec![], &[("nvidia.com/gpu", "0")]), &[("nvidia.com/gpu", "1")], Some("ResourceNotRegistered"))]
    #[case::gpu_missing(node("True", vec![], &[]), &[("nvidia.com/gpu", "1")], Some("ResourceNotRegistered"))]
    #[case::zero_request_ignored(node("True", vec![], &[]), &[("nvidia.com/gpu", "0")], None)]
    fn checks(#[case] n: Node, #[case] requests: &[(&str, &str)], #[case] want: Option<&str>) {
        assert_eq!(check_node(&nodeclaim(requests), &n).map(|x| x.reason), want);
    }

    #[test]
    fn startup_taint_message_names_the_taint() {
        let n = node("True", vec![taint("agent", Some("x"), "NoSchedule")], &[]);
        assert_eq!(
            check_node(&nodeclaim(&[]), &n).unwrap().message,
            "StartupTaint \"agent=x:NoSchedule\" still exists"
        );
    }
}
