//! Eno's pod lifecycle guards (spec §3, §3.1, §7), through the production wiring: see
//! `harness::scenarios::eno_lifecycle`. For each guard removed (by its test switch), exploration
//! from seed 0 finds the bad outcome, shrinks it, and the shrunk schedule replays exactly; for
//! each guard in place, exploration with faults on breaks no invariant and every run converges.
//! Seeds: `HARNESS_SEEDS=n` (default 40 here).

use harness::check::{self};
use harness::engine::seeds_from_env;
use rstest::rstest;

/// `liveness`: the removed guard's bad outcome is a goal never reached (a deadlock), not a
/// broken invariant.
#[rstest]
#[case::finalizer_first(
    "eno/without-finalizer-first",
    "no composition gone while its output is unreconciled",
    false
)]
#[case::uuid_write_before_first_pod(
    "eno/without-uuid-write-before-first-pod",
    "one live synthesizer pod",
    false
)]
#[case::terminating_pod_allowance(
    "eno/without-terminating-pod-allowance",
    "every composition converges",
    true
)]
#[case::terminating_pod_limit(
    "eno/without-terminating-pod-limit",
    "at most two synthesizer pods",
    false
)]
#[case::pod_finalizer("eno/without-pod-finalizer", "every pod's attempt is recorded", false)]
#[case::pod_creation_backoff("eno/without-pod-creation-backoff", "pod attempts back off", false)]
#[case::deletion_revert(
    "eno/without-deletion-revert",
    "no composition gone while its output is unreconciled",
    false
)]
#[case::deleted_composition_status_update(
    "eno/without-deleted-composition-status-update",
    "every composition converges",
    true
)]
#[case::reconciled_before_finalizer_removal(
    "eno/without-reconciled-before-finalizer-removal",
    "no composition gone while its output is unreconciled",
    false
)]
fn a_removed_lifecycle_guard_is_found_shrunk_and_replayed(
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
#[case::finalizer_first("eno/finalizer-first")]
#[case::uuid_write_before_first_pod("eno/uuid-write-before-first-pod")]
#[case::terminating_pod_allowance("eno/terminating-pod-allowance")]
#[case::terminating_pod_limit("eno/terminating-pod-limit")]
#[case::pod_finalizer("eno/pod-finalizer")]
#[case::pod_creation_backoff("eno/pod-creation-backoff")]
#[case::deletion_revert("eno/deletion-revert")]
#[case::deleted_composition_status_update("eno/deleted-composition-status-update")]
#[case::reconciled_before_finalizer_removal("eno/reconciled-before-finalizer-removal")]
fn a_lifecycle_guard_in_place_holds_under_faults_and_every_run_converges(#[case] name: &str) {
    check::guard_holds(name, seeds_from_env(0..40));
}

/// Upstream's status controller records any pod whose creation time differs from the recorded
/// one, so two live pods of one synthesis (one terminating) were recorded in turn forever: this
/// seed never converged. The port records only a newer pod.
#[test]
fn two_pods_of_one_synthesis_are_not_recorded_in_turn() {
    use harness::engine::Target;
    let run = check::scenario("eno/pod-creation-backoff").run(200);
    assert_eq!(run.violation, None, "{}", run.render());
}
