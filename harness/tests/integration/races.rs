//! The race scenarios, through the controllers' production wiring.
//!
//! For each removed guard, exploration from seed 0 finds the bad outcome, shrinks it, and the
//! shrunk schedule replays into the same run. For each guard in place, exploration with faults on
//! breaks no invariant and every run reaches its goal once faults stop. Seeds:
//! `HARNESS_SEEDS=n` (default 60 here, 500 for both controllers at once; `make race` runs more,
//! in release).

use harness::check::{self, scenario};
use harness::engine::{seeds_from_env, ExploreOptions, Target};
use rstest::rstest;

#[rstest]
#[case::eno_live_pod_list("eno/without-live-pod-list", "one live synthesizer pod")]
#[case::eno_rv_checked_status_writes("eno/without-rv-checked-status-writes", "")]
#[case::eno_cache_sync("eno/without-cache-sync", "no spurious SynthesizerNotFound")]
#[case::karpenter_launch_cache("karpenter/without-launch-cache", "one instance per NodeClaim")]
#[case::karpenter_crash_after_launch("karpenter/crash-after-launch", "one instance per NodeClaim")]
fn a_removed_guard_is_found_shrunk_and_replayed(#[case] name: &str, #[case] invariant: &str) {
    println!(
        "{}",
        check::removed_guard_is_found(name, &[invariant], false, 300)
    );
}

#[rstest]
#[case::eno_live_pod_list("eno/live-pod-list")]
#[case::eno_rv_checked_status_writes("eno/rv-checked-status-writes")]
#[case::eno_cache_sync("eno/cache-sync")]
#[case::karpenter_launch_cache("karpenter/launch-cache")]
fn a_guard_in_place_holds_under_faults_and_every_run_converges(#[case] name: &str) {
    check::guard_holds(name, seeds_from_env(0..60));
}

/// Both controllers with every guard, their world actors and every fault kind: 500 seeds in CI
/// (in four slices, so they run side by side), 10 000 in `make race`.
#[rstest]
#[case::seeds_0_to_125(0..125)]
#[case::seeds_125_to_250(125..250)]
#[case::seeds_250_to_375(250..375)]
#[case::seeds_375_to_500(375..500)]
fn both_controllers_with_every_guard_hold_under_faults(#[case] seeds: std::ops::Range<u64>) {
    check::guard_holds("both/every-guard", seeds_from_env(seeds));
}

#[rstest]
#[case::eno("eno/live-pod-list")]
#[case::eno_request_faults("eno/rv-checked-status-writes")]
#[case::karpenter("karpenter/launch-cache")]
fn the_same_seed_gives_the_same_trace(#[case] name: &str) {
    let scenario = scenario(name);
    let report = scenario.explore(
        0..8,
        ExploreOptions {
            stop_after: 0,
            check_determinism: true,
        },
        |_, _| {},
    );
    assert!(
        report.nondeterministic.is_empty(),
        "{:?}",
        report.nondeterministic
    );
    let a = scenario.run(3);
    let b = scenario.run(3);
    assert_eq!(a.render(), b.render());
    let replayed = scenario.replay(3, a.choices.clone());
    assert_eq!(replayed.render(), a.render());
}

/// Requests inside one reconcile interleave with other actors: the schedule releases the
/// lifecycle controller's status write and the kubelet's requests in either order.
#[test]
fn requests_of_different_processes_interleave() {
    let scenario = scenario("eno/live-pod-list");
    let mut orders = std::collections::BTreeSet::new();
    for seed in 0..10 {
        let run = scenario.run(seed);
        let lanes: Vec<&str> = run
            .trace
            .iter()
            .filter(|s| s.lane == "eno" || s.lane == "kubelet")
            .map(|s| s.lane.as_str())
            .collect();
        orders.insert(lanes.join(","));
    }
    assert!(orders.len() > 5, "{orders:?}");
}

#[test]
fn a_failing_run_renders_as_a_timeline() {
    let scenario = scenario("karpenter/without-launch-cache");
    let report = scenario.explore(0..300, ExploreOptions::default(), |_, _| {});
    let failure = report.failures.first().expect("a failure");
    let html = harness::show::html(&failure.run, &scenario.name);
    assert!(html.contains("an instance leaked"));
    assert!(html.contains("karpenter/watch"));
    let text = harness::show::text(&failure.run, &scenario.name);
    assert!(text.contains("VIOLATION"));
}

/// Two processes, the same seed, the same trace: nothing of the host (wall clock, hash seeds,
/// thread ids) reaches a run. Event names were once made from the wall clock.
#[rstest]
#[case::eno("eno/rv-checked-status-writes", 2)]
#[case::karpenter("karpenter/crash-after-launch", 5)]
fn the_same_seed_gives_the_same_trace_in_another_process(#[case] name: &str, #[case] seed: u64) {
    let replay = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(["replay", "--scenario", name, "--seed", &seed.to_string()])
            .output()
            .expect("the harness binary runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let first = replay();
    assert!(first.lines().count() > 10, "{first}");
    assert_eq!(first, replay());
}

/// A targeted plan holds lanes back until named steps have happened: here the kubelet stays
/// still until the Eno controller has created its first pod (it moves earlier only when nothing
/// else can). The decisions of a planned run replay without the plan.
#[test]
fn a_targeted_plan_holds_a_lane_until_its_step() {
    use harness::engine::Target;
    use harness::sim::Hold;
    let plain = scenario("eno/live-pod-list");
    let planned = plain.clone().configure(|c| {
        c.plan = vec![Hold::lane(
            "kubelet",
            "eno POST /api/v1/namespaces/eno/pods",
            1,
        )]
    });
    let kubelet_steps_before_first_pod = |run: &harness::trace::Run| {
        let first_pod = run
            .trace
            .iter()
            .position(|s| s.lane == "eno" && s.action == "POST /api/v1/namespaces/eno/pods")
            .unwrap_or(run.trace.len());
        run.trace[..first_pod]
            .iter()
            .filter(|s| s.lane.contains("kubelet"))
            .count()
    };
    let (mut with_plan, mut without_plan) = (0, 0);
    for seed in 0..8 {
        let run = planned.run(seed);
        assert_eq!(run.violation, None);
        with_plan += kubelet_steps_before_first_pod(&run);
        without_plan += kubelet_steps_before_first_pod(&plain.run(seed));
        assert_eq!(
            plain.replay(seed, run.choices.clone()).render(),
            run.render()
        );
    }
    println!("kubelet steps before the first pod: {with_plan} planned, {without_plan} not");
    assert!(
        with_plan * 3 < without_plan,
        "{with_plan} vs {without_plan}"
    );
}
