//! Shared support for the Eno tests: an in-process fake API server with the Eno CRDs, the
//! controllers running in `kube::runtime::Controller`, a kubelet stand-in, object builders and
//! bounded waits (no test can hang).
#![allow(dead_code)]

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use controllers::clock::{SharedClock, SystemClock};
use controllers::eno::context::Config;
use controllers::eno::demo::{demo_composition, demo_synthesizer, ensure_namespace, install_crds};
use controllers::eno::kubelet_standin::{executor_runner, KubeletStandIn, PodRunner};
use controllers::eno::metrics::Metrics;
use controllers::eno::types::{Binding, Composition, GoDuration, ResourceBinding, Synthesizer};
use controllers::eno::wiring::EnoControllers;
use controllers::eno::{LABEL_COMPOSITION_NAME, LABEL_COMPOSITION_NAMESPACE};
use controllers::ids::SeededIds;
use controllers::operator::http::Readiness;
use controllers::operator::shutdown;
use fake_apiserver::FakeApiServer;
use futures::FutureExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::Client;

/// Every wait in these tests gives up (and fails the test) after this long.
pub const WAIT: Duration = Duration::from_secs(20);

/// Builds a kubelet stand-in's runner from the environment's client.
pub type RunnerFactory = Box<dyn FnOnce(Client) -> PodRunner + Send>;

/// What runs in the environment besides the lifecycle controller.
pub struct EnvOptions {
    /// Namespace of synthesizer pods.
    pub pod_namespace: String,
    /// Run the status controller too.
    pub status_controller: bool,
    /// Run a kubelet stand-in with this termination delay; its runner is built from the client.
    pub kubelet: Option<(Duration, RunnerFactory)>,
    /// Longest per-object backoff after failed reconciles (production: 300 s; tests shorten it).
    pub max_error_backoff: Duration,
}

/// The tests' per-object error backoff cap: short, so a test recovers quickly.
pub const TEST_ERROR_BACKOFF: Duration = Duration::from_millis(200);

impl EnvOptions {
    /// Lifecycle + status controllers + a kubelet stand-in running the executor.
    pub fn full() -> Self {
        Self {
            pod_namespace: "eno-system".into(),
            status_controller: true,
            kubelet: Some((
                Duration::from_millis(100),
                Box::new(|client| executor_runner(client, clock())),
            )),
            max_error_backoff: TEST_ERROR_BACKOFF,
        }
    }
}

/// The system clock, shared.
pub fn clock() -> SharedClock {
    Arc::new(SystemClock)
}

/// A running environment; [`Env::stop`] shuts it down.
pub struct Env {
    pub server: FakeApiServer,
    pub client: Client,
    pub pod_namespace: String,
    pub metrics: Metrics,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Env {
    /// Start a fake API server with the CRDs and the pod namespace, and the controllers.
    pub async fn start(options: EnvOptions) -> Self {
        controllers::operator::logging::init(controllers::operator::logging::LogFormat::Text);
        let server = FakeApiServer::new();
        let client = server.client();
        install_crds(&client).await.unwrap();
        ensure_namespace(&client, &options.pod_namespace)
            .await
            .unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let signal = shutdown::on(async move {
            let _ = stopped.await;
        });
        let mut config = Config::new(&options.pod_namespace, "controllers:test");
        config.max_error_backoff = options.max_error_backoff;
        let metrics = Metrics::default();
        let controllers = EnoControllers {
            client: client.clone(),
            config,
            clock: clock(),
            ids: Arc::new(SeededIds::new(1)),
            metrics: metrics.clone(),
        };
        let mut tasks = vec![tokio::spawn(controllers.run_parts(
            signal.clone(),
            Readiness::new(),
            options.status_controller,
        ))];
        if let Some((termination_delay, runner)) = options.kubelet {
            let mut kubelet = KubeletStandIn::new(
                client.clone(),
                &options.pod_namespace,
                runner(client.clone()),
                clock(),
            );
            kubelet.termination_delay = termination_delay;
            tasks.push(tokio::spawn(kubelet.run(signal)));
        }
        Self {
            server,
            client,
            pod_namespace: options.pod_namespace,
            metrics,
            stop: Some(stop),
            tasks,
        }
    }

    /// Stop everything (bounded).
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        for task in self.tasks.drain(..) {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
    }

    /// Compositions of `namespace`.
    pub fn compositions(&self, namespace: &str) -> Api<Composition> {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// The composition, if it exists.
    pub async fn composition(&self, namespace: &str, name: &str) -> Option<Composition> {
        self.compositions(namespace).get_opt(name).await.unwrap()
    }

    /// Synthesizer pods of a composition (any state).
    pub async fn pods_of(&self, namespace: &str, name: &str) -> Vec<Pod> {
        pods_of(&self.client, &self.pod_namespace, namespace, name).await
    }
}

/// Synthesizer pods of a composition (any state).
pub async fn pods_of(
    client: &Client,
    pod_namespace: &str,
    namespace: &str,
    name: &str,
) -> Vec<Pod> {
    let selector =
        format!("{LABEL_COMPOSITION_NAME}={name},{LABEL_COMPOSITION_NAMESPACE}={namespace}");
    Api::<Pod>::namespaced(client.clone(), pod_namespace)
        .list(&ListParams::default().labels(&selector))
        .await
        .unwrap()
        .items
}

/// A Synthesizer running `script` with `sh -c`, with timeouts in milliseconds.
pub fn synthesizer(
    name: &str,
    script: &str,
    pod_timeout_ms: u64,
    exec_timeout_ms: u64,
) -> Synthesizer {
    let mut syn = demo_synthesizer(name);
    syn.spec.command = vec!["sh".into(), "-c".into(), script.into()];
    syn.spec.pod_timeout = Some(GoDuration::from_millis(pod_timeout_ms));
    syn.spec.exec_timeout = Some(GoDuration::from_millis(exec_timeout_ms));
    syn
}

/// The demo Synthesizer's script: one ConfigMap named after the composition, carrying the
/// generation. The exec timeout may not exceed the pod timeout (the CRD's CEL rule; the default
/// exec timeout, 10s, would).
pub fn output_synthesizer(name: &str) -> Synthesizer {
    let mut syn = demo_synthesizer(name);
    syn.spec.pod_timeout = Some(GoDuration::from_millis(5_000));
    syn.spec.exec_timeout = Some(GoDuration::from_millis(5_000));
    syn
}

/// Create a Synthesizer.
pub async fn create_synthesizer(client: &Client, syn: &Synthesizer) -> Synthesizer {
    Api::<Synthesizer>::all(client.clone())
        .create(&PostParams::default(), syn)
        .await
        .unwrap()
}

/// Create a Composition.
pub async fn create_composition(
    client: &Client,
    namespace: &str,
    name: &str,
    synthesizer: &str,
) -> Composition {
    Api::<Composition>::namespaced(client.clone(), namespace)
        .create(
            &PostParams::default(),
            &demo_composition(name, namespace, synthesizer),
        )
        .await
        .unwrap()
}

/// Change the composition's spec (a new binding), so its generation moves; returns the new
/// generation. Retries on conflicts.
pub async fn bump_generation(client: &Client, namespace: &str, name: &str, revision: usize) -> i64 {
    change_spec(client, namespace, name, |comp| {
        comp.spec.bindings = vec![Binding {
            key: "revision".into(),
            resource: ResourceBinding {
                name: format!("rev-{revision}"),
                namespace: String::new(),
            },
        }];
    })
    .await
}

/// Apply `change` to the composition's spec with an rv-checked update, retrying on conflicts
/// and transient errors; returns the new generation.
pub async fn change_spec(
    client: &Client,
    namespace: &str,
    name: &str,
    change: impl Fn(&mut Composition),
) -> i64 {
    let api = Api::<Composition>::namespaced(client.clone(), namespace);
    // A conflict, or a transient answer (429, 5xx) from a server with faults on, is retried.
    let transient = |e: &kube::Error| matches!(e, kube::Error::Api(s) if s.code == 409 || s.code == 429 || s.code >= 500);
    for _ in 0..100 {
        let mut comp = match api.get(name).await {
            Ok(comp) => comp,
            Err(e) if transient(&e) => continue,
            Err(e) => panic!("reading composition: {e}"),
        };
        change(&mut comp);
        match api.replace(name, &PostParams::default(), &comp).await {
            Ok(updated) => return updated.metadata.generation.unwrap_or(0),
            Err(e) if transient(&e) => tokio::time::sleep(Duration::from_millis(20)).await,
            Err(e) => panic!("updating composition: {e}"),
        }
    }
    panic!("composition kept conflicting");
}

/// Set `reconciled` on the current synthesis, as the eno-reconciler's aggregation would.
pub async fn mark_reconciled(client: &Client, namespace: &str, name: &str) {
    let api = Api::<Composition>::namespaced(client.clone(), namespace);
    for _ in 0..50 {
        let mut comp = api.get(name).await.unwrap();
        if let Some(current) = comp
            .status
            .as_mut()
            .and_then(|s| s.current_synthesis.as_mut())
        {
            current.reconciled = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                jiff::Timestamp::now(),
            ));
        }
        match api
            .replace_status(name, &PostParams::default(), &comp)
            .await
        {
            Ok(_) => return,
            Err(kube::Error::Api(s)) if s.code == 409 => continue,
            Err(e) => panic!("marking reconciled: {e}"),
        }
    }
    panic!("composition kept conflicting");
}

/// Delete a composition.
pub async fn delete_composition(client: &Client, namespace: &str, name: &str) {
    Api::<Composition>::namespaced(client.clone(), namespace)
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
}

/// Poll `probe` every 20ms until it returns `Some`, failing the test after `within`.
pub async fn wait_for<T, F, Fut>(what: &str, within: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        if tokio::time::Instant::now() > deadline {
            panic!("timed out after {within:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether the composition's current synthesis is synthesized for at least `generation`.
pub fn synthesized_at(comp: &Composition, generation: i64) -> bool {
    comp.status
        .as_ref()
        .and_then(|s| s.current_synthesis.as_ref())
        .is_some_and(|c| c.synthesized.is_some() && c.observed_composition_generation >= generation)
}

/// An executor runner that counts the runs that recorded a synthesis, after an optional delay.
pub fn counting_executor(
    counter: Arc<AtomicUsize>,
    delay: impl Fn() -> Duration + Send + Sync + 'static,
) -> impl FnOnce(Client) -> PodRunner + Send {
    move |client: Client| {
        let delay = Arc::new(delay);
        let clock = clock();
        let runner: PodRunner = Arc::new(move |pod: Pod| {
            let client = client.clone();
            let clock = clock.clone();
            let counter = counter.clone();
            let delay = delay.clone();
            async move {
                tokio::time::sleep(delay()).await;
                let Ok(request) = controllers::eno::executor::SynthesisRequest::from_pod(&pod)
                else {
                    return false;
                };
                match controllers::eno::executor::synthesize(&client, &clock, &request).await {
                    Ok(controllers::eno::executor::Outcome::Synthesized { .. }) => {
                        counter.fetch_add(1, Ordering::SeqCst);
                        true
                    }
                    Ok(_) => true,
                    Err(_) => false,
                }
            }
            .boxed()
        });
        runner
    }
}

/// A runner that never finishes (a pod stuck Running).
pub fn never_finishing(_client: Client) -> PodRunner {
    Arc::new(|_pod: Pod| futures::future::pending::<bool>().boxed())
}
