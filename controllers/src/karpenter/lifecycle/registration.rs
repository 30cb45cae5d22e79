//! Registration (spec §4.2): find the Node by provider id, take ownership of it, sync labels,
//! annotations and taints onto it, and record `Registered` and the node name.

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use serde_json::{json, Map, Value};

use crate::karpenter::conditions::{mark_false, mark_true};
use crate::karpenter::context::Context;
use crate::karpenter::error::Error;
use crate::karpenter::metrics::Metrics;
use crate::karpenter::nodes::{node_for_nodeclaim, NodeLookupError};
use crate::karpenter::taints;
use crate::karpenter::types::{
    condition_types::{LAUNCHED, REGISTERED},
    NodeClaim, NODE_REGISTERED_LABEL, TERMINATION_FINALIZER,
};

use super::Outcome;

/// Registration's pass over the in-memory NodeClaim.
pub async fn reconcile(ctx: &Context, nodeclaim: &mut NodeClaim) -> Result<Outcome, Error> {
    // Registered: runs once, so removed startup taints are never re-added.
    if nodeclaim.condition_is_true(REGISTERED) {
        return Ok(Outcome::Done);
    }
    let now = ctx.clock.now();
    // Not launched: there is no provider id to look for.
    if !nodeclaim.condition_is_true(LAUNCHED) {
        mark_false(
            nodeclaim,
            REGISTERED,
            "NotLaunched",
            "Node not launched",
            now,
        );
        return Ok(Outcome::Done);
    }
    let node = match node_for_nodeclaim(&ctx.nodes, nodeclaim) {
        Ok(node) => node,
        // Not (yet) in our cache; its create event will retrigger us.
        Err(NodeLookupError::NotFound(_)) => {
            mark_false(
                nodeclaim,
                REGISTERED,
                "NodeNotFound",
                "Node not registered with cluster",
                now,
            );
            return Ok(Outcome::Done);
        }
        // Invariant violated (or a stale cache).
        Err(NodeLookupError::Duplicate { .. }) => {
            mark_false(
                nodeclaim,
                REGISTERED,
                "MultipleNodesFound",
                "Invariant violated, matched multiple nodes",
                now,
            );
            return Ok(Outcome::Done);
        }
    };
    sync_node(ctx, nodeclaim, &node).await?;
    tracing::info!(node = %node.name_any(), provider_id = %nodeclaim.provider_id(), "registered nodeclaim");
    mark_true(nodeclaim, REGISTERED, ctx.clock.now());
    nodeclaim
        .status
        .get_or_insert_with(Default::default)
        .node_name = node.name_any();
    let pool = Metrics::pool(nodeclaim.nodepool());
    ctx.metrics.registered.get_or_create(&pool).inc();
    ctx.metrics.nodes_created.get_or_create(&pool).inc();
    Ok(Outcome::Done)
}

/// Writes the synced labels, annotations, finalizer, owner reference and taints onto the Node.
/// The patch carries the resourceVersion of the Node it was computed from (upstream's
/// `MergeFromWithOptimisticLock` on this patch: the taint list is written whole, and a taint
/// removed meanwhile — the node lifecycle controller's `not-ready`, the cloud controller
/// manager's `uninitialized` — would come back from a stale cache, spec §8.6); a conflict
/// requeues the NodeClaim. None under the test switch
/// [`crate::karpenter::context::Config::merge_patches_without_optimistic_lock`].
async fn sync_node(ctx: &Context, nodeclaim: &NodeClaim, node: &Node) -> Result<(), Error> {
    let synced = synced_node(nodeclaim, node);
    if let Some(body) = node_patch(node, &synced) {
        let body = super::lock(ctx, body, node.metadata.resource_version.clone());
        Api::<Node>::all(ctx.client.clone())
            .patch(
                &node.name_any(),
                &PatchParams::default(),
                &Patch::Strategic(&body),
            )
            .await
            .map_err(|e| Error::api("syncing node", e))?;
    }
    Ok(())
}

/// The Node as Registration wants it: the termination finalizer; an owner reference to the
/// NodeClaim; NodeClaim labels plus `karpenter.sh/registered=true`; NodeClaim annotations; the
/// NodeClaim's taints and startup taints (deduped by key and effect).
///
/// Sharp edge fixed (spec §6.6): upstream appends the owner reference unconditionally, so a retry
/// after a failed status patch appends a duplicate (strategic merge dedups it by uid; the v0.34
/// JSON merge patch did not). Here it is appended only when no reference with that uid exists.
pub fn synced_node(nodeclaim: &NodeClaim, node: &Node) -> Node {
    let mut out = node.clone();
    let finalizers = out.metadata.finalizers.get_or_insert_with(Vec::new);
    if !finalizers.iter().any(|f| f == TERMINATION_FINALIZER) {
        finalizers.push(TERMINATION_FINALIZER.into());
    }
    let uid = nodeclaim.uid().unwrap_or_default();
    let owners = out.metadata.owner_references.get_or_insert_with(Vec::new);
    if !owners.iter().any(|o| o.uid == uid) {
        owners.push(OwnerReference {
            api_version: NodeClaim::api_version(&()).into_owned(),
            kind: NodeClaim::kind(&()).into_owned(),
            name: nodeclaim.name_any(),
            uid,
            block_owner_deletion: Some(true),
            controller: None,
        });
    }
    let labels = out.metadata.labels.get_or_insert_with(Default::default);
    labels.extend(nodeclaim.metadata.labels.clone().unwrap_or_default());
    labels.insert(NODE_REGISTERED_LABEL.into(), "true".into());
    let annotations = nodeclaim.metadata.annotations.clone().unwrap_or_default();
    if !annotations.is_empty() {
        out.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .extend(annotations);
    }
    let spec = out.spec.get_or_insert_with(Default::default);
    let existing = spec.taints.clone().unwrap_or_default();
    let merged = taints::merge(
        &taints::merge(&existing, &nodeclaim.spec.taints),
        &nodeclaim.spec.startup_taints,
    );
    if merged != existing {
        spec.taints = Some(merged);
    }
    out
}

/// The strategic merge patch from `stored` to `synced`: changed label and annotation keys, and
/// the whole finalizer, owner-reference and taint lists when they changed. Whole lists are right
/// under both readings of the patch: strategic merge unions finalizers and owner references (by
/// uid) and replaces taints; a plain merge replaces all three with what we computed.
pub fn node_patch(stored: &Node, synced: &Node) -> Option<Value> {
    let mut metadata = Map::new();
    for (field, old, new) in [
        ("labels", &stored.metadata.labels, &synced.metadata.labels),
        (
            "annotations",
            &stored.metadata.annotations,
            &synced.metadata.annotations,
        ),
    ] {
        let old = old.clone().unwrap_or_default();
        let changed: Map<String, Value> = new
            .clone()
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, v)| old.get(k) != Some(v))
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        if !changed.is_empty() {
            metadata.insert(field.into(), Value::Object(changed));
        }
    }
    if stored.metadata.finalizers != synced.metadata.finalizers {
        metadata.insert("finalizers".into(), json!(synced.metadata.finalizers));
    }
    if stored.metadata.owner_references != synced.metadata.owner_references {
        metadata.insert(
            "ownerReferences".into(),
            json!(synced.metadata.owner_references),
        );
    }
    let mut body = Map::new();
    if !metadata.is_empty() {
        body.insert("metadata".into(), Value::Object(metadata));
    }
    let old_taints = stored.spec.as_ref().and_then(|s| s.taints.clone());
    let new_taints = synced.spec.as_ref().and_then(|s| s.taints.clone());
    if old_taints != new_taints {
        body.insert("spec".into(), json!({"taints": new_taints}));
    }
    (!body.is_empty()).then_some(Value::Object(body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::karpenter::taints::taint;
    use crate::karpenter::types::{NodeClaimSpec, DO_NOT_DISRUPT_ANNOTATION};
    use k8s_openapi::api::core::v1::NodeSpec;
    use kube::api::ObjectMeta;

    fn nodeclaim() -> NodeClaim {
        let mut nc = NodeClaim::new(
            "nc",
            NodeClaimSpec {
                taints: vec![taint("dedicated", Some("x"), "NoSchedule")],
                startup_taints: vec![taint("agent", None, "NoSchedule")],
                ..Default::default()
            },
        );
        nc.metadata.uid = Some("uid-1".into());
        nc.metadata.labels = Some([("team".to_string(), "a".to_string())].into());
        nc.metadata.annotations =
            Some([(DO_NOT_DISRUPT_ANNOTATION.to_string(), "true".to_string())].into());
        nc
    }

    fn node() -> Node {
        Node {
            metadata: ObjectMeta {
                name: Some("n".into()),
                ..Default::default()
            },
            spec: Some(NodeSpec {
                provider_id: Some("p".into()),
                ..Default::default()
            }),
            status: None,
        }
    }

    #[test]
    fn syncs_everything_registration_owns() {
        let synced = synced_node(&nodeclaim(), &node());
        assert_eq!(
            synced.metadata.finalizers,
            Some(vec![TERMINATION_FINALIZER.to_string()])
        );
        let owners = synced.metadata.owner_references.clone().unwrap();
        assert_eq!(owners.len(), 1);
        assert_eq!(
            (owners[0].kind.as_str(), owners[0].uid.as_str()),
            ("NodeClaim", "uid-1")
        );
        assert_eq!(owners[0].block_owner_deletion, Some(true));
        assert_eq!(owners[0].controller, None);
        let labels = synced.metadata.labels.clone().unwrap();
        assert_eq!(labels["team"], "a");
        assert_eq!(labels[NODE_REGISTERED_LABEL], "true");
        assert_eq!(
            synced.metadata.annotations.clone().unwrap()[DO_NOT_DISRUPT_ANNOTATION],
            "true"
        );
        let taints = synced.spec.clone().unwrap().taints.unwrap();
        assert_eq!(taints.len(), 2);
        let patch = node_patch(&node(), &synced).unwrap();
        assert_eq!(patch["metadata"]["labels"][NODE_REGISTERED_LABEL], "true");
        assert_eq!(patch["spec"]["taints"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn owner_reference_is_not_duplicated_on_retry() {
        // Upstream appends a second reference here (a retry after a failed status patch).
        let once = synced_node(&nodeclaim(), &node());
        let twice = synced_node(&nodeclaim(), &once);
        assert_eq!(twice.metadata.owner_references.clone().unwrap().len(), 1);
        assert_eq!(
            node_patch(&once, &twice),
            None,
            "an already-synced node needs no patch"
        );
    }

    #[test]
    fn existing_taints_keep_their_values() {
        let mut n = node();
        n.spec.as_mut().unwrap().taints =
            Some(vec![taint("dedicated", Some("other"), "NoSchedule")]);
        let synced = synced_node(&nodeclaim(), &n);
        let taints = synced.spec.unwrap().taints.unwrap();
        assert_eq!(taints.len(), 2);
        assert_eq!(taints[0].value.as_deref(), Some("other"));
    }
}
