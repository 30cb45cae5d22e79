//! Bad input against the running controllers: a Composition naming a missing Synthesizer, a
//! Synthesizer without podTimeout, pods with missing or garbage labels and annotations, and
//! compositions sharing a name across namespaces. The controllers log, report (errors, retries)
//! and never panic or touch the wrong pods.

use crate::eno_support;

use std::time::Duration;

use controllers::eno::types::Synthesizer;
use controllers::eno::FINALIZER;
use eno_support::*;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use kube::ResourceExt;
use serde_json::json;

async fn wait_synthesized(env: &Env, ns: &str, name: &str) {
    wait_for(
        &format!("{ns}/{name} synthesized, pods gone"),
        WAIT,
        || async {
            let comp = env.composition(ns, name).await?;
            (synthesized_at(&comp, 1) && env.pods_of(ns, name).await.is_empty()).then_some(())
        },
    )
    .await
}

#[tokio::test]
async fn a_missing_synthesizer_blocks_only_until_it_exists() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let env = Env::start(EnvOptions::full()).await;
        create_composition(&env.client, "default", "web", "later").await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let comp = env.composition("default", "web").await.unwrap();
        assert!(
            comp.finalizers().contains(&FINALIZER.to_string()),
            "the finalizer needs no synthesizer"
        );
        assert!(
            comp.status.is_none(),
            "nothing started without a synthesizer"
        );
        assert!(env.pods_of("default", "web").await.is_empty());
        // Reported as a Warning Event on the composition.
        let events: Api<k8s_openapi::api::events::v1::Event> =
            Api::namespaced(env.client.clone(), "default");
        wait_for("a SynthesizerNotFound event", WAIT, || async {
            let list = events.list(&Default::default()).await.ok()?;
            list.items
                .iter()
                .any(|e| {
                    e.reason.as_deref() == Some("SynthesizerNotFound")
                        && e.type_.as_deref() == Some("Warning")
                        && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("web")
                })
                .then_some(())
        })
        .await;
        // The reconcile error is retried with backoff, so the synthesizer's arrival is noticed.
        create_synthesizer(&env.client, &output_synthesizer("later")).await;
        wait_synthesized(&env, "default", "web").await;
        env.stop().await;
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn a_synthesizer_without_pod_timeout_still_synthesizes() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let env = Env::start(EnvOptions::full()).await;
        let mut syn = output_synthesizer("bare");
        syn.spec.pod_timeout = None;
        syn.spec.exec_timeout = None;
        syn.spec.rollout_cooldown = None;
        create_synthesizer(&env.client, &syn).await;
        create_composition(&env.client, "default", "web", "bare").await;
        wait_synthesized(&env, "default", "web").await;
        env.stop().await;
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn garbage_pods_are_neither_adopted_nor_deleted() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let env = Env::start(EnvOptions::full()).await;
        let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.pod_namespace);
        let strays = [
            ("stray-no-labels", json!({"app.kubernetes.io/managed-by": "eno"}), json!({})),
            (
                "stray-name-only",
                json!({"app.kubernetes.io/managed-by": "eno", "eno.azure.io/composition-name": "web"}),
                json!({"eno.azure.io/composition-generation": "1"}),
            ),
            (
                "stray-garbage",
                json!({"app.kubernetes.io/managed-by": "eno", "eno.azure.io/composition-name": "web",
                       "eno.azure.io/composition-namespace": "elsewhere", "eno.azure.io/synthesis-uuid": "x"}),
                json!({"eno.azure.io/composition-generation": "NaN", "eno.azure.io/synthesizer-generation": "99999999999999999999999"}),
            ),
        ];
        for (name, labels, annotations) in &strays {
            let pod: Pod = serde_json::from_value(json!({
                "metadata": {"name": name, "labels": labels, "annotations": annotations, "finalizers": [FINALIZER]},
                "spec": {"containers": [{"name": "c", "image": "i"}]}
            }))
            .unwrap();
            pods.create(&PostParams::default(), &pod).await.unwrap();
        }
        create_synthesizer(&env.client, &output_synthesizer("syn")).await;
        create_composition(&env.client, "default", "web", "syn").await;
        wait_synthesized(&env, "default", "web").await;
        // The status controller released every stray (nothing to record them on)…
        wait_for("strays released", WAIT, || async {
            let mut released = true;
            for (name, _, _) in &strays {
                released &= pods.get(name).await.ok()?.finalizers().is_empty();
            }
            released.then_some(())
        })
        .await;
        // …and nobody deleted them.
        for (name, _, _) in &strays {
            let pod = pods.get(name).await.unwrap();
            assert!(pod.metadata.deletion_timestamp.is_none(), "{name} was deleted");
        }
        env.stop().await;
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn compositions_sharing_a_name_synthesize_independently() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let env = Env::start(EnvOptions::full()).await;
        for ns in ["team-a", "team-b"] {
            controllers::eno::demo::ensure_namespace(&env.client, ns)
                .await
                .unwrap();
        }
        create_composition(&env.client, "team-a", "web", "syn").await;
        // Different generations, so a name-only pod index would see "superseded" pods. The
        // synthesizer comes last, so that no pod starts before team-b/web's bump.
        create_composition(&env.client, "team-b", "web", "syn").await;
        bump_generation(&env.client, "team-b", "web", 1).await;
        create_synthesizer(&env.client, &output_synthesizer("syn")).await;
        wait_synthesized(&env, "team-a", "web").await;
        wait_for("team-b/web synthesized at generation 2", WAIT, || async {
            let comp = env.composition("team-b", "web").await?;
            (synthesized_at(&comp, 2) && env.pods_of("team-b", "web").await.is_empty())
                .then_some(())
        })
        .await;
        for ns in ["team-a", "team-b"] {
            let comp = env.composition(ns, "web").await.unwrap();
            let current = comp.status.unwrap().current_synthesis.unwrap();
            assert_eq!(current.attempts, 1, "{ns}/web needed exactly one pod");
            let slices: Api<controllers::eno::ResourceSlice> =
                Api::namespaced(env.client.clone(), ns);
            let slice = slices.get(&current.resource_slices[0].name).await.unwrap();
            assert!(slice.spec.resources[0]
                .manifest
                .contains(&format!(r#""namespace":"{ns}""#)));
        }
        assert_eq!(
            env.metrics.syntheses.get(),
            2,
            "one pod each, none deleted by the other"
        );
        let _ = Api::<Synthesizer>::all(env.client.clone());
        env.stop().await;
    })
    .await
    .expect("test timed out");
}

#[tokio::test]
async fn a_missing_binding_fails_each_attempt_until_it_is_bound() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let env = Env::start(EnvOptions::full()).await;
        let mut syn = synthesizer("echo", "cat", 300, 200);
        syn.spec.refs = vec![controllers::eno::types::SynthesizerInputRef {
            key: "config".into(),
            resource: controllers::eno::types::ResourceKind {
                group: String::new(),
                version: "v1".into(),
                kind: "ConfigMap".into(),
            },
        }];
        create_synthesizer(&env.client, &syn).await;
        create_composition(&env.client, "default", "web", "echo").await;
        wait_for("two failed attempts", WAIT, || async {
            let current = env
                .composition("default", "web")
                .await?
                .status?
                .current_synthesis?;
            (current.attempts >= 2 && current.synthesized.is_none()).then_some(())
        })
        .await;
        let settings: k8s_openapi::api::core::v1::ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": "settings"}, "data": {"k": "v"}}))
                .unwrap();
        Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(env.client.clone(), "default")
            .create(&PostParams::default(), &settings)
            .await
            .unwrap();
        let generation = change_spec(&env.client, "default", "web", |c| {
            c.spec.bindings = vec![controllers::eno::types::Binding {
                key: "config".into(),
                resource: controllers::eno::types::ResourceBinding {
                    name: "settings".into(),
                    namespace: String::new(),
                },
            }];
        })
        .await;
        wait_for("synthesized once bound", WAIT, || async {
            let comp = env.composition("default", "web").await?;
            synthesized_at(&comp, generation).then_some(())
        })
        .await;
        env.stop().await;
    })
    .await
    .expect("test timed out");
}
