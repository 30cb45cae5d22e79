//! The synthesizer pod (upstream `newPod`), adapted to the in-pod executor of later Eno.
//!
//! Upstream at 44daacb4 ran `sleep infinity` in the synthesizer image and exec'd into it. This
//! port follows later upstream (68ee694): the pod runs this binary's `synthesize` subcommand,
//! which runs the Synthesizer's command inside the synthesizer image and records the result. The
//! binary reaches the synthesizer image through an init container that copies it out of the
//! controller image into a shared `emptyDir`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Capabilities, Container, EmptyDirVolumeSource, EnvVar, Pod, PodSpec, SeccompProfile,
    SecurityContext, Volume, VolumeMount,
};
use kube::api::ObjectMeta;

use super::context::Config;
use super::synthesis_state::{current, generation};
use super::types::{Composition, Synthesizer};
use super::*;

/// `generateName` of synthesizer pods.
pub const POD_GENERATE_NAME: &str = "synthesis-";
/// Name of the container running the synthesizer image.
pub const SYNTHESIZER_CONTAINER: &str = "synthesizer";
/// Name of the init container that installs the executor.
pub const INSTALL_EXECUTOR_CONTAINER: &str = "install-executor";
/// Where the controller image holds this binary.
pub const CONTROLLER_BINARY_PATH: &str = "/usr/local/bin/controllers";
/// Mount path of the volume shared between the init container and the synthesizer.
pub const EXECUTOR_MOUNT_PATH: &str = "/eno-executor";
/// Where the init container puts the executor inside the shared volume.
pub const EXECUTOR_BINARY_PATH: &str = "/eno-executor/controllers";
/// Name of the shared volume.
pub const EXECUTOR_VOLUME: &str = "eno-executor";
/// User and group the containers run as.
pub const POD_USER_ID: i64 = 1000;

/// Environment variables the executor reads (set on the synthesizer container).
pub mod env {
    /// The Composition's name.
    pub const COMPOSITION_NAME: &str = "COMPOSITION_NAME";
    /// The Composition's namespace.
    pub const COMPOSITION_NAMESPACE: &str = "COMPOSITION_NAMESPACE";
    /// The Composition generation the pod synthesizes.
    pub const COMPOSITION_GENERATION: &str = "COMPOSITION_GENERATION";
    /// The Synthesizer generation the pod runs.
    pub const SYNTHESIZER_GENERATION: &str = "SYNTHESIZER_GENERATION";
    /// The synthesis the pod belongs to; the executor does nothing once it is not current.
    pub const SYNTHESIS_UUID: &str = "SYNTHESIS_UUID";
}

/// The pod for the composition's current synthesis (`newPod`).
///
/// Labels: both composition labels, `app.kubernetes.io/managed-by=eno` and the synthesis uuid;
/// annotations: composition and synthesizer generations; the `eno.azure.io/cleanup` finalizer
/// (kept until the status controller has recorded the attempt); no owner reference (the pod lives
/// in another namespace than the composition).
pub fn new_pod(config: &Config, comp: &Composition, syn: &Synthesizer) -> Pod {
    let comp_name = comp.metadata.name.clone().unwrap_or_default();
    let comp_namespace = comp.metadata.namespace.clone().unwrap_or_default();
    let comp_generation = generation(comp).to_string();
    let syn_generation = syn.metadata.generation.unwrap_or(0).to_string();
    let uuid = current(comp).map(|c| c.uuid.clone()).unwrap_or_default();

    let labels = BTreeMap::from([
        (LABEL_COMPOSITION_NAME.to_string(), comp_name.clone()),
        (
            LABEL_COMPOSITION_NAMESPACE.to_string(),
            comp_namespace.clone(),
        ),
        (LABEL_MANAGED_BY.to_string(), MANAGED_BY_ENO.to_string()),
        (LABEL_SYNTHESIS_UUID.to_string(), uuid.clone()),
    ]);
    let annotations = BTreeMap::from([
        (
            ANNOTATION_COMPOSITION_GENERATION.to_string(),
            comp_generation.clone(),
        ),
        (
            ANNOTATION_SYNTHESIZER_GENERATION.to_string(),
            syn_generation.clone(),
        ),
    ]);
    let env_var = |name: &str, value: String| EnvVar {
        name: name.to_string(),
        value: Some(value),
        ..EnvVar::default()
    };
    let executor_mount = VolumeMount {
        name: EXECUTOR_VOLUME.to_string(),
        mount_path: EXECUTOR_MOUNT_PATH.to_string(),
        ..VolumeMount::default()
    };

    Pod {
        metadata: ObjectMeta {
            generate_name: Some(POD_GENERATE_NAME.to_string()),
            namespace: Some(config.pod_namespace.clone()),
            finalizers: Some(vec![FINALIZER.to_string()]),
            labels: Some(labels),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            service_account_name: config.pod_service_account.clone(),
            // The executor exits once the synthesis is recorded; a failed run is retried by the
            // lifecycle controller (timeout, backoff), not by the kubelet.
            restart_policy: Some("Never".to_string()),
            init_containers: Some(vec![Container {
                name: INSTALL_EXECUTOR_CONTAINER.to_string(),
                image: Some(config.executor_image.clone()),
                command: Some(vec![
                    CONTROLLER_BINARY_PATH.to_string(),
                    "synthesize".to_string(),
                    "--install-to".to_string(),
                    EXECUTOR_BINARY_PATH.to_string(),
                ]),
                security_context: Some(restricted_security_context()),
                volume_mounts: Some(vec![executor_mount.clone()]),
                ..Container::default()
            }]),
            containers: vec![Container {
                name: SYNTHESIZER_CONTAINER.to_string(),
                image: Some(syn.spec.image.clone()),
                command: Some(vec![
                    EXECUTOR_BINARY_PATH.to_string(),
                    "synthesize".to_string(),
                ]),
                env: Some(vec![
                    env_var(env::COMPOSITION_NAME, comp_name),
                    env_var(env::COMPOSITION_NAMESPACE, comp_namespace),
                    env_var(env::COMPOSITION_GENERATION, comp_generation),
                    env_var(env::SYNTHESIZER_GENERATION, syn_generation),
                    env_var(env::SYNTHESIS_UUID, uuid),
                ]),
                security_context: Some(restricted_security_context()),
                volume_mounts: Some(vec![executor_mount]),
                ..Container::default()
            }],
            volumes: Some(vec![Volume {
                name: EXECUTOR_VOLUME.to_string(),
                empty_dir: Some(EmptyDirVolumeSource::default()),
                ..Volume::default()
            }]),
            ..PodSpec::default()
        }),
        status: None,
    }
}

/// Upstream's container security context: drop every capability, run as uid 1000, non-root,
/// no privilege escalation, the runtime's default seccomp profile (upstream's executor
/// container sets it too). Together they meet the `restricted` Pod Security Standard, so the
/// pods are admitted in a pod namespace labelled `pod-security.kubernetes.io/enforce:
/// restricted`.
fn restricted_security_context() -> SecurityContext {
    SecurityContext {
        seccomp_profile: Some(SeccompProfile {
            type_: "RuntimeDefault".to_string(),
            ..SeccompProfile::default()
        }),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".to_string()]),
            ..Capabilities::default()
        }),
        run_as_user: Some(POD_USER_ID),
        run_as_group: Some(POD_USER_ID),
        run_as_non_root: Some(true),
        allow_privilege_escalation: Some(false),
        ..SecurityContext::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eno::types::{
        CompositionSpec, CompositionStatus, Synthesis, SynthesizerRef, SynthesizerSpec,
    };
    use rstest::rstest;

    fn fixtures() -> (Config, Composition, Synthesizer) {
        let mut config = Config::new("eno-system", "controllers:dev");
        config.pod_service_account = Some("synth-sa".into());
        let mut comp = Composition::new(
            "web",
            CompositionSpec {
                synthesizer: SynthesizerRef {
                    name: "s".into(),
                    min_generation: 0,
                },
                bindings: vec![],
            },
        );
        comp.metadata.namespace = Some("team-a".into());
        comp.metadata.generation = Some(4);
        comp.status = Some(CompositionStatus {
            current_synthesis: Some(Synthesis {
                uuid: "u-1".into(),
                observed_composition_generation: 4,
                ..Synthesis::default()
            }),
            previous_synthesis: None,
        });
        let mut syn = Synthesizer::new(
            "s",
            SynthesizerSpec {
                image: "synth:1".into(),
                ..SynthesizerSpec::default()
            },
        );
        syn.metadata.generation = Some(9);
        (config, comp, syn)
    }

    #[rstest]
    #[case(LABEL_COMPOSITION_NAME, "web")]
    #[case(LABEL_COMPOSITION_NAMESPACE, "team-a")]
    #[case(LABEL_MANAGED_BY, "eno")]
    #[case(LABEL_SYNTHESIS_UUID, "u-1")]
    fn labels(#[case] key: &str, #[case] value: &str) {
        let (config, comp, syn) = fixtures();
        let pod = new_pod(&config, &comp, &syn);
        assert_eq!(pod.metadata.labels.unwrap()[key], value);
    }

    #[rstest]
    #[case(ANNOTATION_COMPOSITION_GENERATION, "4")]
    #[case(ANNOTATION_SYNTHESIZER_GENERATION, "9")]
    fn annotations(#[case] key: &str, #[case] value: &str) {
        let (config, comp, syn) = fixtures();
        let pod = new_pod(&config, &comp, &syn);
        assert_eq!(pod.metadata.annotations.unwrap()[key], value);
    }

    #[rstest]
    #[case(env::COMPOSITION_NAME, "web")]
    #[case(env::COMPOSITION_NAMESPACE, "team-a")]
    #[case(env::COMPOSITION_GENERATION, "4")]
    #[case(env::SYNTHESIZER_GENERATION, "9")]
    #[case(env::SYNTHESIS_UUID, "u-1")]
    fn env_vars(#[case] name: &str, #[case] value: &str) {
        let (config, comp, syn) = fixtures();
        let pod = new_pod(&config, &comp, &syn);
        let container = &pod.spec.unwrap().containers[0];
        let found = container
            .env
            .as_ref()
            .unwrap()
            .iter()
            .find(|e| e.name == name)
            .and_then(|e| e.value.clone());
        assert_eq!(found.as_deref(), Some(value));
    }

    #[test]
    fn metadata_spec_and_security() {
        let (config, comp, syn) = fixtures();
        let pod = new_pod(&config, &comp, &syn);
        assert_eq!(pod.metadata.generate_name.as_deref(), Some("synthesis-"));
        assert_eq!(pod.metadata.name, None);
        assert_eq!(pod.metadata.namespace.as_deref(), Some("eno-system"));
        assert_eq!(pod.metadata.finalizers, Some(vec![FINALIZER.to_string()]));
        assert_eq!(pod.metadata.owner_references, None);
        let spec = pod.spec.unwrap();
        assert_eq!(spec.service_account_name.as_deref(), Some("synth-sa"));
        assert_eq!(spec.restart_policy.as_deref(), Some("Never"));
        let main = &spec.containers[0];
        assert_eq!(main.name, "synthesizer");
        assert_eq!(main.image.as_deref(), Some("synth:1"));
        assert_eq!(
            main.command.as_deref(),
            Some(
                &[
                    "/eno-executor/controllers".to_string(),
                    "synthesize".to_string()
                ][..]
            )
        );
        let init = &spec.init_containers.unwrap()[0];
        assert_eq!(init.image.as_deref(), Some("controllers:dev"));
        for sc in [
            main.security_context.as_ref(),
            init.security_context.as_ref(),
        ] {
            let sc = sc.unwrap();
            assert_eq!(
                sc.capabilities.as_ref().unwrap().drop,
                Some(vec!["ALL".into()])
            );
            assert_eq!(sc.run_as_user, Some(1000));
            assert_eq!(sc.run_as_non_root, Some(true));
            assert_eq!(sc.allow_privilege_escalation, Some(false));
            assert_eq!(
                sc.seccomp_profile.as_ref().map(|p| p.type_.as_str()),
                Some("RuntimeDefault")
            );
        }
        assert_eq!(spec.volumes.unwrap()[0].name, EXECUTOR_VOLUME);
    }

    #[test]
    fn no_service_account_configured_leaves_it_unset() {
        let (mut config, comp, syn) = fixtures();
        config.pod_service_account = None;
        let pod = new_pod(&config, &comp, &syn);
        assert_eq!(pod.spec.unwrap().service_account_name, None);
    }
}
