//! kube-controller-manager's garbage collector and namespace controller scheduled by the harness
//! as actors (`harness::scenarios::kube_controller_manager`): each piece of their work is a step
//! of the schedule, so the seed decides when dependents go. Seeds: `HARNESS_SEEDS=n` (default
//! 100).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use harness::check::{self, scenario};
use harness::engine::{seeds_from_env, ExploreOptions, Target};
use harness::scenario::Scenario;
use harness::scenarios::kube_controller_manager::{world, Policy, NAMESPACE};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use kube::ResourceExt;
use rstest::rstest;
use serde_json::json;

/// Each propagation policy: no seed breaks an invariant under faults, every run collects every
/// dependent of a gone owner and lets the deleted namespace go.
#[rstest]
#[case::foreground("kube-controller-manager/foreground-deletion")]
#[case::background("kube-controller-manager/background-deletion")]
#[case::orphan("kube-controller-manager/orphan-deletion")]
fn each_policy_holds_under_faults_and_converges(#[case] name: &str) {
    let exploration = check::guard_holds(name, seeds_from_env(0..100));
    assert!(exploration.failures.is_empty());
}

/// The collector's lane, as traces show it.
const GC: &str = "[kube-controller-manager/garbage-collector-controller]";

/// The order in which the objects of a run went, by the step that removed each (the
/// collector's writes and the clients' requests alike).
fn order_of_events(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| {
            (l.contains(GC) && l.ends_with("write") || l.ends_with("writes"))
                || l.contains("[releaser] PATCH")
                || l.contains("[world] DELETE")
        })
        .map(|l| {
            // Drop the step number and time: keep who did what.
            l.split_once(" [")
                .map(|(_, rest)| rest.to_string())
                .unwrap_or_default()
        })
        .collect()
}

/// The same seed gives the same run, step for step; different seeds put the collector's work at
/// different points relative to the clients' requests (the seed decides when dependents go).
#[test]
fn the_seed_decides_when_the_collector_acts_and_replays_exactly() {
    let scenario = scenario("kube-controller-manager/foreground-deletion");
    let mut orders = BTreeSet::new();
    for seed in 0..12 {
        let first = scenario.run(seed);
        let again = scenario.run(seed);
        assert_eq!(first.render(), again.render(), "seed {seed} replays");
        assert_eq!(first.choices, again.choices);
        let text = first.render();
        assert!(text.contains(GC), "seed {seed}: the collector is scheduled");
        orders.insert(order_of_events(&text));
    }
    assert!(
        orders.len() >= 6,
        "12 seeds give {} orders of the collector's and the clients' writes",
        orders.len()
    );
    let replayed = scenario.replay(3, scenario.run(3).choices);
    assert_eq!(replayed.render(), scenario.run(3).render());
}

/// The collector acts only when the schedule says: with background propagation the owner goes
/// at once, and its dependents stay for as many steps as the seed lets pass before the
/// collector's steps run — a different number in different runs.
#[test]
fn dependents_outlive_a_background_deleted_owner_for_as_long_as_the_seed_says() {
    // Per run: steps observed with the owner gone and a dependent of it still there.
    let lag = Arc::new(Mutex::new(0usize));
    let probe = lag.clone();
    let scenario = Scenario::new(
        "kube-controller-manager/background-deletion-probed",
        "counts the steps a dependent outlives its owner",
        move |w| {
            world(w, Policy::Background);
            let probe = probe.clone();
            let owner_uid = RefCell::new(String::new());
            *probe.lock().unwrap() = 0;
            w.invariant("probe", move |server| {
                let (_, cms) = server.list_objects("v1", "configmaps", Some(NAMESPACE));
                let mut owner_uid = owner_uid.borrow_mut();
                match cms.iter().find(|c| c["metadata"]["name"] == "owner") {
                    Some(owner) => {
                        *owner_uid = owner["metadata"]["uid"].as_str().unwrap_or("").into()
                    }
                    None if !owner_uid.is_empty() => {
                        let named = |c: &&serde_json::Value| {
                            c["metadata"]["ownerReferences"]
                                .as_array()
                                .is_some_and(|r| r.iter().any(|r| r["uid"] == *owner_uid))
                        };
                        if cms.iter().any(|c| named(&c)) {
                            *probe.lock().unwrap() += 1;
                        }
                    }
                    None => {}
                }
                Ok(())
            });
        },
    );
    let mut lags = BTreeSet::new();
    for seed in 0..12 {
        let run = scenario.run(seed);
        assert_eq!(run.violation, None, "{}", run.render());
        lags.insert(*lag.lock().unwrap());
    }
    assert!(
        lags.iter().any(|l| *l > 0),
        "dependents outlive their owner by some steps: {lags:?}"
    );
    assert!(lags.len() >= 3, "the seed decides for how long: {lags:?}");
}

/// The invariant has teeth: a client that takes the owner's `foregroundDeletion` finalizer away
/// (which the API server allows) lets the owner go before its blocking dependents, and
/// exploration finds it; the shrunk schedule replays exactly.
#[test]
fn a_client_removing_foreground_deletion_breaks_the_invariant() {
    let broken = Scenario::new(
        "kube-controller-manager/meddled-foreground-deletion",
        "a client strips the owner's foregroundDeletion finalizer",
        |w| {
            world(w, Policy::Foreground);
            w.actor("meddler", |env| {
                async move {
                    let api: Api<ConfigMap> = Api::namespaced(env.client, NAMESPACE);
                    loop {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        let Ok(Some(owner)) = api.get_opt("owner").await else {
                            continue;
                        };
                        if owner.metadata.deletion_timestamp.is_none() {
                            continue;
                        }
                        let rest: Vec<&String> = owner
                            .finalizers()
                            .iter()
                            .filter(|f| *f != "foregroundDeletion")
                            .collect();
                        let patch = json!({"metadata": {"finalizers": rest}});
                        let _ = api
                            .patch("owner", &PatchParams::default(), &Patch::Merge(&patch))
                            .await;
                        return;
                    }
                }
                .boxed()
            });
        },
    );
    let exploration = broken.explore(0..60, ExploreOptions::default(), |_, _| {});
    let failure = exploration
        .failures
        .first()
        .expect("a run where the owner goes first");
    let violation = failure.run.violation.clone().unwrap_or_default();
    assert!(
        violation
            .starts_with("an owner deleted in the foreground outlives its blocking dependents"),
        "{violation}"
    );
    let shrunk = broken.shrink(failure);
    let again = broken.replay(failure.seed, shrunk.choices.clone());
    assert_eq!(again.render(), shrunk.render());
}

/// Eno's composition deleted in the foreground: the collector, scheduled, deletes its slices
/// while Eno's finalizer still holds it and the reconciler still cleans up; under faults no seed
/// lets it go before its slices or before its output, and every run converges.
#[test]
fn an_eno_composition_deleted_in_the_foreground_holds_and_converges() {
    check::guard_holds("eno/foreground-deletion", seeds_from_env(0..20));
}

/// The Eno scenario is not vacuous: in most runs the collector itself deletes a slice of the
/// composition (rather than Eno's slice cleanup getting there first).
#[test]
fn the_collector_deletes_eno_slices_in_most_runs() {
    let scenario = scenario("eno/foreground-deletion");
    let collected = (0..10)
        .filter(|seed| {
            scenario.run(*seed).render().lines().any(|l| {
                l.contains(GC)
                    && l.contains("attempt to delete resourceslices")
                    && l.ends_with(": 1 write")
            })
        })
        .count();
    assert!(collected >= 5, "in {collected} of 10 runs");
}
