//! The scenarios that ship with the harness: both controllers of this workspace, each guard
//! in place (`<controller>/<guard>`) and removed (`<controller>/without-<guard>`).

pub mod both;
pub mod eno;
pub mod eno_lifecycle;
pub mod eno_output;
pub mod karpenter;
pub mod karpenter_gc;
pub mod karpenter_lifecycle;
pub mod leader_election;

use crate::scenario::Scenario;

/// Every scenario, in the order `harness list` prints them.
pub fn all() -> Vec<Scenario> {
    let mut all = eno::scenarios();
    all.extend(eno_lifecycle::scenarios());
    all.extend(eno_output::scenarios());
    all.extend(karpenter::scenarios());
    all.extend(karpenter_lifecycle::scenarios());
    all.extend(karpenter_gc::scenarios());
    all.extend(leader_election::scenarios());
    all.extend(both::scenarios());
    all
}

/// The scenario named `name`.
pub fn find(name: &str) -> Option<Scenario> {
    all().into_iter().find(|s| s.name == name)
}
