//! Bounded exhaustive exploration: "no interleaving of these N steps breaks the invariant".

use harness::check::scenario;
use harness::exhaustive::{explore, Bounds};

#[test]
fn no_interleaving_of_karpenters_first_six_steps_leaks_an_instance() {
    let coverage = explore(
        &scenario("karpenter/launch-cache"),
        0,
        Bounds {
            depth: 6,
            max_executions: 5_000,
        },
    );
    println!("{}", coverage.summary("karpenter/launch-cache", 6));
    assert!(coverage.violation.is_none(), "{:?}", coverage.violation);
    assert!(!coverage.truncated);
    // One process: nothing commutes, so the whole tree is walked.
    assert_eq!(coverage.pruned, 0);
    assert!(coverage.schedules > 100, "{}", coverage.schedules);
}

#[test]
fn steps_of_different_processes_on_different_collections_are_explored_once() {
    let coverage = explore(
        &scenario("both/every-guard"),
        0,
        Bounds {
            depth: 2,
            max_executions: 5_000,
        },
    );
    println!("{}", coverage.summary("both/every-guard", 2));
    assert!(coverage.violation.is_none());
    assert!(
        coverage.pruned > 0,
        "Eno's and Karpenter's start-up lists commute"
    );
    assert!(
        coverage.executions > coverage.schedules,
        "inner nodes are executions too"
    );
}

#[test]
#[ignore = "about 20k executions: 20 s in release, minutes in debug; `make race` runs it"]
fn a_removed_guard_is_found_by_exhaustive_search_and_replays() {
    // The start-up race of eno/without-cache-sync fits in 6 steps; the failing schedule the
    // search finds must replay.
    let name = "eno/without-cache-sync";
    let s = scenario(name);
    let coverage = explore(
        &s,
        0,
        Bounds {
            depth: 6,
            max_executions: 40_000,
        },
    );
    let run = coverage.violation.expect("found within the bound");
    assert!(run
        .violation
        .as_deref()
        .is_some_and(|v| v.starts_with("no spurious SynthesizerNotFound")));
    let again = harness::exhaustive::replay(&s, 0, &run.choices);
    assert_eq!(again.violation, run.violation);
    assert_eq!(again.render(), run.render());
}
