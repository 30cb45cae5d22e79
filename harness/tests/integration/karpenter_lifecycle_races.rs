//! The guards of Karpenter's NodeClaim lifecycle under the harness (issue 9), see
//! `harness/src/scenarios/karpenter_lifecycle.rs`.
//!
//! For each removed guard, exploration from seed 0 finds the bad outcome, shrinks it, and the
//! shrunk schedule replays into the same run. For each guard in place, exploration with faults
//! on breaks no invariant and every run reaches its goals once faults stop. Seeds:
//! `HARNESS_SEEDS=n` (default 40 here; run 500 in release with the CLI).

use harness::check::{self, scenario};
use harness::engine::{seeds_from_env, Target};
use rstest::rstest;

/// `liveness` is true for the one guard whose bad outcome is a goal never reached (a NodeClaim
/// that stays forever), not a broken invariant.
#[rstest]
#[case::finalizer_before_launch(
    "karpenter/without-finalizer-before-launch",
    "no instance outlives its NodeClaim",
    false
)]
#[case::launch_cache_by_uid(
    "karpenter/without-launch-cache-by-uid",
    "each NodeClaim has its own instance",
    false
)]
#[case::read_own_writes(
    "karpenter/without-read-own-writes",
    "each NodeClaim counted once",
    false
)]
#[case::ice_delete(
    "karpenter/without-ice-delete",
    "no relaunch after insufficient capacity",
    false
)]
#[case::liveness("karpenter/without-liveness", "every NodeClaim is Ready or gone", true)]
#[case::optimistic_lock("karpenter/without-optimistic-lock", "no lost update", false)]
#[case::node_taint_lock(
    "karpenter/without-node-taint-lock",
    "a removed not-ready taint stays removed",
    false
)]
fn a_removed_guard_is_found_shrunk_and_replayed(
    #[case] name: &str,
    #[case] property: &str,
    #[case] liveness: bool,
) {
    println!(
        "{}",
        check::removed_guard_is_found(name, &[property], liveness, 300)
    );
}

#[rstest]
#[case::finalizer_before_launch("karpenter/finalizer-before-launch")]
#[case::launch_cache_by_uid("karpenter/launch-cache-by-uid")]
#[case::read_own_writes("karpenter/read-own-writes")]
#[case::ice_delete("karpenter/ice-delete")]
#[case::liveness("karpenter/liveness")]
#[case::optimistic_lock("karpenter/optimistic-lock")]
#[case::node_taint_lock("karpenter/node-taint-lock")]
fn a_guard_in_place_holds_under_faults_and_every_run_converges(#[case] name: &str) {
    check::guard_holds(name, seeds_from_env(0..40));
}

/// The recreated NodeClaim really is a new object that launches its own instance: the world's
/// deed runs in some seeds, and then the cloud saw two launches of two UIDs.
#[test]
fn the_recreated_nodeclaim_launches_again() {
    let scenario = scenario("karpenter/launch-cache-by-uid");
    let recreated = (0..40).any(|seed| {
        let run = scenario.run(seed);
        run.violation.is_none()
            && run
                .trace
                .iter()
                .filter(|s| s.lane == "world" && s.action.starts_with("POST"))
                .any(|s| s.outcome.starts_with("201"))
    });
    assert!(recreated, "some run deletes and recreates the NodeClaim");
}
