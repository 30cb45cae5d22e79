//! Scheduling requirements: the labels a NodeClaim's requirements pin down (spec §4.1) and the
//! compatibility checks the providers use to pick an instance type and offering.
//!
//! Ported from karpenter `pkg/scheduling/requirement(s).go` and `apis/v1beta1/labels.go`. Several
//! requirements on one key intersect; `In` resolves to one of its values, `NotIn`/`Exists` to a
//! random integer inside the `Gt`/`Lt` bounds, drawn from the injected id source.

use std::collections::{BTreeMap, BTreeSet};

use crate::ids::IdSource;

use super::types::{
    NodeSelectorRequirementWithMinValues, ARCH_LABEL, CAPACITY_TYPE_LABEL, HOSTNAME_LABEL,
    INSTANCE_TYPE_LABEL, NODECLAIM_LABEL, NODEPOOL_LABEL, OS_LABEL, REGION_LABEL,
    WINDOWS_BUILD_LABEL, ZONE_LABEL,
};

/// Label domains prohibited by the kubelet or reserved by Karpenter.
const RESTRICTED_LABEL_DOMAINS: &[&str] = &["kubernetes.io", "k8s.io", "karpenter.sh"];
/// Sub-domains of the restricted domains that are allowed.
const LABEL_DOMAIN_EXCEPTIONS: &[&str] = &[
    "kops.k8s.io",
    "node.kubernetes.io",
    "node-restriction.kubernetes.io",
];
/// Labels the cloud provider resolves; never derived from requirements.
const WELL_KNOWN_LABELS: &[&str] = &[
    NODEPOOL_LABEL,
    ZONE_LABEL,
    REGION_LABEL,
    INSTANCE_TYPE_LABEL,
    ARCH_LABEL,
    OS_LABEL,
    CAPACITY_TYPE_LABEL,
    WINDOWS_BUILD_LABEL,
];
/// Labels that would interfere with provisioning.
const RESTRICTED_LABELS: &[&str] = &[HOSTNAME_LABEL, NODECLAIM_LABEL];

/// Whether Karpenter must not inject `key` as a node label (`IsRestrictedNodeLabel`).
pub fn is_restricted_node_label(key: &str) -> bool {
    if WELL_KNOWN_LABELS.contains(&key) {
        return true;
    }
    let domain = key.split_once('/').map(|(d, _)| d).unwrap_or("");
    if LABEL_DOMAIN_EXCEPTIONS.iter().any(|e| domain.ends_with(e)) {
        return false;
    }
    if RESTRICTED_LABEL_DOMAINS.iter().any(|r| domain.ends_with(r)) {
        return true;
    }
    RESTRICTED_LABELS.contains(&key)
}

/// One key's requirement, in karpenter's set-with-complement form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// True for NotIn / Exists / Gt / Lt: `values` are excluded rather than allowed.
    pub complement: bool,
    /// The values allowed (or excluded, when `complement`).
    pub values: BTreeSet<String>,
    /// Exclusive lower bound.
    pub greater_than: Option<i64>,
    /// Exclusive upper bound.
    pub less_than: Option<i64>,
}

impl Requirement {
    /// Builds a requirement from an operator and values. An unknown operator allows nothing;
    /// an unparsable `Gt`/`Lt` bound reads as 0 (Go's ignored `strconv.Atoi` error).
    pub fn new(operator: &str, values: &[String]) -> Self {
        let set: BTreeSet<String> = values.iter().cloned().collect();
        let bound = || {
            values
                .first()
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(0)
        };
        match operator {
            "In" => Self::concrete(set),
            "NotIn" => Self {
                complement: true,
                values: set,
                greater_than: None,
                less_than: None,
            },
            "Exists" => Self {
                complement: true,
                values: BTreeSet::new(),
                greater_than: None,
                less_than: None,
            },
            "Gt" => Self {
                complement: true,
                values: BTreeSet::new(),
                greater_than: Some(bound()),
                less_than: None,
            },
            "Lt" => Self {
                complement: true,
                values: BTreeSet::new(),
                greater_than: None,
                less_than: Some(bound()),
            },
            // DoesNotExist and anything unknown.
            _ => Self::concrete(BTreeSet::new()),
        }
    }

    fn concrete(values: BTreeSet<String>) -> Self {
        Self {
            complement: false,
            values,
            greater_than: None,
            less_than: None,
        }
    }

    /// The operator this requirement is equivalent to.
    pub fn operator(&self) -> &'static str {
        match (self.complement, self.values.is_empty()) {
            (true, false) => "NotIn",
            (true, true) => "Exists",
            (false, false) => "In",
            (false, true) => "DoesNotExist",
        }
    }

    /// The intersection of two requirements on the same key.
    pub fn intersection(&self, other: &Requirement) -> Requirement {
        let complement = self.complement && other.complement;
        let greater_than = match (self.greater_than, other.greater_than) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let less_than = match (self.less_than, other.less_than) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let (Some(g), Some(l)) = (greater_than, less_than) {
            if g >= l {
                return Self::concrete(BTreeSet::new());
            }
        }
        let values: BTreeSet<String> = match (self.complement, other.complement) {
            (true, true) => self.values.union(&other.values).cloned().collect(),
            (true, false) => other.values.difference(&self.values).cloned().collect(),
            (false, true) => self.values.difference(&other.values).cloned().collect(),
            (false, false) => self.values.intersection(&other.values).cloned().collect(),
        };
        let values = values
            .into_iter()
            .filter(|v| within(v, greater_than, less_than))
            .collect();
        if complement {
            Requirement {
                complement,
                values,
                greater_than,
                less_than,
            }
        } else {
            // Boundaries are dropped for concrete sets.
            Self::concrete(values)
        }
    }

    /// Whether `value` satisfies the requirement.
    pub fn has(&self, value: &str) -> bool {
        if self.complement {
            !self.values.contains(value) && within(value, self.greater_than, self.less_than)
        } else {
            self.values.contains(value) && within(value, self.greater_than, self.less_than)
        }
    }

    /// One value satisfying the requirement (`Requirement.Any`): the first `In` value, or for
    /// `NotIn`/`Exists` a random integer in the bounds. Empty for `DoesNotExist`.
    pub fn any(&self, ids: &dyn IdSource) -> String {
        match self.operator() {
            "In" => self.values.iter().next().cloned().unwrap_or_default(),
            "NotIn" | "Exists" => {
                let low = self.greater_than.map(|g| g.saturating_add(1)).unwrap_or(0);
                let high = self.less_than.unwrap_or(i64::MAX);
                if low >= high {
                    // No integer fits (Go's rand.Intn would panic here).
                    return String::new();
                }
                ids.int_in(low, high).to_string()
            }
            _ => String::new(),
        }
    }
}

fn within(value: &str, greater_than: Option<i64>, less_than: Option<i64>) -> bool {
    if greater_than.is_none() && less_than.is_none() {
        return true;
    }
    let Ok(v) = value.parse::<i64>() else {
        return false;
    };
    greater_than.is_none_or(|g| v > g) && less_than.is_none_or(|l| v < l)
}

/// Requirements by key, each key's requirements intersected (`NewNodeSelectorRequirements`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requirements(pub BTreeMap<String, Requirement>);

impl Requirements {
    /// Collects and intersects `reqs` by key.
    pub fn new(reqs: &[NodeSelectorRequirementWithMinValues]) -> Self {
        let mut by_key: BTreeMap<String, Requirement> = BTreeMap::new();
        for r in reqs {
            let next = Requirement::new(&r.operator, &r.values);
            let merged = match by_key.get(&r.key) {
                Some(existing) => existing.intersection(&next),
                None => next,
            };
            by_key.insert(r.key.clone(), merged);
        }
        Self(by_key)
    }

    /// The requirement on `key`, if any.
    pub fn get(&self, key: &str) -> Option<&Requirement> {
        self.0.get(key)
    }

    /// Whether `value` is allowed for `key` (an undefined key allows anything).
    pub fn allows(&self, key: &str, value: &str) -> bool {
        self.0.get(key).is_none_or(|r| r.has(value))
    }

    /// One label per non-restricted key that resolves to a non-empty value (`Requirements.Labels`).
    pub fn labels(&self, ids: &dyn IdSource) -> BTreeMap<String, String> {
        self.0
            .iter()
            .filter(|(key, _)| !is_restricted_node_label(key))
            .filter_map(|(key, req)| {
                let v = req.any(ids);
                (!v.is_empty()).then(|| (key.clone(), v))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SeededIds;
    use rstest::rstest;

    fn req(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirementWithMinValues {
        NodeSelectorRequirementWithMinValues {
            key: key.into(),
            operator: op.into(),
            values: values.iter().map(|s| s.to_string()).collect(),
            min_values: None,
        }
    }

    #[rstest]
    #[case::well_known_is_restricted(INSTANCE_TYPE_LABEL, true)]
    #[case::nodepool_is_restricted(NODEPOOL_LABEL, true)]
    #[case::kubernetes_io_is_restricted("foo.kubernetes.io/x", true)]
    #[case::karpenter_sh_is_restricted("karpenter.sh/custom", true)]
    #[case::node_kubernetes_io_is_an_exception("node.kubernetes.io/custom", false)]
    #[case::kops_is_an_exception("kops.k8s.io/x", false)]
    #[case::hostname_is_restricted(HOSTNAME_LABEL, true)]
    #[case::custom_is_allowed("example.com/team", false)]
    #[case::no_domain_is_allowed("team", false)]
    fn restricted_labels(#[case] key: &str, #[case] restricted: bool) {
        assert_eq!(is_restricted_node_label(key), restricted);
    }

    #[rstest]
    #[case::in_picks_a_member(vec![req("team", "In", &["b", "a"])], "team", Some("a"))]
    #[case::well_known_skipped(vec![req(INSTANCE_TYPE_LABEL, "In", &["m5.large"])], INSTANCE_TYPE_LABEL, None)]
    #[case::does_not_exist_skipped(vec![req("team", "DoesNotExist", &[])], "team", None)]
    #[case::intersection(vec![req("team", "In", &["a", "b"]), req("team", "NotIn", &["a"])], "team", Some("b"))]
    #[case::empty_intersection(vec![req("team", "In", &["a"]), req("team", "In", &["b"])], "team", None)]
    #[case::gt_lt_pin_one_value(vec![req("gen", "Gt", &["4"]), req("gen", "Lt", &["6"])], "gen", Some("5"))]
    #[case::empty_bounds_do_not_panic(vec![req("gen", "Gt", &["4"]), req("gen", "Lt", &["5"])], "gen", None)]
    #[case::bad_bound_reads_zero(vec![req("gen", "Lt", &["x"])], "gen", None)]
    fn requirement_labels(
        #[case] reqs: Vec<NodeSelectorRequirementWithMinValues>,
        #[case] key: &str,
        #[case] want: Option<&str>,
    ) {
        let labels = Requirements::new(&reqs).labels(&SeededIds::new(1));
        assert_eq!(labels.get(key).map(String::as_str), want);
    }

    #[test]
    fn exists_draws_a_bounded_random_integer_from_the_id_source() {
        let reqs = vec![
            req("example.com/size", "Exists", &[]),
            req("example.com/size", "Gt", &["10"]),
            req("example.com/size", "Lt", &["20"]),
        ];
        let a = Requirements::new(&reqs).labels(&SeededIds::new(3));
        let b = Requirements::new(&reqs).labels(&SeededIds::new(3));
        assert_eq!(a, b, "same seed, same value");
        let v: i64 = a["example.com/size"].parse().unwrap();
        assert!((11..20).contains(&v), "{v}");
    }

    #[test]
    fn allows_checks_membership_and_complement() {
        let r = Requirements::new(&[
            req(ZONE_LABEL, "In", &["a"]),
            req(CAPACITY_TYPE_LABEL, "NotIn", &["spot"]),
        ]);
        assert!(r.allows(ZONE_LABEL, "a"));
        assert!(!r.allows(ZONE_LABEL, "b"));
        assert!(!r.allows(CAPACITY_TYPE_LABEL, "spot"));
        assert!(r.allows(CAPACITY_TYPE_LABEL, "on-demand"));
        assert!(r.allows("undefined", "anything"));
    }
}
