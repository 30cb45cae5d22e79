//! Eno's pod lifecycle guards (spec §3, §3.1, §7), through the production wiring: see
//! `harness::scenarios::eno_lifecycle`. For each guard removed (by its test switch), exploration
//! from seed 0 finds the bad outcome, shrinks it, and the shrunk schedule replays exactly; for
//! each guard in place, exploration with faults on breaks no invariant and every run converges.
//! Seeds: `HARNESS_SEEDS=n` (default 40 here).

use harness::engine::{seeds_from_env, ExploreOptions, Target};
use harness::scenario::Scenario;
use rstest::rstest;

fn scenario(name: &str) -> Scenario {
    harness::scenarios::find(name).unwrap_or_else(|| panic!("no scenario {name}"))
}

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
    #[case] invariant: &str,
    #[case] liveness: bool,
) {
    let scenario = scenario(name);
    let report = scenario.explore(0..300, ExploreOptions::default(), |_, _| {});
    let failure = report
        .failures
        .first()
        .unwrap_or_else(|| panic!("{name}: no failure in {} runs", report.runs))
        .clone();
    let violation = failure.run.violation.clone().unwrap_or_default();
    let what = violation
        .strip_prefix("not reached within ")
        .and_then(|v| v.split_once("once faults stopped: "))
        .map(|(_, goal)| goal)
        .unwrap_or(&violation);
    assert!(what.starts_with(invariant), "{violation}");
    assert_eq!(
        violation.contains("not reached within"),
        liveness,
        "{name}: {violation}"
    );
    let shrunk = scenario.shrink(&failure);
    let text = scenario.report(&failure, &shrunk);
    println!("{text}");
    assert!(shrunk.trace.len() <= failure.run.trace.len(), "{text}");
    let kind = |v: &str| {
        v.strip_prefix("not reached within ")
            .and_then(|v| v.split_once("once faults stopped: "))
            .map(|(_, goal)| goal.split(':').next().unwrap_or_default().to_string())
            .unwrap_or_else(|| v.split(':').next().unwrap_or_default().to_string())
    };
    assert_eq!(
        shrunk.violation.as_deref().map(kind),
        Some(kind(&violation)),
        "{text}"
    );
    let again = scenario.replay(failure.seed, shrunk.choices.clone());
    assert_eq!(
        again.render(),
        shrunk.render(),
        "the shrunk schedule replays exactly"
    );
    assert!(text.contains(&format!(
        "cargo run -p harness -- replay --scenario {name} --seed {}",
        failure.seed
    )));
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
    let scenario = scenario(name);
    assert!(
        scenario.config.faults.budget > 0,
        "{name} explores with faults on"
    );
    let report = scenario.explore(
        seeds_from_env(0..40),
        ExploreOptions {
            stop_after: 1,
            check_determinism: false,
        },
        |_, _| {},
    );
    if let Some(failure) = report.failures.first() {
        let shrunk = scenario.shrink(failure);
        panic!("{}", scenario.report(failure, &shrunk));
    }
    assert!(
        report.distinct as u64 > report.runs / 2,
        "seeds explore different schedules"
    );
}
