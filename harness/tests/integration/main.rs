//! The harness crate's integration tests, one module per subject, linked into one binary
//! (one link and one copy of the dependencies instead of one per file).

mod distributed;
mod eno_lifecycle_races;
mod eno_output_races;
mod exhaustive;
mod karpenter_gc_races;
mod karpenter_lifecycle_races;
mod kube_controller_manager_races;
mod leader_election_races;
mod races;
