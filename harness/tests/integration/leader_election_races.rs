//! Two replicas of each controller under production's leader election, the leader cut off
//! from its Lease mid-work (`harness::scenarios::leader_election`).

use harness::check::{self, scenario};
use harness::engine::{seeds_from_env, Target};
use rstest::rstest;

#[test]
fn renewals_not_bounded_by_the_deadline_let_two_leaders_act() {
    println!(
        "{}",
        check::removed_guard_is_found(
            "eno/without-leader-election-deadline",
            &["one live synthesizer pod per generation"],
            false,
            300,
        )
    );
}

#[rstest]
#[case::eno("eno/leader-election")]
#[case::karpenter("karpenter/leader-election")]
fn the_other_replica_takes_over_and_nothing_is_done_twice(#[case] name: &str) {
    check::guard_holds(name, seeds_from_env(0..40));
}

/// The scenarios are not vacuous: in most runs the leader is cut off mid-work and the other
/// replica takes the lease over.
#[rstest]
#[case::eno("eno/leader-election", "eno-a", "eno-b")]
#[case::karpenter("karpenter/leader-election", "karpenter-a", "karpenter-b")]
fn the_leader_is_cut_off_and_replaced_in_most_runs(
    #[case] name: &str,
    #[case] a: &str,
    #[case] b: &str,
) {
    let scenario = scenario(name);
    let renewed_by = |trace: &str, host: &str| {
        trace.lines().any(|line| {
            line.contains(&format!("[{host}] PUT"))
                && line.contains("/leases/")
                && line.ends_with(": 200")
        })
    };
    let taken_over = (0..20)
        .filter(|seed| {
            let trace = scenario.run(*seed).render();
            trace.contains("lost: partitioned") && renewed_by(&trace, a) && renewed_by(&trace, b)
        })
        .count();
    assert!(
        taken_over >= 10,
        "{name}: taken over in {taken_over} of 20 runs"
    );
}
