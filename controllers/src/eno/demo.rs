//! A self-contained demonstration: install the CRDs, create a Synthesizer whose command is a
//! small shell script and a Composition using it, run the lifecycle and status controllers with
//! a kubelet stand-in that runs the in-pod executor in-process, and wait for the composition to
//! be synthesized and its pod to be gone.
//!
//! Meant for a cluster without nodes, such as the in-process fake API server (a real cluster
//! runs the pod itself and needs no stand-in; see the README).

use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, ObjectMeta, PostParams};
use kube::{Client, ResourceExt};
use tracing::info;

use super::context::Config;
use super::error::is_status;
use super::kubelet_standin::{executor_runner, KubeletStandIn, PodLogSink};
use super::metrics::Metrics;
use super::synthesis_state::current;
use super::types::{
    Composition, CompositionSpec, GoDuration, ResourceSlice, Synthesizer, SynthesizerRef,
    SynthesizerSpec,
};
use super::wiring::EnoControllers;
use super::{LABEL_COMPOSITION_NAME, LABEL_COMPOSITION_NAMESPACE};
use crate::clock::{SharedClock, SystemClock};
use crate::ids::RandomIds;
use crate::operator::http::Readiness;
use crate::operator::shutdown;

/// What the demo creates and how long it waits.
#[derive(Clone)]
pub struct DemoOptions {
    /// Namespace for synthesizer pods.
    pub pod_namespace: String,
    /// Namespace of the demo Composition.
    pub composition_namespace: String,
    /// Give up after this long.
    pub timeout: Duration,
    /// Where the kubelet stand-in writes the synthesizer pods' log lines.
    pub pod_logs: Option<PodLogSink>,
}

impl std::fmt::Debug for DemoOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoOptions")
            .field("pod_namespace", &self.pod_namespace)
            .field("composition_namespace", &self.composition_namespace)
            .field("timeout", &self.timeout)
            .field("pod_logs", &self.pod_logs.is_some())
            .finish()
    }
}

impl Default for DemoOptions {
    fn default() -> Self {
        Self {
            pod_namespace: "eno-system".into(),
            composition_namespace: "default".into(),
            timeout: Duration::from_secs(60),
            pod_logs: None,
        }
    }
}

/// What the demo ended with.
#[derive(Debug, Clone)]
pub struct DemoReport {
    /// The Composition, synthesized.
    pub composition: Composition,
    /// Its ResourceSlices (the synthesizer's output).
    pub slices: Vec<ResourceSlice>,
    /// Synthesizer pods still present (0 once the lifecycle controller has cleaned up).
    pub pods_left: usize,
}

impl std::fmt::Display for DemoReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = self
            .composition
            .status
            .as_ref()
            .map(|s| serde_yaml::to_string(s).unwrap_or_default())
            .unwrap_or_default();
        writeln!(
            f,
            "Composition {}/{} status:",
            self.composition.namespace().unwrap_or_default(),
            self.composition.name_any()
        )?;
        for line in status.lines() {
            writeln!(f, "  {line}")?;
        }
        for slice in &self.slices {
            writeln!(f, "ResourceSlice {}:", slice.name_any())?;
            for resource in &slice.spec.resources {
                writeln!(f, "  {}", resource.manifest)?;
            }
        }
        write!(f, "synthesizer pods left: {}", self.pods_left)
    }
}

/// Why the demo failed.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// An API request failed.
    #[error("{action}: {source}")]
    Api {
        /// What the demo was doing.
        action: &'static str,
        /// The cause.
        #[source]
        source: Box<kube::Error>,
    },
    /// The composition did not synthesize in time.
    #[error("the composition was not synthesized within {0:?}")]
    Timeout(Duration),
}

fn api(action: &'static str) -> impl FnOnce(kube::Error) -> DemoError {
    move |source| DemoError::Api {
        action,
        source: Box::new(source),
    }
}

/// Create `obj` unless it exists already.
async fn create_if_missing<K>(api: &Api<K>, obj: &K) -> Result<(), kube::Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    match api.create(&PostParams::default(), obj).await {
        Ok(_) => Ok(()),
        Err(e) if is_status(&e, 409) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Create every CRD of this crate that is missing.
pub async fn install_crds(client: &Client) -> Result<(), kube::Error> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in crate::crds::all() {
        create_if_missing(&crds, &crd).await?;
    }
    Ok(())
}

/// Create a namespace if it is missing.
pub async fn ensure_namespace(client: &Client, name: &str) -> Result<(), kube::Error> {
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    create_if_missing(&Api::all(client.clone()), &namespace).await
}

/// The demo Synthesizer: a KRM function in `sh` that emits one ConfigMap naming the
/// composition and generation it was synthesized for.
pub fn demo_synthesizer(name: &str) -> Synthesizer {
    let script = r#"cat >/dev/null
printf '{"apiVersion":"config.kubernetes.io/v1","kind":"ResourceList","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s-output","namespace":"%s"},"data":{"generation":"%s"}}]}\n' "$COMPOSITION_NAME" "$COMPOSITION_NAMESPACE" "$COMPOSITION_GENERATION""#;
    Synthesizer::new(
        name,
        SynthesizerSpec {
            image: "docker.io/library/busybox:1.36".into(),
            command: vec!["sh".into(), "-c".into(), script.into()],
            exec_timeout: Some(GoDuration::from_millis(10_000)),
            pod_timeout: Some(GoDuration::from_millis(120_000)),
            rollout_cooldown: Some(GoDuration::from_millis(30_000)),
            refs: vec![],
        },
    )
}

/// A Composition using the Synthesizer `synthesizer`.
pub fn demo_composition(name: &str, namespace: &str, synthesizer: &str) -> Composition {
    let mut comp = Composition::new(
        name,
        CompositionSpec {
            synthesizer: SynthesizerRef {
                name: synthesizer.into(),
                min_generation: 0,
            },
            bindings: vec![],
        },
    );
    comp.metadata.namespace = Some(namespace.into());
    comp
}

/// Run the demo against `client` and report the synthesized composition.
pub async fn run_demo(client: Client, options: DemoOptions) -> Result<DemoReport, DemoError> {
    install_crds(&client)
        .await
        .map_err(api("installing CRDs"))?;
    ensure_namespace(&client, &options.pod_namespace)
        .await
        .map_err(api("creating the pod namespace"))?;
    ensure_namespace(&client, &options.composition_namespace)
        .await
        .map_err(api("creating the composition namespace"))?;

    let clock: SharedClock = std::sync::Arc::new(SystemClock);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let stop_signal = shutdown::on(async move {
        let _ = stopped.await;
    });
    let mut config = Config::new(&options.pod_namespace, "controllers:demo");
    config.max_error_backoff = Duration::from_secs(2);
    let controllers = EnoControllers {
        client: client.clone(),
        config,
        clock: clock.clone(),
        ids: std::sync::Arc::new(RandomIds),
        metrics: Metrics::default(),
    };
    let mut kubelet = KubeletStandIn::new(
        client.clone(),
        &options.pod_namespace,
        executor_runner(client.clone(), clock.clone()),
        clock,
    );
    kubelet.termination_delay = Duration::from_millis(200);
    kubelet.logs = options.pod_logs.clone();
    let running = tokio::spawn(futures::future::join(
        controllers.run(stop_signal.clone(), Readiness::new()),
        kubelet.run(stop_signal),
    ));

    let result = async {
        let synthesizers: Api<Synthesizer> = Api::all(client.clone());
        create_if_missing(&synthesizers, &demo_synthesizer("demo"))
            .await
            .map_err(api("creating the demo synthesizer"))?;
        info!("created Synthesizer demo");
        let compositions: Api<Composition> =
            Api::namespaced(client.clone(), &options.composition_namespace);
        create_if_missing(
            &compositions,
            &demo_composition("demo", &options.composition_namespace, "demo"),
        )
        .await
        .map_err(api("creating the demo composition"))?;
        info!(namespace = %options.composition_namespace, "created Composition demo");
        tokio::time::timeout(options.timeout, wait_until_synthesized(&client, &options))
            .await
            .map_err(|_| DemoError::Timeout(options.timeout))?
    }
    .await;
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), running).await;
    result
}

async fn wait_until_synthesized(
    client: &Client,
    options: &DemoOptions,
) -> Result<DemoReport, DemoError> {
    let compositions: Api<Composition> =
        Api::namespaced(client.clone(), &options.composition_namespace);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &options.pod_namespace);
    let selector = format!(
        "{LABEL_COMPOSITION_NAME}=demo,{LABEL_COMPOSITION_NAMESPACE}={}",
        options.composition_namespace
    );
    loop {
        let comp = compositions
            .get("demo")
            .await
            .map_err(api("reading the composition"))?;
        let pods_left = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(api("listing pods"))?
            .items
            .len();
        if let Some(synthesis) = current(&comp).filter(|c| c.synthesized.is_some()) {
            if pods_left == 0 {
                let slice_api: Api<ResourceSlice> =
                    Api::namespaced(client.clone(), &options.composition_namespace);
                let mut slices = Vec::new();
                for slice in &synthesis.resource_slices {
                    slices.push(
                        slice_api
                            .get(&slice.name)
                            .await
                            .map_err(api("reading a resource slice"))?,
                    );
                }
                return Ok(DemoReport {
                    composition: comp,
                    slices,
                    pods_left,
                });
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
