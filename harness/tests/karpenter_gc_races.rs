//! Race tests of Karpenter's termination guard (spec §8.8) and of the garbage collection that
//! holds the split-write duplicate (§6.3), through the production wiring with Nodes (kwok
//! provider, kubelet stand-in, node termination). Seeds: `HARNESS_SEEDS=n` (default 40).

use harness::engine::{seeds_from_env, ExploreOptions, Target};
use harness::scenario::Scenario;
use rstest::rstest;

fn scenario(name: &str) -> Scenario {
    harness::scenarios::find(name).unwrap_or_else(|| panic!("no scenario {name}"))
}

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
    let scenario = scenario(name);
    let report = scenario.explore(0..300, ExploreOptions::default(), |_, _| {});
    let failure = report
        .failures
        .first()
        .unwrap_or_else(|| panic!("{name}: no failure in {} seeds", report.runs))
        .clone();
    let violation = failure.run.violation.clone().unwrap_or_default();
    let property = |v: &str| {
        properties
            .iter()
            .find(|p| v.starts_with(*p) || v.contains(&format!(": {p}:")))
            .copied()
    };
    let broken = property(&violation).unwrap_or_else(|| panic!("{name}: {violation}"));
    let shrunk = scenario.shrink(&failure);
    let text = scenario.report(&failure, &shrunk);
    println!("{text}");
    assert!(shrunk.trace.len() <= failure.run.trace.len(), "{text}");
    assert_eq!(
        shrunk.violation.as_deref().and_then(property),
        Some(broken),
        "{text}"
    );
    let again = scenario.replay(failure.seed, shrunk.choices.clone());
    assert_eq!(
        again.render(),
        shrunk.render(),
        "the shrunk schedule replays exactly"
    );
}

#[rstest]
#[case::termination_waits_for_nodes("karpenter/termination-waits-for-nodes")]
#[case::garbage_collection("karpenter/garbage-collection")]
fn a_guard_in_place_holds_under_faults_and_every_run_converges(#[case] name: &str) {
    let scenario = scenario(name);
    assert!(
        scenario.config.faults.budget > 0 && scenario.config.faults.crashes,
        "{name} explores with crashes on"
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
