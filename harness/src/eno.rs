//! Eno's synthesis pod lifecycle as a harness model.
//!
//! The lifecycle and status controllers run their real reconcile functions
//! (`controllers::eno::lifecycle::reconcile`, `controllers::eno::status_controller::reconcile`)
//! against the in-process fake API server. Each controller reads through its own
//! [`LaggingCache`]s, so the harness decides when each sees each event. The other actors are
//! harness actions: the in-pod executor finishing a synthesis, and virtual time moving to the
//! next requeue. After every step the spec's invariant is checked against the server: a
//! composition never has more than one live synthesizer pod.
//!
//! [`Guards`] can defeat one guard of the seed — the live pod list before a create (spec §3 step
//! 14, §7.4) — without touching controller code: the harness answers that list from the
//! lifecycle controller's lagging pod cache instead of the server, as if the guard were a cache
//! read. With the guard defeated, some seeds create a second pod; with it, none does.
//!
//! [`EnoModel::allowing_crash`] also offers one crash of the controller process (both
//! controllers): caches and work queue are lost, and it starts again from fresh lists. Eno's
//! guards live in the API server (a live list, resourceVersion-checked writes), not in memory, so
//! a crash must not break the invariants either. [`EnoModel::allowing_watch_drops`] offers one
//! dropped watch instead: one cache lists again, skipping the events it had not seen yet.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use controllers::clock::{Clock, ManualClock};
use controllers::eno::context::{Config, Context};
use controllers::eno::metrics::Metrics;
use controllers::eno::status_controller::StatusContext;
use controllers::eno::types::{Composition, Synthesizer};
use controllers::eno::wiring::pod_to_composition;
use controllers::eno::{
    lifecycle, status_controller, LABEL_MANAGED_BY, LABEL_SYNTHESIS_UUID, MANAGED_BY_ENO,
};
use controllers::ids::SeededIds;
use fake_apiserver::FakeApiServer;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::ResourceExt;
use serde_json::{json, Value};
use tower::ServiceExt;

use crate::cache::{CacheScope, Delivered, LagBound, LaggingCache};
use crate::engine::{requeue_at, Model};

/// Namespace of synthesizer pods.
pub const POD_NAMESPACE: &str = "eno";

/// Which guards of the controller are in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guards {
    /// Step 14: list the synthesis' pods from the API server before creating one.
    pub live_pod_list: bool,
    /// Every status write carries the cached `resourceVersion`, so a write from a stale copy
    /// gets a 409 (spec §5.8, §7.2).
    pub rv_checked_status_writes: bool,
}

impl Default for Guards {
    fn default() -> Self {
        Self {
            live_pod_list: true,
            rv_checked_status_writes: true,
        }
    }
}

/// Which reconciler a queued key is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Controller {
    Lifecycle,
    Status,
}

/// The Eno model: one Synthesizer, one Composition, two controllers, lagging caches.
pub struct EnoModel {
    server: FakeApiServer,
    clock: ManualClock,
    guards: Guards,
    /// The id source; a restarted process goes on drawing from it (fresh UUIDs, as a new process
    /// would have, yet deterministic).
    ids: Arc<SeededIds>,
    /// The controllers' contexts and caches (replaced when the process crashes).
    process: Process,
    /// Queued reconciles: (controller, namespace/name) → when due.
    queue: BTreeMap<(Controller, String, String), Timestamp>,
    /// Keeps the caches' lag realistic.
    lag: LagBound,
    /// Whether the user has changed the composition's spec yet (once per run).
    spec_updated: bool,
    /// Whether a crash is offered, and whether it happened (once per run).
    crash_allowed: bool,
    crashed: bool,
    /// Dropped watches still to offer (each makes one cache list again).
    watch_drops_left: usize,
    /// The newest synthesis the executor marked synthesized.
    last_synthesized: Option<String>,
    /// The last action list handed out by `actions`.
    offered: Vec<Offer>,
    steps: usize,
    max_steps: usize,
}

#[derive(Debug, Clone)]
enum Offer {
    Deliver(&'static str),
    Reconcile(Controller, String, String),
    KubeletStarts(String),
    ExecutorCompletes(String),
    UserUpdatesSpec,
    AdvanceTo(Timestamp),
    Crash,
    DropWatch(&'static str),
}

fn key_of<K: kube::Resource>(obj: &K) -> (String, String) {
    (obj.namespace().unwrap_or_default(), obj.name_any())
}

impl EnoModel {
    /// A model seeded with `seed` (uids, generated names, UUIDs and the schedule).
    pub async fn new(seed: u64, guards: Guards, pod_timeout: Duration) -> Self {
        let clock = ManualClock::default();
        let server_clock = clock.clone();
        let server = FakeApiServer::builder()
            .seed(seed)
            .clock(move || server_clock.now())
            .build();
        let client = server.client();
        setup(&client, pod_timeout).await;

        let ids = Arc::new(SeededIds::new(seed));
        let process = Process::start(&server, &client, &clock, &ids, guards);
        let mut queue = BTreeMap::new();
        let now = clock.now();
        queue.insert(
            (
                Controller::Lifecycle,
                "default".to_string(),
                "comp".to_string(),
            ),
            now,
        );
        Self {
            server,
            clock,
            guards,
            ids,
            process,
            queue,
            lag: LagBound::new(SignedDuration::from_secs(1)),
            spec_updated: false,
            crash_allowed: false,
            crashed: false,
            watch_drops_left: 0,
            last_synthesized: None,
            offered: Vec::new(),
            steps: 0,
            max_steps: 200,
        }
    }

    /// The same model, also offering one crash and restart of the controller process.
    pub fn allowing_crash(mut self) -> Self {
        self.crash_allowed = true;
        self
    }

    /// The same model, also offering one dropped watch: a cache whose resourceVersion expired
    /// lists again, skipping the events it had not seen yet.
    pub fn allowing_watch_drops(mut self) -> Self {
        self.watch_drops_left = 1;
        self
    }

    /// The controller process dies and starts again: both controllers get new caches (listed
    /// afresh) and an empty work queue, which the initial lists fill as kube-runtime's would
    /// (every composition for the lifecycle controller, every pod for both).
    fn crash_and_restart(&mut self) -> String {
        let client = self.server.client();
        let process = Process::start(&self.server, &client, &self.clock, &self.ids, self.guards);
        self.process = process;
        self.queue.clear();
        self.lag = LagBound::new(SignedDuration::from_secs(1));
        for composition in self.process.lifecycle_ctx.compositions.state() {
            self.enqueue(Controller::Lifecycle, key_of(composition.as_ref()));
        }
        for pod in self.process.lifecycle_ctx.pods.state() {
            self.map_pod(&pod);
        }
        for pod in self.process.status_ctx.pods.state() {
            self.enqueue(Controller::Status, key_of(pod.as_ref()));
        }
        format!("restarted, {} queued", self.queue.len())
    }

    fn enqueue(&mut self, controller: Controller, key: (String, String)) {
        let now = self.clock.now();
        let entry = self.queue.entry((controller, key.0, key.1)).or_insert(now);
        if *entry > now {
            *entry = now;
        }
    }

    fn map_pod(&mut self, pod: &Pod) {
        if let Some(comp) = pod_to_composition(pod) {
            self.enqueue(
                Controller::Lifecycle,
                (
                    comp.namespace.clone().unwrap_or_default(),
                    comp.name.clone(),
                ),
            );
        }
    }

    /// Live synthesizer pods of the composition, from the server (the truth).
    fn pods(&self) -> Vec<Value> {
        self.server
            .list_objects("v1", "pods", Some(POD_NAMESPACE))
            .1
    }
}

/// What lives in the controller process (and is lost when it crashes): both controllers'
/// contexts and caches.
struct Process {
    lifecycle_ctx: Arc<Context>,
    status_ctx: Arc<StatusContext>,
    /// Caches of the lifecycle controller: compositions, pods, synthesizers.
    lifecycle_caches: (
        LaggingCache<Composition>,
        LaggingCache<Pod>,
        LaggingCache<Synthesizer>,
    ),
    /// Caches of the status controller: pods, compositions.
    status_caches: (LaggingCache<Pod>, LaggingCache<Composition>),
}

impl Process {
    /// Starts the controllers with caches in sync with the server now.
    fn start(
        server: &FakeApiServer,
        client: &kube::Client,
        clock: &ManualClock,
        ids: &Arc<SeededIds>,
        guards: Guards,
    ) -> Self {
        let lifecycle_caches = (
            LaggingCache::new(server, CacheScope::all("eno.azure.io/v1", "compositions")),
            LaggingCache::new(server, pod_scope()),
            LaggingCache::new(server, CacheScope::all("eno.azure.io/v1", "synthesizers")),
        );
        let status_caches = (
            LaggingCache::new(server, pod_scope()),
            LaggingCache::new(server, CacheScope::all("eno.azure.io/v1", "compositions")),
        );
        let lifecycle_client = if guards == Guards::default() {
            client.clone()
        } else {
            defeating_client(server, lifecycle_caches.1.store(), guards)
        };
        let lifecycle_ctx = Arc::new(Context {
            client: lifecycle_client,
            compositions: lifecycle_caches.0.store(),
            pods: lifecycle_caches.1.store(),
            synthesizers: lifecycle_caches.2.store(),
            config: Config::new(POD_NAMESPACE, "controllers:harness"),
            clock: Arc::new(clock.clone()),
            ids: ids.clone(),
            metrics: Metrics::default(),
        });
        let status_ctx = Arc::new(StatusContext {
            client: client.clone(),
            pods: status_caches.0.store(),
            compositions: status_caches.1.store(),
        });
        Self {
            lifecycle_ctx,
            status_ctx,
            lifecycle_caches,
            status_caches,
        }
    }
}

/// The caches of both controllers, by the names the schedule uses.
const CACHES: [&str; 5] = [
    "lifecycle/compositions",
    "lifecycle/pods",
    "lifecycle/synthesizers",
    "status/pods",
    "status/compositions",
];

fn pod_scope() -> CacheScope {
    CacheScope::all("v1", "pods")
        .in_namespace(POD_NAMESPACE)
        .with_label(LABEL_MANAGED_BY, MANAGED_BY_ENO)
}

async fn setup(client: &kube::Client, pod_timeout: Duration) {
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(client.clone());
    for crd in controllers::crds::all() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("the fake API server accepts the CRDs");
    }
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": POD_NAMESPACE}}))
                .expect("namespace"),
        )
        .await
        .expect("pod namespace");
    let synthesizers: Api<Synthesizer> = Api::all(client.clone());
    let synthesizer: Synthesizer = serde_json::from_value(json!({
        "apiVersion": "eno.azure.io/v1", "kind": "Synthesizer",
        "metadata": {"name": "synth"},
        "spec": {"image": "synth:1", "command": ["synthesize"], "podTimeout": format!("{}ms", pod_timeout.as_millis())}
    }))
    .expect("synthesizer");
    synthesizers
        .create(&PostParams::default(), &synthesizer)
        .await
        .expect("synthesizer");
    let compositions: Api<Composition> = Api::namespaced(client.clone(), "default");
    let composition: Composition = serde_json::from_value(json!({
        "apiVersion": "eno.azure.io/v1", "kind": "Composition",
        "metadata": {"name": "comp", "namespace": "default"},
        "spec": {"synthesizer": {"name": "synth"}}
    }))
    .expect("composition");
    compositions
        .create(&PostParams::default(), &composition)
        .await
        .expect("composition");
}

/// A client that defeats the guards `guards` turns off, from the outside: a namespaced pod list
/// with a synthesis-uuid selector is answered from `cache` (the live list becomes a cache read),
/// and a composition status write gets the stored `resourceVersion` put in (so a write from a
/// stale copy wins, as a merge patch without one would). Every other request goes to the server.
fn defeating_client(server: &FakeApiServer, cache: Store<Pod>, guards: Guards) -> kube::Client {
    let server = server.clone();
    let router = server.router();
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let router = router.clone();
        let cache = cache.clone();
        let server = server.clone();
        async move {
            let path = request.uri().path().to_string();
            let query = request.uri().query().unwrap_or_default().to_string();
            let is_uuid_list = request.method() == http::Method::GET
                && path == format!("/api/v1/namespaces/{POD_NAMESPACE}/pods")
                && query.contains("synthesis-uuid")
                && !query.contains("watch");
            if is_uuid_list && !guards.live_pod_list {
                return Ok::<_, std::convert::Infallible>(pod_list_from(&cache, &query));
            }
            let (parts, body) = request.into_parts();
            let is_status_write = parts.method == http::Method::PUT
                && path.contains("/compositions/")
                && path.ends_with("/status");
            let body = if is_status_write && !guards.rv_checked_status_writes {
                let bytes = http_body_util::BodyExt::collect(body)
                    .await
                    .map(|c| c.to_bytes())
                    .unwrap_or_default();
                Body::from(with_stored_resource_version(&server, &path, &bytes))
            } else {
                Body::new(body)
            };
            router.oneshot(http::Request::from_parts(parts, body)).await
        }
    });
    kube::Client::new(service, "default")
}

/// A PodList of the cached pods carrying the selector's synthesis uuid.
fn pod_list_from(cache: &Store<Pod>, query: &str) -> http::Response<Body> {
    let decoded = fake_apiserver::request::Query::parse(Some(query));
    let selector = decoded.get("labelSelector").unwrap_or_default().to_string();
    let uuid = selector.split('=').nth(1).unwrap_or_default().to_string();
    let items: Vec<Value> = cache
        .state()
        .iter()
        .filter(|p| p.labels().get(LABEL_SYNTHESIS_UUID) == Some(&uuid))
        .filter_map(|p| serde_json::to_value(p.as_ref()).ok())
        .collect();
    let list = json!({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": items});
    http::Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(Body::from(serde_json::to_vec(&list).unwrap_or_default()))
        .unwrap_or_default()
}

/// The body with `metadata.resourceVersion` replaced by what the server stores now.
fn with_stored_resource_version(server: &FakeApiServer, path: &str, body: &[u8]) -> Vec<u8> {
    let Ok(mut object) = serde_json::from_slice::<Value>(body) else {
        return body.to_vec();
    };
    // .../namespaces/{ns}/compositions/{name}/status
    let segments: Vec<&str> = path.split('/').collect();
    let (Some(ns), Some(name)) = (
        segments
            .iter()
            .position(|s| *s == "namespaces")
            .and_then(|i| segments.get(i + 1)),
        segments
            .iter()
            .position(|s| *s == "compositions")
            .and_then(|i| segments.get(i + 1)),
    ) else {
        return body.to_vec();
    };
    if let Some(stored) = server.get_object("eno.azure.io/v1", "compositions", Some(ns), name) {
        object["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"].clone();
    }
    serde_json::to_vec(&object).unwrap_or_else(|_| body.to_vec())
}

impl Model for EnoModel {
    fn actions(&mut self) -> Vec<String> {
        self.offered.clear();
        if self.steps >= self.max_steps {
            return Vec::new();
        }
        let now = self.clock.now();
        let pending = [
            (
                "lifecycle/compositions",
                self.process.lifecycle_caches.0.pending(),
            ),
            ("lifecycle/pods", self.process.lifecycle_caches.1.pending()),
            (
                "lifecycle/synthesizers",
                self.process.lifecycle_caches.2.pending(),
            ),
            ("status/pods", self.process.status_caches.0.pending()),
            (
                "status/compositions",
                self.process.status_caches.1.pending(),
            ),
        ];
        for (cache, count) in pending {
            self.lag.observe(cache, count, now);
            if count > 0 {
                self.offered.push(Offer::Deliver(cache));
            }
        }
        let mut next_due: Option<Timestamp> = None;
        for ((controller, ns, name), due) in &self.queue {
            if *due <= now {
                self.offered
                    .push(Offer::Reconcile(*controller, ns.clone(), name.clone()));
            } else {
                next_due = Some(next_due.map_or(*due, |d| d.min(*due)));
            }
        }
        // The executor of a live pod whose synthesis is still the current one may finish.
        let comp =
            self.server
                .get_object("eno.azure.io/v1", "compositions", Some("default"), "comp");
        let current = comp
            .as_ref()
            .map(|c| c["status"]["currentSynthesis"].clone())
            .unwrap_or(Value::Null);
        for pod in self.pods() {
            let live = pod["metadata"]["deletionTimestamp"].is_null();
            let running = pod["status"]["phase"] == "Running";
            let name = pod["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if live && !running {
                self.offered.push(Offer::KubeletStarts(name));
            } else if live
                && current["synthesized"].is_null()
                && current["uuid"].is_string()
                && pod["metadata"]["labels"][LABEL_SYNTHESIS_UUID] == current["uuid"]
            {
                self.offered.push(Offer::ExecutorCompletes(name));
            }
        }
        if !self.spec_updated {
            self.offered.push(Offer::UserUpdatesSpec);
        }
        if self.crash_allowed && !self.crashed {
            self.offered.push(Offer::Crash);
        }
        if self.watch_drops_left > 0 {
            for cache in CACHES {
                self.offered.push(Offer::DropWatch(cache));
            }
        }
        if let Some(due) = next_due.map(|d| self.lag.cap(d)).filter(|d| *d > now) {
            self.offered.push(Offer::AdvanceTo(due));
        }
        self.offered
            .iter()
            .map(|o| match o {
                Offer::Deliver(cache) => format!("deliver {cache}"),
                Offer::Reconcile(Controller::Lifecycle, ns, n) => {
                    format!("reconcile lifecycle {ns}/{n}")
                }
                Offer::Reconcile(Controller::Status, ns, n) => format!("reconcile status {ns}/{n}"),
                Offer::KubeletStarts(pod) => format!("kubelet starts {pod}"),
                Offer::ExecutorCompletes(pod) => format!("executor {pod} completes"),
                Offer::UserUpdatesSpec => "user changes the composition's spec".to_string(),
                Offer::AdvanceTo(t) => format!("advance clock to {t}"),
                Offer::Crash => "crash and restart the controllers".to_string(),
                Offer::DropWatch(cache) => format!("drop the {cache} watch"),
            })
            .collect()
    }

    async fn perform(&mut self, index: usize) -> String {
        self.steps += 1;
        let Some(offer) = self.offered.get(index).cloned() else {
            return "nothing".into();
        };
        match offer {
            Offer::Deliver(cache) => self.deliver(cache),
            Offer::Reconcile(controller, ns, name) => self.reconcile(controller, ns, name).await,
            Offer::KubeletStarts(pod) => self.start(&pod).await,
            Offer::ExecutorCompletes(pod) => self.complete(&pod).await,
            Offer::UserUpdatesSpec => {
                self.spec_updated = true;
                let api: Api<Composition> = Api::namespaced(self.server.client(), "default");
                let patch = json!({"spec": {"synthesizer": {"minGeneration": 1}}});
                match api
                    .patch(
                        "comp",
                        &kube::api::PatchParams::default(),
                        &kube::api::Patch::Merge(&patch),
                    )
                    .await
                {
                    Ok(c) => format!("generation {}", c.metadata.generation.unwrap_or_default()),
                    Err(e) => format!("update failed: {e}"),
                }
            }
            Offer::AdvanceTo(t) => {
                self.clock.set(t);
                format!("now {t}")
            }
            Offer::Crash => {
                self.crashed = true;
                self.crash_and_restart()
            }
            Offer::DropWatch(cache) => {
                self.watch_drops_left -= 1;
                self.relist(cache)
            }
        }
    }

    async fn check(&mut self) -> Result<(), String> {
        let live: Vec<String> = self
            .pods()
            .iter()
            .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
            .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string))
            .collect();
        if live.len() > 1 {
            return Err(format!(
                "composition default/comp has {} live synthesizer pods: {}",
                live.len(),
                live.join(", ")
            ));
        }
        // The newest synthesized synthesis stays recorded (as current or previous) until a newer
        // one is synthesized: otherwise the resources it produced are orphaned.
        if let Some(uuid) = &self.last_synthesized {
            let comp =
                self.server
                    .get_object("eno.azure.io/v1", "compositions", Some("default"), "comp");
            if let Some(status) = comp.as_ref().map(|c| &c["status"]) {
                let recorded = [&status["currentSynthesis"], &status["previousSynthesis"]]
                    .iter()
                    .any(|s| s["uuid"].as_str() == Some(uuid.as_str()));
                if !recorded {
                    return Err(format!(
                        "synthesis {uuid} was synthesized but is no longer recorded on default/comp: its output is orphaned"
                    ));
                }
            }
        }
        Ok(())
    }
}

impl EnoModel {
    fn deliver(&mut self, cache: &str) -> String {
        match cache {
            "lifecycle/compositions" => {
                let d = self.process.lifecycle_caches.0.deliver_one();
                if let Some(Delivered::Applied(c) | Delivered::Deleted(c)) = &d {
                    self.enqueue(Controller::Lifecycle, key_of(c.as_ref()));
                }
                describe(&d, "composition")
            }
            "lifecycle/pods" => {
                let d = self.process.lifecycle_caches.1.deliver_one();
                if let Some(Delivered::Applied(p) | Delivered::Deleted(p)) = &d {
                    let pod = p.clone();
                    self.map_pod(&pod);
                }
                describe(&d, "pod")
            }
            "lifecycle/synthesizers" => {
                let d = self.process.lifecycle_caches.2.deliver_one();
                describe(&d, "synthesizer")
            }
            "status/pods" => {
                let d = self.process.status_caches.0.deliver_one();
                if let Some(Delivered::Applied(p)) = &d {
                    self.enqueue(Controller::Status, key_of(p.as_ref()));
                }
                describe(&d, "pod")
            }
            _ => {
                let d = self.process.status_caches.1.deliver_one();
                describe(&d, "composition")
            }
        }
    }

    /// A cache lists again after its watch dropped; the controller's watch triggers on every
    /// listed object, as it does on deliveries.
    fn relist(&mut self, cache: &str) -> String {
        let count = match cache {
            "lifecycle/compositions" => {
                let listed = self.process.lifecycle_caches.0.relist();
                for c in &listed {
                    self.enqueue(Controller::Lifecycle, key_of(c.as_ref()));
                }
                listed.len()
            }
            "lifecycle/pods" => {
                let listed = self.process.lifecycle_caches.1.relist();
                for p in &listed {
                    self.map_pod(p);
                }
                listed.len()
            }
            "lifecycle/synthesizers" => self.process.lifecycle_caches.2.relist().len(),
            "status/pods" => {
                let listed = self.process.status_caches.0.relist();
                for p in &listed {
                    self.enqueue(Controller::Status, key_of(p.as_ref()));
                }
                listed.len()
            }
            _ => self.process.status_caches.1.relist().len(),
        };
        format!("{count} listed")
    }

    async fn reconcile(&mut self, controller: Controller, ns: String, name: String) -> String {
        self.queue.remove(&(controller, ns.clone(), name.clone()));
        let result = match controller {
            Controller::Lifecycle => {
                let key: Composition = serde_json::from_value(json!({
                    "apiVersion": "eno.azure.io/v1", "kind": "Composition",
                    "metadata": {"name": name, "namespace": ns}, "spec": {"synthesizer": {"name": ""}}
                }))
                .expect("a composition key");
                lifecycle::reconcile(Arc::new(key), self.process.lifecycle_ctx.clone())
                    .await
                    .map_err(|e| e.to_string())
            }
            Controller::Status => {
                let cached = self
                    .process
                    .status_ctx
                    .pods
                    .get(&ObjectRef::new(&name).within(&ns));
                match cached {
                    Some(pod) => status_controller::reconcile(pod, self.process.status_ctx.clone())
                        .await
                        .map_err(|e| e.to_string()),
                    None => Ok(Action::await_change()),
                }
            }
        };
        let now = self.clock.now();
        match result {
            Ok(action) => match requeue_at(now, &action) {
                Some((due, after)) => {
                    self.queue.insert((controller, ns, name), due);
                    format!("requeue after {after:?}")
                }
                None => "done".into(),
            },
            Err(e) => {
                // Retried a second later (the production error policy backs off similarly).
                let due = now.checked_add(SignedDuration::from_secs(1)).unwrap_or(now);
                self.queue.insert((controller, ns, name), due);
                let brief = e.split(" (Status {").next().unwrap_or_default().to_string();
                format!("error: {brief}")
            }
        }
    }

    /// The kubelet starts a pod's container: phase Running, written through `/status`.
    async fn start(&mut self, pod: &str) -> String {
        let api: Api<Pod> = Api::namespaced(self.server.client(), POD_NAMESPACE);
        let Ok(mut current) = api.get(pod).await else {
            return "pod gone".into();
        };
        let status = current.status.get_or_insert_with(Default::default);
        status.phase = Some("Running".into());
        match api
            .replace_status(pod, &PostParams::default(), &current)
            .await
        {
            Ok(_) => "running".into(),
            Err(e) => format!("status write failed: {e}"),
        }
    }

    /// The in-pod executor: re-reads the composition and, if the pod's synthesis is still the
    /// current one, marks it synthesized with an rv-checked status update.
    async fn complete(&mut self, pod: &str) -> String {
        let api: Api<Composition> = Api::namespaced(self.server.client(), "default");
        let Ok(mut comp) = api.get("comp").await else {
            return "composition gone".into();
        };
        let Some(current) = comp
            .status
            .as_mut()
            .and_then(|s| s.current_synthesis.as_mut())
        else {
            return "no current synthesis".into();
        };
        current.synthesized = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            self.clock.now(),
        ));
        let uuid = current.uuid.clone();
        match api
            .replace_status("comp", &PostParams::default(), &comp)
            .await
        {
            Ok(_) => {
                self.last_synthesized = Some(uuid);
                format!("synthesized by {pod}")
            }
            Err(e) => format!("status write failed: {e}"),
        }
    }
}

fn describe<K: kube::Resource>(d: &Option<Delivered<K>>, kind: &str) -> String {
    match d {
        Some(Delivered::Applied(o)) => format!("{kind} {} applied", describe_obj(o.as_ref())),
        Some(Delivered::Deleted(o)) => format!("{kind} {} deleted", describe_obj(o.as_ref())),
        None => "filtered".into(),
    }
}

fn describe_obj<K: kube::Resource>(o: &K) -> String {
    format!(
        "{}/{} rv {}",
        o.namespace().unwrap_or_default(),
        o.name_any(),
        o.resource_version().unwrap_or_default()
    )
}
