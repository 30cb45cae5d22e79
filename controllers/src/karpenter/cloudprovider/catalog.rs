//! A small, fixed instance-type catalog shared by the fake and kwok-style providers, and the
//! "cheapest compatible offering" choice both make.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::karpenter::requirements::Requirements;
use crate::karpenter::resources;
use crate::karpenter::types::{
    ARCH_LABEL, CAPACITY_TYPE_LABEL, INSTANCE_TYPE_LABEL, OS_LABEL, ZONE_LABEL,
};

/// Zones every instance type is offered in.
pub const ZONES: &[&str] = &["test-zone-a", "test-zone-b", "test-zone-c"];
/// Capacity types every instance type is offered as.
pub const CAPACITY_TYPES: &[&str] = &["on-demand", "spot"];

/// An instance type: a name, its resources and a price.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceType {
    /// e.g. `c-4x-amd64-linux`.
    pub name: String,
    /// vCPUs.
    pub cpu: u32,
    /// Memory in GiB.
    pub memory_gib: u32,
    /// `nvidia.com/gpu` devices.
    pub gpus: u32,
    /// On-demand price per hour.
    pub price: f64,
}

/// One place an instance type can be bought.
#[derive(Debug, Clone, PartialEq)]
pub struct Offering {
    /// Zone.
    pub zone: String,
    /// `on-demand` or `spot`.
    pub capacity_type: String,
    /// Price per hour.
    pub price: f64,
}

impl InstanceType {
    /// Capacity as a resource list.
    pub fn capacity(&self) -> BTreeMap<String, Quantity> {
        let mut out = BTreeMap::from([
            ("cpu".to_string(), Quantity(self.cpu.to_string())),
            (
                "memory".to_string(),
                Quantity(format!("{}Gi", self.memory_gib)),
            ),
            ("pods".to_string(), Quantity("110".into())),
        ]);
        if self.gpus > 0 {
            out.insert(GPU.to_string(), Quantity(self.gpus.to_string()));
        }
        out
    }

    /// Allocatable: capacity minus a fixed overhead (100m CPU, 256Mi memory).
    pub fn allocatable(&self) -> BTreeMap<String, Quantity> {
        let mut out = BTreeMap::from([
            (
                "cpu".to_string(),
                Quantity(format!("{}m", self.cpu * 1000 - 100)),
            ),
            (
                "memory".to_string(),
                Quantity(format!("{}Mi", self.memory_gib * 1024 - 256)),
            ),
            ("pods".to_string(), Quantity("110".into())),
        ]);
        if self.gpus > 0 {
            out.insert(GPU.to_string(), Quantity(self.gpus.to_string()));
        }
        out
    }

    /// Offerings in every zone and capacity type (spot at 70% of the price).
    pub fn offerings(&self) -> Vec<Offering> {
        ZONES
            .iter()
            .flat_map(|zone| {
                CAPACITY_TYPES.iter().map(move |ct| Offering {
                    zone: zone.to_string(),
                    capacity_type: ct.to_string(),
                    price: if *ct == "spot" {
                        self.price * 0.7
                    } else {
                        self.price
                    },
                })
            })
            .collect()
    }

    /// Labels the instance type defines.
    pub fn labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (INSTANCE_TYPE_LABEL.to_string(), self.name.clone()),
            (ARCH_LABEL.to_string(), "amd64".to_string()),
            (OS_LABEL.to_string(), "linux".to_string()),
        ])
    }
}

/// The GPU extended resource.
pub const GPU: &str = "nvidia.com/gpu";

/// The catalog: families c (2 GiB/vCPU), s (4 GiB/vCPU), m (8 GiB/vCPU) in 1–16 vCPUs, and
/// `g-4x-amd64-linux` with one GPU.
pub fn instance_types() -> Vec<InstanceType> {
    let mut out = vec![InstanceType {
        name: "g-4x-amd64-linux".into(),
        cpu: 4,
        memory_gib: 16,
        gpus: 1,
        price: 0.9,
    }];
    for (family, gib_per_cpu, price_per_cpu) in [("c", 2, 0.025), ("s", 4, 0.03), ("m", 8, 0.04)] {
        for cpu in [1u32, 2, 4, 8, 16] {
            out.push(InstanceType {
                name: format!("{family}-{cpu}x-amd64-linux"),
                cpu,
                memory_gib: cpu * gib_per_cpu,
                gpus: 0,
                price: f64::from(cpu) * price_per_cpu,
            });
        }
    }
    out
}

/// The cheapest (instance type, offering) among `candidates` that satisfies `reqs` and fits
/// `requests`. Ties go to the first in catalog order, so the choice is deterministic.
pub fn cheapest<'a>(
    candidates: impl IntoIterator<Item = &'a InstanceType>,
    reqs: &Requirements,
    requests: &BTreeMap<String, Quantity>,
) -> Option<(InstanceType, Offering)> {
    let mut best: Option<(InstanceType, Offering)> = None;
    for it in candidates {
        if !it.labels().iter().all(|(k, v)| reqs.allows(k, v))
            || !resources::fits(requests, &it.allocatable())
        {
            continue;
        }
        for o in it.offerings() {
            if !reqs.allows(ZONE_LABEL, &o.zone)
                || !reqs.allows(CAPACITY_TYPE_LABEL, &o.capacity_type)
            {
                continue;
            }
            if best.as_ref().is_none_or(|(_, b)| o.price < b.price) {
                best = Some((it.clone(), o));
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::karpenter::types::NodeSelectorRequirementWithMinValues;

    fn req(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirementWithMinValues {
        NodeSelectorRequirementWithMinValues {
            key: key.into(),
            operator: op.into(),
            values: values.iter().map(|s| s.to_string()).collect(),
            min_values: None,
        }
    }

    #[test]
    fn picks_the_cheapest_compatible_offering() {
        let reqs = Requirements::new(&[
            req(CAPACITY_TYPE_LABEL, "In", &["on-demand"]),
            req(ZONE_LABEL, "In", &["test-zone-b"]),
        ]);
        let requests = BTreeMap::from([("cpu".to_string(), Quantity("3".into()))]);
        let (it, o) = cheapest(&instance_types(), &reqs, &requests).unwrap();
        assert_eq!(it.name, "c-4x-amd64-linux");
        assert_eq!(
            (o.zone.as_str(), o.capacity_type.as_str()),
            ("test-zone-b", "on-demand")
        );
    }

    #[test]
    fn nothing_fits_an_impossible_request() {
        let requests = BTreeMap::from([("cpu".to_string(), Quantity("1000".into()))]);
        assert!(cheapest(&instance_types(), &Requirements::default(), &requests).is_none());
    }
}
