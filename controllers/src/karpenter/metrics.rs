//! Prometheus metrics with upstream's names (`karpenter_nodeclaims_launched`, `_registered`,
//! `_initialized`, `_terminated{reason}`, `karpenter_nodes_created`).
//!
//! prometheus-client encodes OpenMetrics, which requires counter samples to end in `_total`; the
//! family (`# TYPE`) names are upstream's.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

/// Labels of the per-NodePool counters.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct NodePoolLabels {
    /// `karpenter.sh/nodepool` of the NodeClaim.
    pub nodepool: String,
}

/// Labels of `karpenter_nodeclaims_terminated`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TerminatedLabels {
    /// `insufficient_capacity` or `liveness`.
    pub reason: String,
    /// `karpenter.sh/nodepool` of the NodeClaim.
    pub nodepool: String,
    /// `karpenter.sh/capacity-type` of the NodeClaim.
    pub capacity_type: String,
}

/// The lifecycle's counters. Clones share the counts.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    /// NodeClaims launched by the cloud provider.
    pub launched: Family<NodePoolLabels, Counter>,
    /// NodeClaims whose Node registered.
    pub registered: Family<NodePoolLabels, Counter>,
    /// NodeClaims whose Node initialized.
    pub initialized: Family<NodePoolLabels, Counter>,
    /// NodeClaims deleted by the lifecycle, by reason.
    pub terminated: Family<TerminatedLabels, Counter>,
    /// Nodes created (registered) for NodeClaims.
    pub nodes_created: Family<NodePoolLabels, Counter>,
}

impl Metrics {
    /// Fresh counters, not registered anywhere.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fresh counters registered in `registry`.
    pub fn registered_in(registry: &mut Registry) -> Self {
        let m = Self::new();
        registry.register(
            "karpenter_nodeclaims_launched",
            "Number of nodeclaims launched",
            m.launched.clone(),
        );
        registry.register(
            "karpenter_nodeclaims_registered",
            "Number of nodeclaims registered",
            m.registered.clone(),
        );
        registry.register(
            "karpenter_nodeclaims_initialized",
            "Number of nodeclaims initialized",
            m.initialized.clone(),
        );
        registry.register(
            "karpenter_nodeclaims_terminated",
            "Number of nodeclaims terminated, by reason",
            m.terminated.clone(),
        );
        registry.register(
            "karpenter_nodes_created",
            "Number of nodes created",
            m.nodes_created.clone(),
        );
        m
    }

    /// Labels for `nodepool`.
    pub fn pool(nodepool: &str) -> NodePoolLabels {
        NodePoolLabels {
            nodepool: nodepool.into(),
        }
    }

    /// Sum of a per-NodePool family over every NodePool.
    pub fn total(family: &Family<NodePoolLabels, Counter>, nodepools: &[&str]) -> u64 {
        nodepools
            .iter()
            .map(|p| family.get_or_create(&Self::pool(p)).get())
            .sum()
    }

    /// `karpenter_nodeclaims_terminated{reason, nodepool, capacity_type}`.
    pub fn terminated_count(&self, reason: &str, nodepool: &str, capacity_type: &str) -> u64 {
        self.terminated
            .get_or_create(&TerminatedLabels {
                reason: reason.into(),
                nodepool: nodepool.into(),
                capacity_type: capacity_type.into(),
            })
            .get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_upstream_names() {
        let mut registry = Registry::default();
        let m = Metrics::registered_in(&mut registry);
        m.launched.get_or_create(&Metrics::pool("default")).inc();
        m.terminated
            .get_or_create(&TerminatedLabels {
                reason: "liveness".into(),
                nodepool: "default".into(),
                capacity_type: "spot".into(),
            })
            .inc();
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &registry).unwrap();
        assert!(
            out.contains("karpenter_nodeclaims_launched_total{nodepool=\"default\"} 1"),
            "{out}"
        );
        assert!(
            out.contains("# TYPE karpenter_nodes_created counter"),
            "{out}"
        );
        assert!(out.contains("reason=\"liveness\""), "{out}");
        assert_eq!(m.terminated_count("liveness", "default", "spot"), 1);
    }
}
