//! Race tests of Eno's synthesis output (`harness/src/scenarios/eno_output.rs`): the in-pod
//! executor's stale output check (spec §7.8).
//!
//! With the guard removed, exploration from seed 0 finds the bad outcome, shrinks it, and the
//! shrunk schedule replays into the same run. With the guard in place, exploration with faults on
//! breaks no invariant and every run reaches its goal once faults stop. Seeds:
//! `HARNESS_SEEDS=n` (default 40 here).

use harness::check::{self, scenario};
use harness::engine::{seeds_from_env, ExploreOptions, Target};
use rstest::rstest;

#[rstest]
// Stale output recorded as the newer generation's shows either directly, or as its slices
// deleted by slice cleanup (they are older than the generation the synthesis claims).
#[case::eno_stale_output_check(
    "eno/without-stale-output-check",
    &["synthesized output matches the generation it claims", "recorded slices exist"]
)]
fn a_removed_guard_is_found_shrunk_and_replayed(#[case] name: &str, #[case] invariants: &[&str]) {
    println!(
        "{}",
        check::removed_guard_is_found(name, invariants, false, 300)
    );
}

#[rstest]
#[case::eno_stale_output_check("eno/stale-output-check")]
fn a_guard_in_place_holds_under_faults_and_every_run_converges(#[case] name: &str) {
    check::guard_holds(name, seeds_from_env(0..40));
}

/// The guarded world is the removed one but for the executor's switch: under the removed
/// guard's own schedule (PCT, depth 3), the guard holds where its removal fails.
#[test]
fn the_guard_holds_where_its_removal_fails() {
    let without = scenario("eno/without-stale-output-check");
    let report = without.explore(0..300, ExploreOptions::default(), |_, _| {});
    let failure = report
        .failures
        .first()
        .expect("a failure without the guard");
    let with = scenario("eno/stale-output-check").configure(|c| {
        c.faults = harness::sim::Faults::none();
        c.strategy = without.config.strategy;
    });
    let run = with.run(failure.seed);
    assert_eq!(run.violation, None, "{}", run.render());
}

/// A status write that took effect but whose answer timed out: the executor used to delete the
/// slices the composition now records (seed 41 of this scenario broke "recorded slices exist").
#[test]
fn an_ambiguous_status_write_keeps_the_recorded_slices() {
    let scenario = scenario("eno/executor-ambiguous-status-write");
    let report = scenario.explore(0..50, ExploreOptions::default(), |_, _| {});
    if let Some(failure) = report.failures.first() {
        panic!("{}", scenario.report(failure, &failure.run));
    }
    assert_eq!(report.runs, 50);
}
