//! Race tests of Karpenter's termination guard (spec §8.8) and of the garbage collection that
//! holds the split-write duplicate (§6.3), through the production wiring with Nodes (kwok
//! provider, kubelet stand-in, node termination). Seeds: `HARNESS_SEEDS=n` (default 40).

use harness::check::{self, scenario};
use harness::engine::{seeds_from_env, ExploreOptions, Target};
use rstest::rstest;

/// With a guard removed, exploration from seed 0 breaks one of `properties` (an invariant, or
/// for garbage collection the goal it alone reaches), and the shrunk schedule replays exactly.
#[rstest]
#[case::termination_waits_for_nodes(
    "karpenter/without-termination-waits-for-nodes",
    &["instance deleted only after its Nodes"]
)]
#[case::garbage_collection(
    "karpenter/without-garbage-collection",
    &["a leaked instance is collected within", "no leaked instance once quiet"]
)]
fn a_removed_guard_is_found_shrunk_and_replayed(#[case] name: &str, #[case] properties: &[&str]) {
    println!(
        "{}",
        check::removed_guard_is_found(name, properties, false, 300)
    );
}

#[rstest]
#[case::termination_waits_for_nodes("karpenter/termination-waits-for-nodes")]
#[case::garbage_collection("karpenter/garbage-collection")]
fn a_guard_in_place_holds_under_faults_and_every_run_converges(#[case] name: &str) {
    check::guard_holds(name, seeds_from_env(0..40));
}

/// The leak garbage collection holds is real: the first run that leaks without it is, with the
/// same seed and garbage collection on, a run that collects the instance and converges.
#[test]
fn garbage_collection_collects_the_instance_a_crash_leaked() {
    let without = scenario("karpenter/without-garbage-collection");
    let report = without.explore(0..300, ExploreOptions::default(), |_, _| {});
    let failure = report.failures.first().expect("a leak without GC");
    assert!(
        failure.run.render().contains("injected: crash and restart"),
        "the leak comes from a crash"
    );
    let with = scenario("karpenter/garbage-collection").run(failure.seed);
    assert_eq!(with.violation, None, "{}", with.render());
    let text = with.render();
    assert!(
        text.contains("injected: crash and restart"),
        "the same crash happens"
    );
}
