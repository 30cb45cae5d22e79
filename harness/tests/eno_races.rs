//! Eno's informer-lag races under the harness. With the live pod list before a create defeated
//! (spec §7.4), a seeded schedule makes the lifecycle controller create a second pod for the same
//! synthesis; with status writes that do not carry the cached resourceVersion (§7.2, §7.3), a
//! stale copy wins and a second pod appears or a finished synthesis is orphaned; with every guard
//! in place, no explored schedule breaks an invariant. Same seed, same trace.

use std::time::Duration;

use harness::choices::Chooser;
use harness::engine::{explore, replay, report, run, seeds_from_env, shrink, Failure};
use harness::eno::{EnoModel, Guards};

const MAX_STEPS: usize = 120;

async fn guarded(seed: u64) -> EnoModel {
    EnoModel::new(seed, Guards::default(), Duration::from_secs(120)).await
}

async fn crashing(seed: u64) -> EnoModel {
    EnoModel::new(seed, Guards::default(), Duration::from_secs(120))
        .await
        .allowing_crash()
}

async fn dropping_watches(seed: u64) -> EnoModel {
    EnoModel::new(seed, Guards::default(), Duration::from_secs(120))
        .await
        .allowing_watch_drops()
}

async fn defeated(seed: u64) -> EnoModel {
    EnoModel::new(
        seed,
        Guards {
            live_pod_list: false,
            ..Guards::default()
        },
        Duration::from_secs(120),
    )
    .await
}

async fn unchecked_status_writes(seed: u64) -> EnoModel {
    EnoModel::new(
        seed,
        Guards {
            rv_checked_status_writes: false,
            ..Guards::default()
        },
        Duration::from_secs(120),
    )
    .await
}

#[tokio::test(flavor = "current_thread")]
async fn the_same_seed_gives_the_same_trace() {
    let mut a = guarded(11).await;
    let mut b = guarded(11).await;
    let first = run(
        &mut a,
        &mut harness::choices::Chooser::seeded(11),
        MAX_STEPS,
    )
    .await;
    let second = run(
        &mut b,
        &mut harness::choices::Chooser::seeded(11),
        MAX_STEPS,
    )
    .await;
    assert!(first.trace.len() > 10, "{}", first.render());
    assert_eq!(first.render(), second.render());
    let replayed = replay(&guarded, 11, first.choices.clone(), MAX_STEPS).await;
    assert_eq!(replayed.render(), first.render());
}

#[tokio::test(flavor = "current_thread")]
async fn without_the_live_pod_list_a_second_pod_is_created() {
    let failure = explore(defeated, seeds_from_env(0..64), MAX_STEPS)
        .await
        .expect("some schedule delivers the status write before the pod's ADDED event");
    let shrunk = shrink(&defeated, &failure, MAX_STEPS).await;
    let text = report(
        "eno_races",
        "without_the_live_pod_list_a_second_pod_is_created",
        &failure,
        &shrunk,
    );
    println!("{text}");
    let violation = shrunk.violation.as_deref().unwrap_or_default();
    assert!(violation.contains("2 live synthesizer pods"), "{text}");
    assert!(shrunk.trace.len() <= failure.run.trace.len());
    // The shrunk schedule is itself a replayable failure.
    let again = replay(&defeated, failure.seed, shrunk.choices.clone(), MAX_STEPS).await;
    assert_eq!(again.violation, shrunk.violation);
}

#[tokio::test(flavor = "current_thread")]
async fn without_rv_checked_status_writes_stale_copies_win() {
    // A status write from a stale copy that succeeds either mints a second UUID over one that
    // already has a pod (spec §7.3: a second pod) or swaps away a synthesis it has not seen
    // complete (§7.2: its output orphaned). Either breaks an invariant.
    // The window is narrow (the executor must finish between the spec change and the lifecycle
    // controller's next look, while its cache lags), so more seeds are explored.
    let failure = explore(unchecked_status_writes, seeds_from_env(0..300), MAX_STEPS)
        .await
        .expect("some schedule writes status from a stale copy");
    let shrunk = shrink(&unchecked_status_writes, &failure, MAX_STEPS).await;
    let text = report(
        "eno_races",
        "without_rv_checked_status_writes_stale_copies_win",
        &failure,
        &shrunk,
    );
    println!("{text}");
    let violation = shrunk.violation.as_deref().unwrap_or_default();
    assert!(
        violation.contains("is no longer recorded") || violation.contains("live synthesizer pods"),
        "{text}"
    );
    let again = replay(
        &unchecked_status_writes,
        failure.seed,
        shrunk.choices.clone(),
        MAX_STEPS,
    )
    .await;
    assert_eq!(again.violation, shrunk.violation);
}

#[tokio::test(flavor = "current_thread")]
async fn with_every_guard_no_schedule_breaks_an_invariant() {
    if let Some(failure) = explore(guarded, seeds_from_env(0..64), MAX_STEPS).await {
        let shrunk = shrink(&guarded, &failure, MAX_STEPS).await;
        panic!(
            "{}",
            report(
                "eno_races",
                "with_every_guard_no_schedule_breaks_an_invariant",
                &failure,
                &shrunk
            )
        );
    }
}

/// Runs the seeds of `make` (every guard in place) and checks that no run breaks an invariant,
/// that some run took a step starting with `disruption` and still completed a synthesis after
/// it, and that such a run repeats byte for byte.
async fn survives<F, Fut>(make: F, disruption: &str, case: &str)
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = EnoModel>,
{
    let (mut disrupted, mut completed_after) = (Vec::new(), 0);
    for seed in seeds_from_env(0..64) {
        let run = run(&mut make(seed).await, &mut Chooser::seeded(seed), MAX_STEPS).await;
        if let Some(at) = run.trace.iter().position(|l| l.starts_with(disruption)) {
            disrupted.push(seed);
            if run.trace[at..]
                .iter()
                .any(|l| l.starts_with("executor ") && l.contains(" completes: "))
            {
                completed_after += 1;
            }
        }
        if run.violation.is_some() {
            let failure = Failure { seed, run };
            let shrunk = shrink(&make, &failure, MAX_STEPS).await;
            panic!("{}", report("eno_races", case, &failure, &shrunk));
        }
    }
    assert!(!disrupted.is_empty(), "no explored run took {disruption:?}");
    assert!(
        completed_after > 0,
        "no synthesis completed after {disruption:?} in {} runs",
        disrupted.len()
    );
    let seed = disrupted[0];
    let first = run(&mut make(seed).await, &mut Chooser::seeded(seed), MAX_STEPS).await;
    let again = run(&mut make(seed).await, &mut Chooser::seeded(seed), MAX_STEPS).await;
    assert_eq!(first.render(), again.render());
}

/// Eno keeps its guards in the API server (a live pod list, resourceVersion-checked writes), so
/// a crash and restart of the controller process anywhere in the run breaks nothing, and the
/// restarted controllers pick the work up again.
#[tokio::test(flavor = "current_thread")]
async fn with_every_guard_a_crash_breaks_no_invariant() {
    survives(
        crashing,
        "crash and restart the controllers",
        "with_every_guard_a_crash_breaks_no_invariant",
    )
    .await;
}

/// A dropped watch makes one cache list again, skipping the events it had not seen (a deleted
/// pod leaves it without a Delete event): no invariant breaks and the work goes on.
#[tokio::test(flavor = "current_thread")]
async fn with_every_guard_a_dropped_watch_breaks_no_invariant() {
    survives(
        dropping_watches,
        "drop the ",
        "with_every_guard_a_dropped_watch_breaks_no_invariant",
    )
    .await;
}
