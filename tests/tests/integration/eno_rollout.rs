//! The rollout controller end to end: the lifecycle, status and rollout controllers in
//! `kube::runtime::Controller`, a kubelet stand-in and the in-pod executor, against the
//! in-process fake API server. Ports upstream's `TestControllerRollout` and
//! `TestControllerSynthesizerRolloutCooldown`, and checks that the cooldown spaces the
//! compositions of one rollout.

use crate::eno_support;

use std::time::{Duration, Instant};

use controllers::eno::types::{Composition, GoDuration, Synthesizer};
use eno_support::*;
use kube::api::{Api, PostParams};
use kube::Client;

/// The composition's current synthesis: (synthesized, observed synthesizer generation).
fn observed(comp: &Composition) -> (bool, i64) {
    comp.status
        .as_ref()
        .and_then(|s| s.current_synthesis.as_ref())
        .map(|c| (c.synthesized.is_some(), c.observed_synthesizer_generation))
        .unwrap_or((false, 0))
}

/// The output synthesizer with the given rollout cooldown.
fn synthesizer_with_cooldown(name: &str, cooldown: Duration) -> Synthesizer {
    let mut syn = output_synthesizer(name);
    syn.spec.rollout_cooldown = Some(GoDuration(cooldown));
    syn
}

/// Change the synthesizer's image with an rv-checked update (retrying conflicts); returns the
/// new generation.
async fn update_image(client: &Client, name: &str, image: &str) -> i64 {
    let api = Api::<Synthesizer>::all(client.clone());
    for _ in 0..50 {
        let mut syn = api.get(name).await.unwrap();
        syn.spec.image = image.into();
        match api.replace(name, &PostParams::default(), &syn).await {
            Ok(updated) => return updated.metadata.generation.unwrap_or(0),
            Err(kube::Error::Api(s)) if s.code == 409 => continue,
            Err(e) => panic!("updating synthesizer: {e}"),
        }
    }
    panic!("synthesizer kept conflicting");
}

/// Wait until the composition is synthesized by at least `syn_generation`.
async fn wait_observed(env: &Env, name: &str, syn_generation: i64) -> Composition {
    wait_for(
        &format!("default/{name} synthesized by synthesizer generation {syn_generation}"),
        WAIT,
        || async {
            let comp = env.composition("default", name).await?;
            let (synthesized, generation) = observed(&comp);
            (synthesized && generation >= syn_generation).then_some(comp)
        },
    )
    .await
}

/// Wait until the composition is at least `age` old (younger ones are not rolled out to).
async fn wait_older_than(comp: &Composition, age: Duration) {
    let created = comp.metadata.creation_timestamp.as_ref().unwrap().0;
    let elapsed = jiff::Timestamp::now().duration_since(created);
    let elapsed = Duration::try_from(elapsed).unwrap_or(Duration::ZERO);
    if let Some(rest) = age.checked_sub(elapsed) {
        tokio::time::sleep(rest + Duration::from_millis(50)).await;
    }
}

/// Upstream `TestControllerRollout`: a synthesizer change is eventually rolled out to its
/// composition, which is resynthesized by the new synthesizer generation.
#[tokio::test]
async fn controller_rollout() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let env = Env::start(EnvOptions::full()).await;
        create_synthesizer(
            &env.client,
            &synthesizer_with_cooldown("test-syn", Duration::from_millis(10)),
        )
        .await;
        create_composition(&env.client, "default", "test-comp", "test-syn").await;

        // Initial creation.
        let comp = wait_observed(&env, "test-comp", 1).await;
        assert_eq!(comp.spec.synthesizer.min_generation, 0);
        let generation_before = comp.metadata.generation.unwrap();

        // Synthesizer update.
        let syn_generation = update_image(&env.client, "test-syn", "updated-image").await;
        assert_eq!(syn_generation, 2);
        let comp = wait_observed(&env, "test-comp", syn_generation).await;
        assert_eq!(comp.spec.synthesizer.min_generation, syn_generation);
        assert!(
            comp.metadata.generation.unwrap() > generation_before,
            "the rollout bumped the composition's generation"
        );

        // The rollout is recorded as complete on the synthesizer.
        let status = wait_for("rollout recorded complete", WAIT, || async {
            let syn = Api::<Synthesizer>::all(env.client.clone())
                .get("test-syn")
                .await
                .ok()?;
            let status = syn.status?;
            (status.current_generation == syn_generation).then_some(status)
        })
        .await;
        assert!(status.last_rollout_time.is_some());
        env.stop().await;
    })
    .await
    .expect("test timed out");
}

/// Upstream `TestControllerSynthesizerRolloutCooldown`: a second synthesizer change within the
/// cooldown of the last rollout step is not rolled out yet. (Upstream's second change writes
/// the same image again, so the generation does not move and nothing could roll out; here it
/// is a real change, and it rolls out once the cooldown is over.)
#[tokio::test]
async fn controller_synthesizer_rollout_cooldown() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let cooldown = Duration::from_millis(2_000);
        let env = Env::start(EnvOptions::full()).await;
        create_synthesizer(
            &env.client,
            &synthesizer_with_cooldown("test-syn", cooldown),
        )
        .await;
        create_composition(&env.client, "default", "test-comp", "test-syn").await;

        // Wait for the initial sync, and until the composition is old enough to roll out to.
        let comp = wait_observed(&env, "test-comp", 1).await;
        wait_older_than(&comp, cooldown).await;

        // The first synthesizer update is applied to the composition.
        let first = update_image(&env.client, "test-syn", "updated-image").await;
        wait_observed(&env, "test-comp", first).await;
        let syn = wait_for("last rollout time recorded", WAIT, || async {
            let syn = Api::<Synthesizer>::all(env.client.clone())
                .get("test-syn")
                .await
                .ok()?;
            syn.status
                .as_ref()?
                .last_rollout_time
                .is_some()
                .then_some(syn)
        })
        .await;
        let last_rollout = syn.status.unwrap().last_rollout_time.unwrap().0;

        // The second update is not applied while the cooldown lasts.
        let second = update_image(&env.client, "test-syn", "updated-again").await;
        assert_eq!(second, first + 1);
        let original = env.composition("default", "test-comp").await.unwrap();
        tokio::time::sleep(Duration::from_millis(250)).await;
        let since_last = jiff::Timestamp::now().duration_since(last_rollout);
        assert!(
            since_last < jiff::SignedDuration::try_from(cooldown).unwrap(),
            "the check ran inside the cooldown ({since_last:?})"
        );
        let comp = env.composition("default", "test-comp").await.unwrap();
        assert_eq!(
            original.metadata.generation, comp.metadata.generation,
            "spec hasn't been updated"
        );
        assert_eq!(comp.spec.synthesizer.min_generation, first);

        // Once the cooldown is over it is.
        let comp = wait_observed(&env, "test-comp", second).await;
        assert_eq!(comp.spec.synthesizer.min_generation, second);
        let syn = Api::<Synthesizer>::all(env.client.clone())
            .get("test-syn")
            .await
            .unwrap();
        let stepped = syn.status.unwrap().last_rollout_time.unwrap().0;
        assert!(
            stepped.duration_since(last_rollout)
                >= jiff::SignedDuration::try_from(cooldown).unwrap(),
            "the second step waited for the cooldown"
        );
        env.stop().await;
    })
    .await
    .expect("test timed out");
}

/// One rollout reaches every composition, one per cooldown: the second composition's
/// `minGeneration` is set a cooldown after the first's. `lastRolloutTime` is a `metav1.Time`,
/// stored in whole seconds (as upstream's), so a step may come up to a second early.
#[tokio::test]
async fn cooldown_spaces_the_compositions_of_one_rollout() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let cooldown = Duration::from_millis(2_000);
        let env = Env::start(EnvOptions::full()).await;
        create_synthesizer(
            &env.client,
            &synthesizer_with_cooldown("test-syn", cooldown),
        )
        .await;
        create_composition(&env.client, "default", "comp-a", "test-syn").await;
        create_composition(&env.client, "default", "comp-b", "test-syn").await;
        wait_observed(&env, "comp-a", 1).await;
        let b = wait_observed(&env, "comp-b", 1).await;
        wait_older_than(&b, cooldown).await;

        let generation = update_image(&env.client, "test-syn", "updated-image").await;
        let started = Instant::now();
        let mut rolled: Vec<(String, Duration)> = Vec::new();
        while rolled.len() < 2 {
            assert!(
                started.elapsed() < WAIT,
                "rollout did not finish: {rolled:?}"
            );
            for name in ["comp-a", "comp-b"] {
                if rolled.iter().any(|(n, _)| n == name) {
                    continue;
                }
                let comp = env.composition("default", name).await.unwrap();
                if comp.spec.synthesizer.min_generation == generation {
                    rolled.push((name.to_string(), started.elapsed()));
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(
            rolled.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["comp-a", "comp-b"],
            "namespace/name order"
        );
        let gap = rolled[1].1 - rolled[0].1;
        assert!(
            gap > cooldown - Duration::from_secs(1),
            "second composition rolled out {gap:?} after the first; cooldown is {cooldown:?}"
        );
        assert!(
            rolled[0].1 < cooldown,
            "the first step does not wait: {rolled:?}"
        );
        wait_observed(&env, "comp-a", generation).await;
        wait_observed(&env, "comp-b", generation).await;
        env.stop().await;
    })
    .await
    .expect("test timed out");
}
