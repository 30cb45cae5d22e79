//! Karpenter's launch-cache race (spec §8.2) under the harness: the instance is created, the
//! status patch that would record `Launched` fails, and the next reconcile launches again. With
//! the launch cache defeated some schedule leaks an instance; with it, none does — unless the
//! controller crashes inside that window (spec §6.3, kept as upstream has it), which the harness
//! finds too.

use harness::engine::{explore, replay, report, seeds_from_env, shrink};
use harness::karpenter::{Guards, KarpenterModel};

const MAX_STEPS: usize = 80;

async fn guarded(seed: u64) -> KarpenterModel {
    KarpenterModel::new(seed, Guards::default()).await
}

async fn crashing(seed: u64) -> KarpenterModel {
    KarpenterModel::new(seed, Guards::default())
        .await
        .allowing_crash()
}

async fn defeated(seed: u64) -> KarpenterModel {
    KarpenterModel::new(
        seed,
        Guards {
            launch_cache: false,
        },
    )
    .await
}

/// Explores `make` until a schedule leaks an instance, shrinks it, checks that the replay of the
/// shrunk schedule is the same run, and returns its trace.
async fn finds_a_leak<F, Fut>(make: F, case: &str) -> String
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = KarpenterModel>,
{
    let failure = explore(&make, seeds_from_env(0..64), MAX_STEPS)
        .await
        .expect("some schedule leaks an instance");
    let shrunk = shrink(&make, &failure, MAX_STEPS).await;
    let text = report("karpenter_races", case, &failure, &shrunk);
    println!("{text}");
    assert!(
        shrunk
            .violation
            .as_deref()
            .is_some_and(|v| v.contains("an instance leaked")),
        "{text}"
    );
    let again = replay(&make, failure.seed, shrunk.choices.clone(), MAX_STEPS).await;
    assert_eq!(again.render(), shrunk.render());
    shrunk.render()
}

#[tokio::test(flavor = "current_thread")]
async fn without_the_launch_cache_a_failed_status_patch_leaks_an_instance() {
    finds_a_leak(
        defeated,
        "without_the_launch_cache_a_failed_status_patch_leaks_an_instance",
    )
    .await;
}

#[tokio::test(flavor = "current_thread")]
async fn with_the_launch_cache_no_schedule_leaks_an_instance() {
    if let Some(failure) = explore(guarded, seeds_from_env(0..64), MAX_STEPS).await {
        let shrunk = shrink(&guarded, &failure, MAX_STEPS).await;
        panic!(
            "{}",
            report(
                "karpenter_races",
                "with_the_launch_cache_no_schedule_leaks_an_instance",
                &failure,
                &shrunk
            )
        );
    }
}

/// Spec §6.3: after a launch whose status patch failed, only the in-memory launch cache stops a
/// second Create; a crash in that window loses it. The port keeps upstream's split writes, so
/// the harness must find the duplicate instance, shrink it to the crash in the window, and
/// replay it.
#[tokio::test(flavor = "current_thread")]
async fn a_crash_between_launch_and_recorded_status_leaks_an_instance() {
    let rendered = finds_a_leak(
        crashing,
        "a_crash_between_launch_and_recorded_status_leaks_an_instance",
    )
    .await;
    let (fail_at, crash_at) = (
        rendered.find("fail the next nodeclaim status patch"),
        rendered.find("crash and restart the controller"),
    );
    assert!(
        matches!((fail_at, crash_at), (Some(f), Some(c)) if f < c),
        "the shrunk schedule fails the status patch, then crashes:\n{rendered}"
    );
}
