//! The slice cleanup controller against the in-process fake API server, as production wires it
//! (`EnoControllers`). Ports upstream's `TestSliceCleanupControllerOrphanedSlice` and checks the
//! slices it must keep (referenced, newer than the cached composition, young with a missing
//! composition), and that a resynthesis's superseded slices go away end to end.

use crate::eno_support;

use std::time::Duration;

use controllers::eno::types::{Composition, ResourceSlice, ResourceSliceRef, Synthesis};
use controllers::eno::FINALIZER;
use eno_support::*;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use kube::api::{Api, PostParams};
use kube::{Client, Resource, ResourceExt};

/// Only the controllers, no kubelet: slices are written by the test.
fn controllers_only() -> EnvOptions {
    EnvOptions {
        pod_namespace: "eno-system".into(),
        status_controller: true,
        kubelet: None,
        max_error_backoff: eno_support::TEST_ERROR_BACKOFF,
    }
}

/// Write the composition's current synthesis (retrying conflicts with the controllers' writes).
async fn set_current_synthesis(
    client: &Client,
    name: &str,
    synthesis: impl Fn(&Composition) -> Synthesis,
) -> Composition {
    let api = Api::<Composition>::namespaced(client.clone(), "default");
    for _ in 0..50 {
        let mut comp = api.get(name).await.unwrap();
        let current = synthesis(&comp);
        comp.status
            .get_or_insert_with(Default::default)
            .current_synthesis = Some(current);
        match api
            .replace_status(name, &PostParams::default(), &comp)
            .await
        {
            Ok(updated) => return updated,
            Err(kube::Error::Api(s)) if s.code == 409 => continue,
            Err(e) => panic!("writing status: {e}"),
        }
    }
    panic!("composition kept conflicting");
}

/// A synthesized synthesis for the composition's generation referencing `slices`.
fn synthesized(comp: &Composition, slices: &[&str]) -> Synthesis {
    Synthesis {
        synthesized: Some(Time(jiff::Timestamp::now())),
        observed_composition_generation: comp.metadata.generation.unwrap_or(0),
        resource_slices: slices
            .iter()
            .map(|n| ResourceSliceRef {
                name: n.to_string(),
            })
            .collect(),
        ..Default::default()
    }
}

/// Create a slice with the cleanup finalizer, controlled by the composition named `owner`
/// (whose uid is `uid`), from composition generation `generation`.
async fn create_slice(
    client: &Client,
    name: &str,
    owner: &str,
    uid: &str,
    generation: i64,
) -> ResourceSlice {
    let mut slice = ResourceSlice::new(name, Default::default());
    slice.metadata.namespace = Some("default".into());
    slice.metadata.finalizers = Some(vec![FINALIZER.into()]);
    slice.metadata.owner_references = Some(vec![OwnerReference {
        api_version: Composition::api_version(&()).into_owned(),
        kind: Composition::kind(&()).into_owned(),
        name: owner.into(),
        uid: uid.into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    slice.spec.composition_generation = generation;
    Api::<ResourceSlice>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &slice)
        .await
        .unwrap()
}

async fn slice_exists(client: &Client, name: &str) -> bool {
    Api::<ResourceSlice>::namespaced(client.clone(), "default")
        .get_opt(name)
        .await
        .unwrap()
        .is_some()
}

async fn wait_slice_gone(client: &Client, name: &str) {
    wait_for(&format!("slice {name} deleted"), WAIT, || async {
        (!slice_exists(client, name).await).then_some(())
    })
    .await
}

/// Upstream `TestSliceCleanupControllerOrphanedSlice`: a slice owned by a composition that does
/// not reference it, from an older composition generation, is eventually deleted (its cleanup
/// finalizer released).
#[tokio::test]
async fn slice_cleanup_controller_orphaned_slice() {
    tokio::time::timeout(Duration::from_secs(30), async {
        let env = Env::start(controllers_only()).await;
        create_composition(&env.client, "default", "test-1", "no-such-synth").await;

        // Synthesis has completed with no resulting resource slices.
        let comp = set_current_synthesis(&env.client, "test-1", |c| synthesized(c, &[])).await;

        // A random slice is created, but not part of the composition's synthesis.
        let generation = comp.metadata.generation.unwrap() - 1; // it's out of date
        create_slice(
            &env.client,
            "test-1",
            "test-1",
            &comp.uid().unwrap(),
            generation,
        )
        .await;

        // The slice is eventually deleted.
        wait_slice_gone(&env.client, "test-1").await;
        env.stop().await;
    })
    .await
    .expect("test timed out");
}

/// Referenced slices, slices newer than the composition's observed generation, and young slices
/// whose composition does not exist are kept; an orphan created after them is the barrier that
/// shows the controller has looked at them.
#[tokio::test]
async fn slices_it_must_keep_are_kept() {
    tokio::time::timeout(Duration::from_secs(30), async {
        let env = Env::start(controllers_only()).await;
        let comp = create_composition(&env.client, "default", "comp", "no-such-synth").await;
        let uid = comp.uid().unwrap();
        let comp =
            set_current_synthesis(&env.client, "comp", |c| synthesized(c, &["referenced"])).await;
        let generation = comp.metadata.generation.unwrap();

        create_slice(&env.client, "referenced", "comp", &uid, generation - 1).await;
        create_slice(&env.client, "from-the-future", "comp", &uid, generation + 1).await;
        create_slice(&env.client, "ghost-owned", "ghost", "no-uid", 0).await;
        create_slice(&env.client, "orphan", "comp", &uid, generation - 1).await;

        wait_slice_gone(&env.client, "orphan").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        for kept in ["referenced", "from-the-future", "ghost-owned"] {
            assert!(slice_exists(&env.client, kept).await, "{kept} was deleted");
        }

        // Once the composition no longer references it, the old slice goes too.
        set_current_synthesis(&env.client, "comp", |c| synthesized(c, &[])).await;
        wait_slice_gone(&env.client, "referenced").await;
        assert!(slice_exists(&env.client, "from-the-future").await);
        env.stop().await;
    })
    .await
    .expect("test timed out");
}

/// End to end with the executor: after two resyntheses the first synthesis's slices (neither
/// current nor previous any more) are deleted, and the referenced ones stay.
#[tokio::test]
async fn superseded_slices_are_deleted_after_resynthesis() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let env = Env::start(EnvOptions::full()).await;
        create_synthesizer(&env.client, &output_synthesizer("syn")).await;
        create_composition(&env.client, "default", "web", "syn").await;
        let slices_of = |comp: &Composition| -> Vec<String> {
            comp.status
                .as_ref()
                .and_then(|s| s.current_synthesis.as_ref())
                .map(|c| c.resource_slices.iter().map(|r| r.name.clone()).collect())
                .unwrap_or_default()
        };
        let synthesized = |generation: i64| {
            let env = &env;
            async move {
                wait_for(&format!("synthesized at {generation}"), WAIT, || async {
                    let comp = env.composition("default", "web").await?;
                    synthesized_at(&comp, generation).then_some(comp)
                })
                .await
            }
        };
        let first = slices_of(&synthesized(1).await);
        assert!(!first.is_empty());
        let generation = bump_generation(&env.client, "default", "web", 1).await;
        let second = slices_of(&synthesized(generation).await);
        let generation = bump_generation(&env.client, "default", "web", 2).await;
        let third = slices_of(&synthesized(generation).await);

        for name in &first {
            wait_slice_gone(&env.client, name).await;
        }
        for name in second.iter().chain(&third) {
            assert!(slice_exists(&env.client, name).await, "{name} was deleted");
        }
        env.stop().await;
    })
    .await
    .expect("test timed out");
}
