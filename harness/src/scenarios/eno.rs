//! Eno under the harness, through its production wiring only.
//!
//! Host `eno` runs `EnoControllers::run` — the lifecycle, status, rollout and slice cleanup
//! controllers exactly as the `controllers eno` binary runs them. The world has a kubelet
//! stand-in (`controllers::eno::kubelet_standin`) that binds, starts and removes pods and runs
//! the real executor (`executor::synthesize_with`) with an in-process synthesizer, and a user who
//! changes the composition's spec once. Every request of every process passes the schedule.
//!
//! Guards are removed by changing the world, never the controller:
//! - `without-live-pod-list` (spec §3 step 14, §7.4): the live pod list before a create is
//!   answered from what the process's pod informer has seen (a cache read);
//! - `without-rv-checked-status-writes` (§5.8, §7.2): the server takes a composition status
//!   write whatever `resourceVersion` it carries (as a merge patch without one would);
//! - `without-cache-sync`: the controllers start before every cache has synced (the test switch
//!   `Config::start_before_caches_sync`, the one guard that lives in the controller's
//!   configuration): the lifecycle controller may find its Synthesizer cache still empty and
//!   report a spurious `SynthesizerNotFound` Warning Event.

use std::cell::RefCell;
use std::sync::Arc;

use axum::body::Body;
use bytes::Bytes;
use controllers::eno::context::Config as EnoConfig;
use controllers::eno::executor::{ExecutorError, SynthesizerRunner};
use controllers::eno::kubelet_standin::{executor_runner_with, KubeletStandIn};
use controllers::eno::metrics::Metrics;
use controllers::eno::types::{Composition, Synthesizer};
use controllers::eno::wiring::EnoControllers;
use controllers::eno::{
    ANNOTATION_COMPOSITION_GENERATION, LABEL_MANAGED_BY, LABEL_SYNTHESIS_UUID, MANAGED_BY_ENO,
};
use controllers::operator::http::Readiness;
use controllers::operator::shutdown;
use fake_apiserver::FakeApiServer;
use futures::future::BoxFuture;
use futures::FutureExt;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{json, Value};

use crate::net::{collection, Interceptor, Views};
use crate::scenario::Scenario;
use crate::world::{HostEnv, World};

/// Namespace of synthesizer pods.
pub const POD_NAMESPACE: &str = "eno";

/// Which guards the world lets work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guards {
    /// The live pod list before a create is answered by the server (not a cache).
    pub live_pod_list: bool,
    /// Composition status writes are checked against their `resourceVersion`.
    pub rv_checked_status_writes: bool,
    /// The controllers start only once every cache has synced.
    pub cache_sync: bool,
}

impl Default for Guards {
    fn default() -> Self {
        Self {
            live_pod_list: true,
            rv_checked_status_writes: true,
            cache_sync: true,
        }
    }
}

/// Builds Eno's world with `guards`: [`setup`], [`processes`], the user's spec change, and
/// [`checks`]; guards the world defeats go through an interceptor.
pub fn world(world: &mut World, guards: Guards) {
    world.setup(|client| setup(client).boxed());
    processes(world, move |config| {
        config.start_before_caches_sync = !guards.cache_sync;
    });
    user_changes_spec(world, 1);
    checks(world);
    world.eventually("composition synthesized", composition_synthesized);
    let interception = Guards {
        cache_sync: true,
        ..guards
    };
    if interception != Guards::default() {
        world.intercept(Arc::new(Defeat(guards)));
    }
}

/// The processes of Eno's world: host `eno` runs `EnoControllers::run` with the default
/// configuration changed by `configure` (where a scenario sets a test switch), and actor
/// `kubelet` runs the kubelet stand-in with the real executor and an in-process synthesizer.
pub fn processes(world: &mut World, configure: impl Fn(&mut EnoConfig) + Send + Sync + 'static) {
    world.host("eno", move |env| {
        let mut config = EnoConfig::new(POD_NAMESPACE, "controllers:harness");
        configure(&mut config);
        controllers(env, config)
    });
    kubelet(world);
}

/// Actor `kubelet`: the kubelet stand-in with the real executor and [`synthesizer`].
pub fn kubelet(world: &mut World) {
    world.actor("kubelet", |env| {
        let runner = executor_runner_with(env.client.clone(), env.clock.clone(), synthesizer());
        KubeletStandIn::new(env.client, POD_NAMESPACE, runner, env.clock)
            .run(shutdown::never())
            .boxed()
    });
}

/// The user's spec changes, at most `times`: each bumps `minGeneration`, hence the
/// composition's generation.
pub fn user_changes_spec(world: &mut World, times: usize) {
    let next = Arc::new(std::sync::atomic::AtomicI64::new(1));
    world.deed(
        "user changes the composition's spec",
        times,
        move |client| {
            let value = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async move {
                let api: Api<Composition> = Api::namespaced(client, "default");
                let patch = json!({"spec": {"synthesizer": {"minGeneration": value}}});
                let _ = api
                    .patch("comp", &PatchParams::default(), &Patch::Merge(&patch))
                    .await;
            }
            .boxed()
        },
    );
}

/// Production's Eno controllers (`EnoControllers::run`) with `config`, in `env`.
pub fn controllers(env: HostEnv, config: EnoConfig) -> BoxFuture<'static, ()> {
    let controllers = EnoControllers {
        client: env.client,
        config,
        clock: env.clock,
        ids: env.ids,
        metrics: Metrics::default(),
    };
    controllers.run(shutdown::never(), Readiness::new()).boxed()
}

/// The invariants every Eno world keeps (spec §7): one live synthesizer pod per generation, synthesized
/// output stays recorded, no spurious `SynthesizerNotFound`.
pub fn checks(world: &mut World) {
    world.server_invariant(
        "one live synthesizer pod per generation",
        one_live_pod_per_generation,
    );
    let newest = RefCell::new(None::<String>);
    world.server_invariant("synthesized output stays recorded", move |server| {
        synthesized_stays_recorded(server, &newest)
    });
    world.server_invariant(
        "no spurious SynthesizerNotFound",
        no_spurious_synthesizer_not_found,
    );
}

/// The scenarios of this module.
pub fn scenarios() -> Vec<Scenario> {
    let faults = |budget| crate::sim::Faults::all(budget);
    vec![
        Scenario::new(
            "eno/live-pod-list",
            "the lifecycle controller lists a synthesis' pods live before creating one: never two pods",
            |w| world(w, Guards::default()),
        )
        .configure(|c| c.faults = faults(3)),
        Scenario::new(
            "eno/without-live-pod-list",
            "the live pod list answered from the pod informer: a lagging cache lets a second pod be created",
            |w| {
                world(
                    w,
                    Guards {
                        live_pod_list: false,
                        ..Guards::default()
                    },
                )
            },
        )
        // The race needs one lane (the pod watch) held back while another runs far ahead:
        // PCT's shape. A uniform walk finds it too, but in hundreds of seeds, not tens.
        .configure(|c| c.strategy = crate::strategy::Strategy::Pct { depth: 3 }),
        Scenario::new(
            "eno/rv-checked-status-writes",
            "status writes carry the cached resourceVersion: a stale copy never wins",
            |w| world(w, Guards::default()),
        )
        .configure(|c| {
            c.faults = crate::sim::Faults {
                request_permille: 80,
                budget: 4,
                ..crate::sim::Faults::none()
            }
        }),
        Scenario::new(
            "eno/without-rv-checked-status-writes",
            "status writes from a stale copy win: a second pod, or a finished synthesis orphaned",
            |w| {
                world(
                    w,
                    Guards {
                        rv_checked_status_writes: false,
                        ..Guards::default()
                    },
                )
            },
        )
        // The stale copy must win a race against the executor's write: PCT holds the
        // lifecycle controller's composition watch back long enough; a uniform walk needs
        // hundreds of seeds.
        .configure(|c| c.strategy = crate::strategy::Strategy::Pct { depth: 4 }),
        Scenario::new(
            "eno/cache-sync",
            "the controllers start once every cache has synced: the Synthesizer is always found",
            |w| world(w, Guards::default()),
        )
        .configure(|c| c.faults = faults(3)),
        Scenario::new(
            "eno/without-cache-sync",
            "the controllers start before every cache has synced: a spurious SynthesizerNotFound",
            |w| {
                world(
                    w,
                    Guards {
                        cache_sync: false,
                        ..Guards::default()
                    },
                )
            },
        ),
    ]
}

pub async fn setup(client: kube::Client) {
    // Generating the CRDs (schemars) costs more than a whole run's worth of steps: once a process.
    static CRDS: std::sync::OnceLock<Vec<CustomResourceDefinition>> = std::sync::OnceLock::new();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in CRDS.get_or_init(controllers::eno::types::crds) {
        if let Err(e) = crds.create(&PostParams::default(), crd).await {
            tracing::error!(error = %e, "the fake API server refused an Eno CRD");
        }
    }
    let namespace =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": POD_NAMESPACE}});
    create(Api::<Namespace>::all(client.clone()), namespace).await;
    let synthesizer = json!({
        "apiVersion": "eno.azure.io/v1", "kind": "Synthesizer",
        "metadata": {"name": "synth"},
        "spec": {"image": "synth:1", "command": ["synthesize"], "podTimeout": "2m"}
    });
    create(Api::<Synthesizer>::all(client.clone()), synthesizer).await;
    let composition = json!({
        "apiVersion": "eno.azure.io/v1", "kind": "Composition",
        "metadata": {"name": "comp", "namespace": "default"},
        "spec": {"synthesizer": {"name": "synth"}}
    });
    create(
        Api::<Composition>::namespaced(client, "default"),
        composition,
    )
    .await;
}

/// Creates `value` through `api`; a refusal is logged (the run's goals then fail visibly).
async fn create<K>(api: Api<K>, value: Value)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let object: K = match serde_json::from_value(value) {
        Ok(object) => object,
        Err(e) => {
            tracing::error!(error = %e, "a setup object does not decode");
            return;
        }
    };
    if let Err(e) = api.create(&PostParams::default(), &object).await {
        tracing::error!(error = %e, "setting up the Eno world");
    }
}

/// An in-process synthesizer: one ConfigMap named after the composition. (The executor's other
/// steps — reading the composition, building the input, writing slices, recording the result
/// with a resourceVersion check, dropping stale output — are production code.)
pub fn synthesizer() -> SynthesizerRunner {
    Arc::new(|_syn, input, _timeout, env| {
        async move {
            let name = env
                .iter()
                .find(|(k, _)| k.contains("COMPOSITION_NAME"))
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| "output".into());
            let _ = input;
            Ok::<_, ExecutorError>(vec![json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "default"},
                "data": {"synthesized": "true"}
            })])
        }
        .boxed()
    })
}

pub fn live_pods(server: &FakeApiServer) -> Vec<Value> {
    server
        .list_objects("v1", "pods", Some(POD_NAMESPACE))
        .1
        .into_iter()
        .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
        .collect()
}

pub fn composition(server: &FakeApiServer) -> Option<Value> {
    server.get_object("eno.azure.io/v1", "compositions", Some("default"), "comp")
}

/// Never two live synthesizer pods for one composition, counting every synthesis. Upstream's
/// design does not keep this under informer lag (see [`one_live_pod_per_generation`]); a test
/// shows where it breaks.
pub fn at_most_one_live_pod(server: &FakeApiServer) -> Result<(), String> {
    let live = live_pods(server);
    if live.len() > 1 {
        let names: Vec<&str> = live
            .iter()
            .filter_map(|p| p["metadata"]["name"].as_str())
            .collect();
        return Err(format!(
            "default/comp has {} live synthesizer pods: {}",
            live.len(),
            names.join(", ")
        ));
    }
    Ok(())
}

/// Spec §7.2–§7.4: never two live synthesizer pods for one generation of the composition
/// (the rv-checked status writes, the UUID write before the first pod, the live list by UUID
/// before a create). Pods of *different* generations may overlap: when the pod informer lags
/// behind a spec change, the lifecycle controller cannot see the old pod to delete it as
/// superseded, and the live list looks only at the new UUID — upstream behaves the same, and
/// the stale-output check (§7.8) keeps the old pod's result from being recorded.
pub fn one_live_pod_per_generation(server: &FakeApiServer) -> Result<(), String> {
    let mut by_generation: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for pod in live_pods(server) {
        let generation = pod["metadata"]["annotations"][ANNOTATION_COMPOSITION_GENERATION]
            .as_str()
            .unwrap_or("0")
            .to_string();
        let name = pod["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        by_generation.entry(generation).or_default().push(name);
    }
    match by_generation.iter().find(|(_, pods)| pods.len() > 1) {
        Some((generation, pods)) => Err(format!(
            "generation {generation} of default/comp has {} live synthesizer pods: {}",
            pods.len(),
            pods.join(", ")
        )),
        None => Ok(()),
    }
}

/// The newest synthesis seen synthesized stays recorded (current or previous) until a newer
/// one is: otherwise what it produced is orphaned.
pub fn synthesized_stays_recorded(
    server: &FakeApiServer,
    newest: &RefCell<Option<String>>,
) -> Result<(), String> {
    let Some(comp) = composition(server) else {
        return Ok(());
    };
    let status = &comp["status"];
    let current = &status["currentSynthesis"];
    if !current["synthesized"].is_null() {
        if let Some(uuid) = current["uuid"].as_str() {
            *newest.borrow_mut() = Some(uuid.to_string());
        }
    }
    if let Some(uuid) = newest.borrow().as_deref() {
        let recorded = [current, &status["previousSynthesis"]]
            .iter()
            .any(|s| s["uuid"].as_str() == Some(uuid));
        if !recorded {
            return Err(format!(
                "synthesis {uuid} was synthesized but is no longer recorded on default/comp"
            ));
        }
    }
    Ok(())
}

/// The goal: the composition's current synthesis is synthesized for its current generation,
/// and no synthesizer pod is left running.
pub fn composition_synthesized(server: &FakeApiServer) -> Result<(), String> {
    let comp = composition(server).ok_or("default/comp is gone")?;
    let current = &comp["status"]["currentSynthesis"];
    if current["synthesized"].is_null() {
        return Err("default/comp's current synthesis is not synthesized".into());
    }
    let generation = comp["metadata"]["generation"].as_i64().unwrap_or_default();
    if current["observedCompositionGeneration"].as_i64() != Some(generation) {
        return Err(format!(
            "default/comp is synthesized for generation {}, not {generation}",
            current["observedCompositionGeneration"]
        ));
    }
    let pods = live_pods(server);
    if !pods.is_empty() {
        return Err(format!("{} synthesizer pod(s) still live", pods.len()));
    }
    Ok(())
}

/// The Synthesizer `synth` exists from setup on, so a `SynthesizerNotFound` Warning Event on the
/// composition (what `wiring::report` publishes, through kube's `Recorder`: an
/// `events.k8s.io/v1` Event) can only come from a cache read before that cache synced.
pub fn no_spurious_synthesizer_not_found(server: &FakeApiServer) -> Result<(), String> {
    let synthesizer_exists = server.has_object("eno.azure.io/v1", "synthesizers", None, "synth");
    if !synthesizer_exists {
        return Ok(());
    }
    let events = server
        .list_objects("events.k8s.io/v1", "events", Some("default"))
        .1;
    if let Some(event) = events
        .iter()
        .find(|e| e["reason"].as_str() == Some("SynthesizerNotFound"))
    {
        return Err(format!(
            "a SynthesizerNotFound event on {}/{} while synthesizer synth exists: {}",
            event["regarding"]["namespace"].as_str().unwrap_or_default(),
            event["regarding"]["name"].as_str().unwrap_or_default(),
            event["note"].as_str().unwrap_or_default()
        ));
    }
    Ok(())
}

/// Removes guards by changing the world on the way to the server.
struct Defeat(Guards);

impl Interceptor for Defeat {
    fn intercept(
        &self,
        host: &str,
        method: &str,
        target: &str,
        body: &mut Bytes,
        views: &Views,
        server: &FakeApiServer,
    ) -> Option<http::Response<Body>> {
        let path = target.split('?').next().unwrap_or_default();
        let pods_path = format!("/api/v1/namespaces/{POD_NAMESPACE}/pods");
        if !self.0.live_pod_list
            && method == "GET"
            && path == pods_path
            && target.contains("synthesis-uuid")
            && !target.contains("watch=")
        {
            return Some(pod_list_from_cache(host, target, &pods_path, views));
        }
        if !self.0.rv_checked_status_writes
            && method == "PUT"
            && path.contains("/compositions/")
            && path.ends_with("/status")
        {
            *body = Bytes::from(with_stored_resource_version(server, path, body));
        }
        None
    }
}

/// The pods with the selector's synthesis uuid, as the process's pod informer has them.
fn pod_list_from_cache(
    host: &str,
    target: &str,
    pods_path: &str,
    views: &Views,
) -> http::Response<Body> {
    let wanted = collection(target);
    let uuid = wanted
        .split(&format!("{LABEL_SYNTHESIS_UUID}="))
        .nth(1)
        .unwrap_or_default()
        .split(['&', ','])
        .next()
        .unwrap_or_default()
        .to_string();
    let informer = format!("{pods_path}?labelSelector={LABEL_MANAGED_BY}={MANAGED_BY_ENO}");
    let items: Vec<Value> = views
        .objects(host, &informer)
        .into_iter()
        .filter(|p| p["metadata"]["labels"][LABEL_SYNTHESIS_UUID].as_str() == Some(uuid.as_str()))
        .collect();
    let list = json!({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "0"}, "items": items});
    http::Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(Body::from(serde_json::to_vec(&list).unwrap_or_default()))
        .unwrap_or_default()
}

/// A composition status write with the stored `resourceVersion` put in, so a write from a stale
/// copy wins.
fn with_stored_resource_version(server: &FakeApiServer, path: &str, body: &[u8]) -> Vec<u8> {
    let Ok(mut object) = fake_apiserver::store::json::from_slice(body) else {
        return body.to_vec();
    };
    // .../namespaces/{ns}/compositions/{name}/status
    let segments: Vec<&str> = path.split('/').collect();
    let after = |word: &str| {
        segments
            .iter()
            .position(|s| *s == word)
            .and_then(|i| segments.get(i + 1))
            .copied()
    };
    if let (Some(ns), Some(name)) = (after("namespaces"), after("compositions")) {
        if let Some(stored) = server.get_object("eno.azure.io/v1", "compositions", Some(ns), name) {
            object["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"].clone();
        }
    }
    serde_json::to_vec(&object).unwrap_or_else(|_| body.to_vec())
}
