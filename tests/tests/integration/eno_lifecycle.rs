//! The lifecycle reconcile, one step at a time, against the in-process fake API server.
//!
//! The test owns the caches (reflector stores fed by hand, as the race harness does) and the
//! clock, so each case decides exactly what the controller sees: a cache that is current, one
//! that lags behind the server, or an object no real server would hold.

use crate::eno_support;

use std::sync::Arc;
use std::time::Duration;

use controllers::clock::{Clock, ManualClock};
use controllers::eno::context::pod_composition_index;
use controllers::eno::context::{Config, Context};
use controllers::eno::demo::{demo_composition, ensure_namespace, install_crds};
use controllers::eno::metrics::Metrics;
use controllers::eno::status_controller::{self, StatusContext};
use controllers::eno::types::{Composition, Synthesizer};
use controllers::eno::wiring::pod_to_composition;
use controllers::eno::{lifecycle, FINALIZER, LABEL_MANAGED_BY, LABEL_SYNTHESIS_UUID};
use controllers::ids::{IdSource, SeededIds};
use controllers::operator::index::{self, IndexedWriter};
use eno_support::{
    bump_generation, create_composition, create_synthesizer, delete_composition, mark_reconciled,
    output_synthesizer,
};
use fake_apiserver::FakeApiServer;
use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, ListParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::store::Writer;
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher::Event;
use kube::{Client, Resource, ResourceExt};
use rstest::rstest;
use serde_json::json;

const POD_NS: &str = "eno-system";

/// A lifecycle controller whose caches and clock the test drives.
struct Stepper {
    _server: FakeApiServer,
    client: Client,
    clock: ManualClock,
    ctx: Arc<Context>,
    status_ctx: Arc<StatusContext>,
    compositions: Writer<Composition>,
    pods: IndexedWriter<Pod>,
    status_pods: Writer<Pod>,
    synthesizers: Writer<Synthesizer>,
}

/// A cache writer the test feeds: kube's plain one, or an indexed one.
trait Feed<K> {
    fn feed(&mut self, event: &Event<K>);
}

impl<K> Feed<K> for Writer<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Default + Eq + std::hash::Hash + Clone,
{
    fn feed(&mut self, event: &Event<K>) {
        self.apply_watcher_event(event);
    }
}

impl<K> Feed<K> for IndexedWriter<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Default + Eq + std::hash::Hash + Clone,
{
    fn feed(&mut self, event: &Event<K>) {
        self.apply_watcher_event(event);
    }
}

async fn refill<K>(api: &Api<K>, lp: &ListParams, writer: &mut impl Feed<K>)
where
    K: Resource + Clone + k8s_openapi::serde::de::DeserializeOwned + std::fmt::Debug + 'static,
    K::DynamicType: Default + Eq + std::hash::Hash + Clone,
{
    let items = api.list(lp).await.unwrap().items;
    writer.feed(&Event::Init);
    for item in items {
        writer.feed(&Event::InitApply(item));
    }
    writer.feed(&Event::InitDone);
}

impl Stepper {
    async fn new() -> Self {
        let clock = ManualClock::default();
        let server_clock = clock.clone();
        let server = FakeApiServer::builder()
            .seed(7)
            .clock(move || server_clock.now())
            .build();
        let client = server.client();
        install_crds(&client).await.unwrap();
        ensure_namespace(&client, POD_NS).await.unwrap();
        for ns in ["a", "b"] {
            ensure_namespace(&client, ns).await.unwrap();
        }
        let (comp_store, compositions) = reflector::store();
        let (pod_store, pods) = index::store(pod_composition_index);
        let (status_pod_store, status_pods) = reflector::store();
        let (syn_store, synthesizers) = reflector::store();
        let ctx = Arc::new(Context {
            client: client.clone(),
            compositions: comp_store.clone(),
            pods: pod_store,
            synthesizers: syn_store,
            config: Config::new(POD_NS, "controllers:test"),
            clock: Arc::new(clock.clone()),
            ids: Arc::new(SeededIds::new(42)),
            metrics: Metrics::default(),
        });
        let status_ctx = Arc::new(StatusContext {
            client: client.clone(),
            pods: status_pod_store,
            compositions: comp_store,
        });
        Self {
            _server: server,
            client,
            clock,
            ctx,
            status_ctx,
            compositions,
            pods,
            status_pods,
            synthesizers,
        }
    }

    /// Bring every cache up to date with the server.
    async fn sync(&mut self) {
        self.sync_compositions().await;
        self.sync_pods().await;
        refill(
            &Api::<Synthesizer>::all(self.client.clone()),
            &ListParams::default(),
            &mut self.synthesizers,
        )
        .await;
    }

    async fn sync_compositions(&mut self) {
        refill(
            &Api::<Composition>::all(self.client.clone()),
            &ListParams::default(),
            &mut self.compositions,
        )
        .await;
    }

    async fn sync_pods(&mut self) {
        let lp = ListParams::default().labels(&format!("{LABEL_MANAGED_BY}=eno"));
        let pods = Api::<Pod>::namespaced(self.client.clone(), POD_NS);
        refill(&pods, &lp, &mut self.pods).await;
        refill(&pods, &lp, &mut self.status_pods).await;
    }

    async fn reconcile(&self, ns: &str, name: &str) -> Result<Action, controllers::eno::Error> {
        let key = demo_composition(name, ns, "");
        lifecycle::reconcile(Arc::new(key), self.ctx.clone()).await
    }

    /// Sync, then reconcile; `n` times.
    async fn steps(&mut self, ns: &str, name: &str, n: usize) {
        for _ in 0..n {
            self.sync().await;
            self.reconcile(ns, name).await.unwrap();
        }
    }

    /// Run the status controller on every cached pod, twice: record the attempt, then (once the
    /// record is cached) release the pod.
    async fn record_pods(&mut self) {
        for _ in 0..2 {
            self.sync().await;
            for pod in self.status_ctx.pods.state() {
                status_controller::reconcile(pod, self.status_ctx.clone())
                    .await
                    .unwrap();
            }
        }
    }

    async fn comp(&self, ns: &str, name: &str) -> Option<Composition> {
        Api::<Composition>::namespaced(self.client.clone(), ns)
            .get_opt(name)
            .await
            .unwrap()
    }

    async fn live_pods(&self) -> Vec<Pod> {
        Api::<Pod>::namespaced(self.client.clone(), POD_NS)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
    }

    async fn pods_of(&self, ns: &str, name: &str) -> Vec<Pod> {
        eno_support::pods_of(&self.client, POD_NS, ns, name).await
    }
}

fn current(comp: &Composition) -> controllers::eno::types::Synthesis {
    comp.status.clone().unwrap().current_synthesis.unwrap()
}

#[tokio::test]
async fn each_step_of_a_synthesis_writes_once() {
    let mut s = Stepper::new().await;
    create_synthesizer(&s.client, &output_synthesizer("syn")).await;
    create_composition(&s.client, "a", "x", "syn").await;

    // Step 2: the finalizer, and nothing else.
    s.steps("a", "x", 1).await;
    let comp = s.comp("a", "x").await.unwrap();
    assert!(comp.finalizers().contains(&FINALIZER.to_string()));
    assert!(comp.status.is_none());

    // Step 9: the swap starts a synthesis for the current generation.
    s.steps("a", "x", 1).await;
    let comp = s.comp("a", "x").await.unwrap();
    assert_eq!(
        current(&comp).observed_composition_generation,
        comp.metadata.generation.unwrap()
    );
    assert_eq!(current(&comp).uuid, "");

    // Step 12: the uuid, from the injected id source.
    s.steps("a", "x", 1).await;
    let uuid = current(&s.comp("a", "x").await.unwrap()).uuid;
    assert_eq!(uuid, SeededIds::new(42).uuid().to_string());
    assert!(
        s.live_pods().await.is_empty(),
        "no pod before the uuid write is seen"
    );

    // Step 15: the pod.
    s.steps("a", "x", 1).await;
    let pods = s.live_pods().await;
    assert_eq!(pods.len(), 1);
    assert_eq!(pods[0].labels()[LABEL_SYNTHESIS_UUID], uuid);
    assert_eq!(s.ctx.metrics.syntheses.get(), 1);

    // Step 7: the pod runs; poll after the full podTimeout (5s).
    s.sync().await;
    assert_eq!(
        s.reconcile("a", "x").await.unwrap(),
        Action::requeue(Duration::from_secs(5))
    );
}

#[tokio::test]
async fn the_live_list_finds_a_pod_the_cache_has_not_seen() {
    let mut s = Stepper::new().await;
    create_synthesizer(&s.client, &output_synthesizer("syn")).await;
    create_composition(&s.client, "a", "x", "syn").await;
    s.steps("a", "x", 4).await;
    assert_eq!(s.live_pods().await.len(), 1);
    // The status controller's write re-enqueues the composition before the pod's ADDED event
    // reaches the lifecycle cache (spec §7.4): the composition cache is current, the pod cache
    // is empty.
    s.sync_compositions().await;
    s.pods.apply_watcher_event(&Event::Init);
    s.pods.apply_watcher_event(&Event::InitDone);
    assert!(s.ctx.pods.state().is_empty());
    s.reconcile("a", "x").await.unwrap();
    assert_eq!(s.live_pods().await.len(), 1, "no second pod");
    assert_eq!(s.ctx.metrics.syntheses.get(), 1);
}

#[tokio::test]
async fn a_stale_cache_write_conflicts_instead_of_erasing_a_synthesis() {
    let mut s = Stepper::new().await;
    create_synthesizer(&s.client, &output_synthesizer("syn")).await;
    create_composition(&s.client, "a", "x", "syn").await;
    s.steps("a", "x", 2).await; // finalizer, swap
    s.sync().await; // the cache: swapped, no uuid yet

    // Meanwhile the server moves on: a uuid and a completed synthesis (an executor's write).
    let api = Api::<Composition>::namespaced(s.client.clone(), "a");
    let mut comp = api.get("x").await.unwrap();
    let done = comp
        .status
        .as_mut()
        .unwrap()
        .current_synthesis
        .as_mut()
        .unwrap();
    done.uuid = "executor-uuid".into();
    done.synthesized = Some(Time(s.clock.now()));
    api.replace_status("x", &PostParams::default(), &comp)
        .await
        .unwrap();

    // The lifecycle, from its stale copy, would mint a uuid: the rv makes it a 409 (spec §7.2).
    let err = s.reconcile("a", "x").await.unwrap_err();
    assert!(err.is_conflict(), "{err}");
    let comp = s.comp("a", "x").await.unwrap();
    assert_eq!(current(&comp).uuid, "executor-uuid");
    assert!(current(&comp).synthesized.is_some());
    assert!(s.live_pods().await.is_empty());
}

#[tokio::test]
async fn compositions_with_one_name_in_two_namespaces_keep_their_own_pods() {
    let mut s = Stepper::new().await;
    create_synthesizer(&s.client, &output_synthesizer("syn")).await;
    create_composition(&s.client, "a", "x", "syn").await;
    create_composition(&s.client, "b", "x", "syn").await;
    s.steps("a", "x", 4).await;
    let a_pods = s.pods_of("a", "x").await;
    assert_eq!(a_pods.len(), 1);

    // b/x moves to another generation than a/x's pod carries. Keyed by name only (upstream),
    // b/x would see a/x's pod as its own, superseded one, and delete it (spec §5.3).
    bump_generation(&s.client, "b", "x", 1).await;
    s.steps("b", "x", 6).await;
    let a_after = s.pods_of("a", "x").await;
    assert_eq!(a_after.len(), 1);
    assert_eq!(a_after[0].name_any(), a_pods[0].name_any());
    assert!(
        a_after[0].metadata.deletion_timestamp.is_none(),
        "a/x's pod was not touched"
    );
    assert_eq!(s.pods_of("b", "x").await.len(), 1, "b/x got its own pod");
}

#[tokio::test]
async fn a_missing_synthesizer_is_reported_and_creates_nothing() {
    let mut s = Stepper::new().await;
    create_composition(&s.client, "a", "x", "nope").await;
    s.steps("a", "x", 1).await; // the finalizer comes first
    s.sync().await;
    let err = s.reconcile("a", "x").await.unwrap_err();
    assert!(
        matches!(&err, controllers::eno::Error::SynthesizerNotFound { name } if name == "nope"),
        "{err}"
    );
    assert!(s.live_pods().await.is_empty());
    // Once it exists, synthesis proceeds.
    create_synthesizer(&s.client, &output_synthesizer("nope")).await;
    s.steps("a", "x", 3).await;
    assert_eq!(s.live_pods().await.len(), 1);
}

#[tokio::test]
async fn deletion_completes_without_the_synthesizer() {
    let mut s = Stepper::new().await;
    create_synthesizer(&s.client, &output_synthesizer("syn")).await;
    create_composition(&s.client, "a", "x", "syn").await;
    s.steps("a", "x", 3).await; // finalizer, swap, uuid
    Api::<Synthesizer>::all(s.client.clone())
        .delete("syn", &Default::default())
        .await
        .unwrap();
    delete_composition(&s.client, "a", "x").await;
    // Upstream returns "getting synthesizer" forever here (spec §5.4). D2 fakes the synthesis.
    s.steps("a", "x", 1).await;
    let comp = s.comp("a", "x").await.unwrap();
    assert!(current(&comp).synthesized.is_some());
    assert_eq!(
        current(&comp).observed_composition_generation,
        comp.metadata.generation.unwrap()
    );
    // D3 waits for the reconciler.
    s.steps("a", "x", 2).await;
    assert!(s.comp("a", "x").await.is_some());
    mark_reconciled(&s.client, "a", "x").await;
    s.steps("a", "x", 1).await;
    assert!(
        s.comp("a", "x").await.is_none(),
        "D4 released the composition"
    );
}

#[tokio::test]
async fn a_composition_deleted_before_its_first_swap_is_released() {
    let mut s = Stepper::new().await;
    create_synthesizer(&s.client, &output_synthesizer("syn")).await;
    create_composition(&s.client, "a", "x", "syn").await;
    s.steps("a", "x", 1).await; // finalizer only: no current synthesis
    delete_composition(&s.client, "a", "x").await;
    // Upstream's isReconciling dereferences the nil current synthesis here (spec §5.1).
    s.steps("a", "x", 1).await;
    assert!(s.comp("a", "x").await.is_none());
}

#[tokio::test]
async fn a_synthesizer_without_pod_timeout_never_times_a_pod_out() {
    let mut s = Stepper::new().await;
    create_synthesizer(&s.client, &output_synthesizer("syn")).await;
    create_composition(&s.client, "a", "x", "syn").await;
    s.steps("a", "x", 4).await;
    s.clock.advance(SignedDuration::from_hours(24 * 365));
    s.sync().await;
    // A Synthesizer no defaulting server would hold: no podTimeout at all (spec §5.2).
    let mut syn = Api::<Synthesizer>::all(s.client.clone())
        .get("syn")
        .await
        .unwrap();
    syn.spec.pod_timeout = None;
    s.synthesizers.apply_watcher_event(&Event::Apply(syn));
    assert_eq!(s.reconcile("a", "x").await.unwrap(), Action::await_change());
    let pods = s.live_pods().await;
    assert_eq!(pods.len(), 1);
    assert!(pods[0].metadata.deletion_timestamp.is_none());
}

#[tokio::test]
async fn an_old_pod_times_out_and_the_next_attempt_backs_off() {
    let mut s = Stepper::new().await;
    create_synthesizer(&s.client, &output_synthesizer("syn")).await;
    create_composition(&s.client, "a", "x", "syn").await;
    s.steps("a", "x", 4).await;
    s.record_pods().await; // attempts = 1, pod released
    assert_eq!(current(&s.comp("a", "x").await.unwrap()).attempts, 1);
    s.clock.advance(SignedDuration::from_secs(6)); // past podTimeout (5s)
    s.steps("a", "x", 1).await;
    assert_eq!(s.ctx.metrics.pod_recreations.get(), 1);
    assert!(
        s.live_pods().await.is_empty(),
        "timed-out pod deleted (unbound: at once)"
    );

    // Attempt 2 is due 250ms after the last pod's creation: long past, so a new pod.
    s.steps("a", "x", 1).await;
    assert_eq!(s.live_pods().await.len(), 1);
    s.record_pods().await; // attempts = 2, podCreation = now
    s.clock.advance(SignedDuration::from_secs(6));
    s.steps("a", "x", 1).await; // timeout again
    s.record_pods().await;
    // Backoff: 2 attempts => 500ms after the last pod's creation (6s ago): due. Rewind to
    // just after creation to see the wait.
    s.clock.advance(SignedDuration::from_secs(-6));
    s.sync().await;
    assert_eq!(
        s.reconcile("a", "x").await.unwrap(),
        Action::requeue(Duration::from_millis(500))
    );
}

#[rstest]
#[case::no_labels(json!({}))]
#[case::name_only(json!({"eno.azure.io/composition-name": "x"}))]
#[case::garbage_names(json!({"eno.azure.io/composition-name": "no-such", "eno.azure.io/composition-namespace": "nowhere"}))]
#[tokio::test]
async fn foreign_and_garbage_pods_are_left_alone(#[case] extra_labels: serde_json::Value) {
    let mut s = Stepper::new().await;
    create_synthesizer(&s.client, &output_synthesizer("syn")).await;
    create_composition(&s.client, "a", "x", "syn").await;
    let mut labels = json!({"app.kubernetes.io/managed-by": "eno"});
    for (k, v) in extra_labels.as_object().unwrap() {
        labels[k] = v.clone();
    }
    let stray: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": "stray", "namespace": POD_NS, "labels": labels,
            "annotations": {"eno.azure.io/composition-generation": "garbage", "eno.azure.io/synthesizer-generation": "-"},
            "finalizers": [FINALIZER]
        },
        "spec": {"containers": [{"name": "c", "image": "i"}]}
    }))
    .unwrap();
    Api::<Pod>::namespaced(s.client.clone(), POD_NS)
        .create(&PostParams::default(), &stray)
        .await
        .unwrap();
    assert!(pod_to_composition(&stray).is_none_or(|r| r.name == "no-such"));

    s.steps("a", "x", 4).await;
    let pods = s.live_pods().await;
    assert_eq!(pods.len(), 2, "x got its pod, the stray is still there");
    let stray_now = pods.iter().find(|p| p.name_any() == "stray").unwrap();
    assert!(stray_now.metadata.deletion_timestamp.is_none());

    // The status controller releases the stray (nothing to record it on) without writing to
    // any composition.
    let before = s.comp("a", "x").await.unwrap().resource_version();
    s.sync().await;
    let stray_ref = ObjectRef::<Pod>::new("stray").within(POD_NS);
    let cached = s.status_ctx.pods.get(&stray_ref).unwrap();
    status_controller::reconcile(cached, s.status_ctx.clone())
        .await
        .unwrap();
    let stray_after = Api::<Pod>::namespaced(s.client.clone(), POD_NS)
        .get("stray")
        .await
        .unwrap();
    assert!(stray_after.finalizers().is_empty());
    assert_eq!(s.comp("a", "x").await.unwrap().resource_version(), before);
}
