//! The Eno synthesis metrics, registered in the operator's shared Prometheus registry.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::registry::Registry;

/// Counters upstream exports from the synthesis package.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    /// `eno_syntheses_total`: +1 for every synthesizer pod created.
    pub syntheses: Counter,
    /// `eno_synthesis_pod_recreations_total`: +1 for every pod deleted for timing out.
    pub pod_recreations: Counter,
}

impl Metrics {
    /// New counters, registered in `registry` (the `_total` suffix is added by the encoder).
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = Self::default();
        registry.register(
            "eno_syntheses",
            "Number of synthesizer pods created",
            metrics.syntheses.clone(),
        );
        registry.register(
            "eno_synthesis_pod_recreations",
            "Number of synthesizer pods deleted because they timed out",
            metrics.pod_recreations.clone(),
        );
        metrics
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_encode_with_upstream_names() {
        let mut registry = Registry::default();
        let metrics = Metrics::register(&mut registry);
        metrics.syntheses.inc();
        metrics.syntheses.inc();
        metrics.pod_recreations.inc();
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(text.contains("eno_syntheses_total 2"), "{text}");
        assert!(
            text.contains("eno_synthesis_pod_recreations_total 1"),
            "{text}"
        );
    }
}
