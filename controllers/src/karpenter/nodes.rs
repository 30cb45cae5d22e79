//! The NodeClaim ↔ Node join by provider id, over the reflector caches (spec §2, §3).
//!
//! Upstream indexes Nodes by `spec.providerID` and NodeClaims by `status.providerID`; here both
//! lookups scan the (possibly lagging) store. An empty provider id matches nothing: upstream's
//! `AllNodesForNodeClaim` already returns no Nodes for an unlaunched NodeClaim, and the Node event
//! handler is fixed the same way (spec §6.7, see [`nodeclaims_for_node`]).

use std::sync::Arc;

use k8s_openapi::api::core::v1::Node;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::ResourceExt;

use super::types::NodeClaim;

/// Why no single Node was found for a NodeClaim.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeLookupError {
    /// No Node has the provider id (or the NodeClaim has none yet).
    #[error("no nodes found for provider id {0:?}")]
    NotFound(String),
    /// More than one Node has it: an invariant violation (or a stale cache).
    #[error("expected a single node for provider id {provider_id:?}, got {}: {}", .nodes.len(), .nodes.join(", "))]
    Duplicate {
        /// The provider id.
        provider_id: String,
        /// The Nodes' names.
        nodes: Vec<String>,
    },
}

/// The provider id of a Node (empty when unset).
pub fn node_provider_id(node: &Node) -> &str {
    node.spec
        .as_ref()
        .and_then(|s| s.provider_id.as_deref())
        .unwrap_or("")
}

/// Every cached Node with `provider_id`, by name. None for an empty provider id.
pub fn nodes_with_provider_id(nodes: &Store<Node>, provider_id: &str) -> Vec<Arc<Node>> {
    if provider_id.is_empty() {
        return vec![];
    }
    let mut found = nodes.state_filter(|n| node_provider_id(n) == provider_id);
    found.sort_by_key(|n| n.name_any());
    found
}

/// `NodeForNodeClaim`: the one cached Node with the NodeClaim's provider id.
pub fn node_for_nodeclaim(
    nodes: &Store<Node>,
    nc: &NodeClaim,
) -> Result<Arc<Node>, NodeLookupError> {
    let provider_id = nc.provider_id();
    let mut found = nodes_with_provider_id(nodes, provider_id);
    match found.len() {
        0 => Err(NodeLookupError::NotFound(provider_id.to_string())),
        1 => Ok(found.remove(0)),
        _ => Err(NodeLookupError::Duplicate {
            provider_id: provider_id.to_string(),
            nodes: found.iter().map(|n| n.name_any()).collect(),
        }),
    }
}

/// The watch mapping for Node events (`NodeEventHandler`): the cached NodeClaims whose
/// `status.providerID` equals the Node's `spec.providerID`.
///
/// Sharp edge fixed (spec §6.7): upstream looks the Node's provider id up in a field index, so a
/// Node with an empty provider id matches every NodeClaim not yet launched (their index value is
/// also ""), and each such Node event enqueues all of them. An empty provider id maps to nothing.
pub fn nodeclaims_for_node(
    nodeclaims: &Store<NodeClaim>,
    node: &Node,
) -> Vec<ObjectRef<NodeClaim>> {
    let provider_id = node_provider_id(node);
    if provider_id.is_empty() {
        return vec![];
    }
    let mut refs: Vec<ObjectRef<NodeClaim>> = nodeclaims
        .state_filter(|nc| nc.provider_id() == provider_id)
        .iter()
        .map(|nc| ObjectRef::from_obj(nc.as_ref()))
        .collect();
    refs.sort_by(|a, b| a.name.cmp(&b.name));
    refs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::karpenter::types::NodeClaimStatus;
    use k8s_openapi::api::core::v1::NodeSpec;
    use kube::api::ObjectMeta;
    use kube::runtime::reflector::store;
    use kube::runtime::watcher::Event;
    use rstest::rstest;

    fn node(name: &str, provider_id: &str) -> Node {
        Node {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            spec: Some(NodeSpec {
                provider_id: Some(provider_id.into()),
                ..Default::default()
            }),
            status: None,
        }
    }

    fn nodeclaim(name: &str, provider_id: &str) -> NodeClaim {
        let mut nc = NodeClaim::new(name, Default::default());
        nc.status = Some(NodeClaimStatus {
            provider_id: provider_id.into(),
            ..Default::default()
        });
        nc
    }

    fn stores(nodes: Vec<Node>, ncs: Vec<NodeClaim>) -> (Store<Node>, Store<NodeClaim>) {
        let (nr, mut nw) = store::<Node>();
        for n in nodes {
            nw.apply_watcher_event(&Event::Apply(n));
        }
        let (cr, mut cw) = store::<NodeClaim>();
        for c in ncs {
            cw.apply_watcher_event(&Event::Apply(c));
        }
        (nr, cr)
    }

    #[rstest]
    #[case::one("p1", Ok("n1"))]
    #[case::none("p9", Err("not found"))]
    #[case::duplicate("dup", Err("duplicate"))]
    #[case::empty_matches_nothing("", Err("not found"))]
    fn lookup(#[case] provider_id: &str, #[case] want: Result<&str, &str>) {
        let (nodes, _) = stores(
            vec![
                node("n1", "p1"),
                node("d1", "dup"),
                node("d2", "dup"),
                node("e", ""),
            ],
            vec![],
        );
        let got = node_for_nodeclaim(&nodes, &nodeclaim("c", provider_id));
        match (got, want) {
            (Ok(n), Ok(name)) => assert_eq!(n.name_any(), name),
            (Err(NodeLookupError::NotFound(_)), Err("not found")) => {}
            (Err(NodeLookupError::Duplicate { nodes, .. }), Err("duplicate")) => {
                assert_eq!(nodes, vec!["d1", "d2"])
            }
            (got, want) => panic!("got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn empty_provider_id_node_enqueues_nothing() {
        // Upstream would enqueue both unlaunched NodeClaims here.
        let (_, ncs) = stores(
            vec![],
            vec![nodeclaim("a", ""), nodeclaim("b", ""), nodeclaim("c", "p1")],
        );
        assert!(nodeclaims_for_node(&ncs, &node("n", "")).is_empty());
        let refs = nodeclaims_for_node(&ncs, &node("n", "p1"));
        assert_eq!(
            refs.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            vec!["c"]
        );
    }
}
