//! Both controllers, with their production wiring (kube-runtime controllers and watchers), against
//! a fake API server that misbehaves as an overloaded cluster does: 5% of requests answered `429`
//! (with `Retry-After`), `500` or `409`, every watch dropped every few seconds, and the server
//! not answering at all for 2 s. Everything still converges, nothing is done twice, and while the
//! server fails every request the controllers back off instead of storming it.

use crate::eno_support;
use crate::karpenter_support;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use controllers::eno::types::Composition;
use controllers::eno::{LABEL_COMPOSITION_NAME, LABEL_COMPOSITION_NAMESPACE};
use controllers::karpenter::types::{condition_types, NodeClaim};
use fake_apiserver::chaos::{ChaosCounts, ChaosRule};
use fake_apiserver::hooks::RequestMatcher;
use fake_apiserver::FakeApiServer;
use kube::api::{DeleteParams, PostParams};
use kube::Resource;

/// Compositions / NodeClaims each run works on.
const OBJECTS: usize = 6;
/// How long users keep working while the faults last.
const FAULTY_PERIOD: Duration = Duration::from_secs(8);
/// How long convergence may take under faults. After an outage, a watcher waits out its
/// backoff (kube-runtime's, as client-go's reflector: 800 ms doubling to 30 s, with jitter,
/// reset only after 2 min without an error), so recovery can take a minute or more.
const CONVERGE: Duration = Duration::from_secs(150);
/// Requests per second the controllers may send while every request fails. Each failing
/// object is retried with an exponential backoff and each watcher relists with one, so a
/// backed-off client settles far below this; a client retrying at once sends thousands.
const STORM_LIMIT_PER_SECOND: f64 = 60.0;

/// Starts the disruptions: every watch dropped every 3 s, and the server paused for 2 s at
/// t = 4 s. Stops when the returned handle is aborted.
fn disrupt(server: FakeApiServer) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        for tick in 1u64.. {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if tick % 3 == 0 {
                server.drop_watches(RequestMatcher::default());
            }
            if tick == 4 {
                server.chaos().pause();
                tokio::time::sleep(Duration::from_secs(2)).await;
                server.chaos().resume();
            }
        }
    })
}

/// Runs a request of the test's own until it succeeds (the test's client meets the faults too).
async fn retried<T, F, Fut>(what: &str, mut call: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let mut last = None;
    for _ in 0..100 {
        match call().await {
            Ok(value) => return value,
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} kept failing: {last:?}");
}

/// Polls `done` on the server's own state (no request, so no fault) until it holds.
async fn converges(what: &str, within: Duration, mut done: impl FnMut() -> Result<(), String>) {
    let start = tokio::time::Instant::now();
    let deadline = start + within;
    loop {
        let outcome = done();
        match outcome {
            Ok(()) => {
                eprintln!("{what}: converged in {:?}", start.elapsed());
                return;
            }
            Err(why) if tokio::time::Instant::now() >= deadline => {
                panic!("{what} did not converge within {within:?}: {why}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Fails every request for 5 s right after the controllers were given work, and returns the
/// request rate over the last 3 s (after the first failures had time to back off).
async fn rate_while_failing(server: &FakeApiServer) -> f64 {
    server.chaos().set(Some(ChaosRule::rate(99, 1000)));
    server.drop_watches(RequestMatcher::default());
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = server.chaos().counts();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = server.chaos().counts();
    server.chaos().set(None);
    (after.requests - before.requests) as f64 / 3.0
}

/// Reports the faults a run met.
fn met_faults(counts: ChaosCounts) {
    eprintln!(
        "faults: {} of {} requests failed",
        counts.failed, counts.requests
    );
    assert!(
        counts.failed >= 10,
        "too few faults to mean anything: {counts:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Eno.

/// Live (not deleting) synthesizer pods per composition and generation; more than one is a
/// duplicate synthesis.
fn duplicate_live_pods(server: &FakeApiServer, pod_namespace: &str) -> Option<String> {
    let (_, pods) = server.list_objects("v1", "pods", Some(pod_namespace));
    let mut live: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for pod in pods {
        let meta = &pod["metadata"];
        if !meta["deletionTimestamp"].is_null() {
            continue;
        }
        let label = |key: &str| meta["labels"][key].as_str().unwrap_or_default().to_string();
        let generation = meta["annotations"][controllers::eno::ANNOTATION_COMPOSITION_GENERATION]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let composition = format!(
            "{}/{}",
            label(LABEL_COMPOSITION_NAMESPACE),
            label(LABEL_COMPOSITION_NAME)
        );
        live.entry((composition, generation))
            .or_default()
            .push(meta["name"].as_str().unwrap_or_default().to_string());
    }
    live.into_iter()
        .find(|(_, names)| names.len() > 1)
        .map(|((comp, generation), names)| {
            format!("{comp} generation {generation} has live pods {names:?}")
        })
}

/// Watches every pod write and records the first time two live pods serve one synthesis.
fn watch_for_duplicate_pods(
    server: FakeApiServer,
    pod_namespace: String,
) -> (Arc<Mutex<Vec<String>>>, tokio::task::JoinHandle<()>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut events = server.subscribe();
    let record = seen.clone();
    let task = tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(event) if &*event.resource == "/pods" => {
                    if let Some(duplicate) = duplicate_live_pods(&server, &pod_namespace) {
                        record.lock().unwrap().push(duplicate);
                    }
                }
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => return,
            }
        }
    });
    (seen, task)
}

/// Every composition synthesized at its current generation, with no pod left.
fn eno_converged(server: &FakeApiServer, pod_namespace: &str) -> Result<(), String> {
    let (_, compositions) = server.list_objects(
        &Composition::api_version(&()),
        "compositions",
        Some("default"),
    );
    if compositions.len() != OBJECTS {
        return Err(format!("{} compositions", compositions.len()));
    }
    for value in compositions {
        let comp: Composition = serde_json::from_value(value).map_err(|e| e.to_string())?;
        let generation = comp.metadata.generation.unwrap_or(0);
        if !eno_support::synthesized_at(&comp, generation) {
            return Err(format!(
                "{} not synthesized at generation {generation}",
                comp.metadata.name.unwrap_or_default()
            ));
        }
    }
    let (_, pods) = server.list_objects("v1", "pods", Some(pod_namespace));
    match pods.len() {
        0 => Ok(()),
        n => Err(format!("{n} synthesizer pods left")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eno_converges_under_api_faults_without_duplicate_pods_and_backs_off() {
    // The production per-object backoff, so the request rate below is what a cluster would see.
    let env = eno_support::Env::start(eno_support::EnvOptions {
        max_error_backoff: controllers::eno::context::Config::new("eno-system", "test")
            .max_error_backoff,
        ..eno_support::EnvOptions::full()
    })
    .await;
    let server = env.server.clone();
    eno_support::create_synthesizer(&env.client, &eno_support::output_synthesizer("syn")).await;
    let (duplicates, watcher) = watch_for_duplicate_pods(server.clone(), env.pod_namespace.clone());

    server.chaos().set(Some(ChaosRule::rate(5, 50)));
    let disruption = disrupt(server.clone());
    let compositions = env.compositions("default");
    let post = PostParams::default();
    for i in 0..OBJECTS {
        let comp = controllers::eno::demo::demo_composition(&format!("c{i}"), "default", "syn");
        retried("creating a composition", || {
            compositions.create(&post, &comp)
        })
        .await;
    }
    // Users keep changing compositions while the faults last.
    let started = tokio::time::Instant::now();
    for revision in 1.. {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let name = format!("c{}", revision % OBJECTS);
        eno_support::bump_generation(&env.client, "default", &name, revision).await;
        if started.elapsed() >= FAULTY_PERIOD {
            break;
        }
    }
    converges("every composition under faults", CONVERGE, || {
        eno_converged(&server, &env.pod_namespace)
    })
    .await;
    disruption.abort();
    server.chaos().resume();
    server.chaos().set(None);
    met_faults(server.chaos().counts());

    // Give every composition new work, then fail every request.
    for i in 0..OBJECTS {
        eno_support::bump_generation(&env.client, "default", &format!("c{i}"), 1000).await;
    }
    let rate = rate_while_failing(&server).await;
    eprintln!("eno: {rate:.1} requests/s while every request failed");
    converges("every composition after the outage", CONVERGE, || {
        eno_converged(&server, &env.pod_namespace)
    })
    .await;

    watcher.abort();
    let duplicates = duplicates.lock().unwrap().clone();
    assert!(duplicates.is_empty(), "duplicate pods: {duplicates:?}");
    assert!(
        rate < STORM_LIMIT_PER_SECOND,
        "{rate:.1} requests/s against a failing server: the controllers do not back off"
    );
    env.stop().await;
}

// ---------------------------------------------------------------------------------------------
// Karpenter.

/// Every NodeClaim Ready with exactly one Node, and no other kwok Node.
fn karpenter_ready(server: &FakeApiServer) -> Result<(), String> {
    let (_, claims) = server.list_objects(&NodeClaim::api_version(&()), "nodeclaims", None);
    if claims.len() != OBJECTS {
        return Err(format!("{} nodeclaims", claims.len()));
    }
    let (_, nodes) = server.list_objects("v1", "nodes", None);
    if nodes.len() != OBJECTS {
        return Err(format!("{} Nodes for {OBJECTS} NodeClaims", nodes.len()));
    }
    let mut provider_ids: BTreeMap<String, usize> = BTreeMap::new();
    for node in &nodes {
        if let Some(id) = node["spec"]["providerID"].as_str() {
            *provider_ids.entry(id.to_string()).or_default() += 1;
        }
    }
    for value in claims {
        let claim: NodeClaim = serde_json::from_value(value).map_err(|e| e.to_string())?;
        let name = claim.metadata.name.clone().unwrap_or_default();
        if !claim.condition_is_true(condition_types::READY) {
            return Err(format!("{name} not Ready"));
        }
        let nodes = provider_ids.get(claim.provider_id()).copied().unwrap_or(0);
        if nodes != 1 {
            return Err(format!("{name} has {nodes} Nodes"));
        }
    }
    Ok(())
}

/// Every NodeClaim, Node and instance gone.
fn karpenter_gone(
    server: &FakeApiServer,
    kwok: &controllers::karpenter::cloudprovider::kwok::KwokCloudProvider,
) -> Result<(), String> {
    let (_, claims) = server.list_objects(&NodeClaim::api_version(&()), "nodeclaims", None);
    let (_, nodes) = server.list_objects("v1", "nodes", None);
    let instances = kwok.instances().len();
    if claims.is_empty() && nodes.is_empty() && instances == 0 {
        Ok(())
    } else {
        Err(format!(
            "{} nodeclaims, {} nodes, {instances} instances left",
            claims.len(),
            nodes.len()
        ))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn karpenter_converges_under_api_faults_without_duplicate_instances_and_backs_off() {
    let (env, kwok) =
        karpenter_support::Running::start(karpenter_support::ProviderChoice::Kwok(None), true)
            .await;
    let kwok = kwok.expect("the kwok provider");
    let server = env.server.clone();
    // The controllers' clock runs at real speed, so garbage collection ages leaked instances.
    let clock = env.clock.clone();
    let ticking = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            clock.advance(jiff::SignedDuration::from_millis(100));
        }
    });
    // The first Node a launch creates fails: that instance runs with no Node and no NodeClaim
    // knowing it (the split write of spec §6.3) until garbage collection deletes it.
    server.add_fault(fake_apiserver::hooks::FaultRule {
        matcher: RequestMatcher {
            verb: Some("create".into()),
            resource: Some("nodes".into()),
            ..Default::default()
        },
        error: fake_apiserver::error::ApiError::internal("injected fault"),
        times: Some(1),
    });

    server.chaos().set(Some(ChaosRule::rate(6, 50)));
    let disruption = disrupt(server.clone());
    let claims = env.nodeclaims();
    let post = PostParams::default();
    let mut names = Vec::new();
    // NodeClaims arrive one by one while the faults last.
    let pace = FAULTY_PERIOD / OBJECTS as u32;
    for i in 0..OBJECTS {
        let claim = karpenter_support::kwok_nodeclaim(&format!("nc{i}"));
        retried("creating a nodeclaim", || claims.create(&post, &claim)).await;
        names.push(format!("nc{i}"));
        tokio::time::sleep(pace).await;
    }
    converges("every NodeClaim Ready under faults", CONVERGE, || {
        karpenter_ready(&server)
    })
    .await;
    disruption.abort();
    server.chaos().resume();
    server.chaos().set(None);
    met_faults(server.chaos().counts());
    eprintln!("instances once Ready: {}", kwok.instances().len());

    // Deleting gives every NodeClaim termination work; then every request fails.
    for name in &names {
        claims.delete(name, &DeleteParams::default()).await.unwrap();
    }
    let rate = rate_while_failing(&server).await;
    eprintln!("karpenter: {rate:.1} requests/s while every request failed");
    converges("every NodeClaim, Node and instance gone", CONVERGE, || {
        karpenter_gone(&server, &kwok)
    })
    .await;
    assert!(
        rate < STORM_LIMIT_PER_SECOND,
        "{rate:.1} requests/s against a failing server: the controllers do not back off"
    );
    ticking.abort();
    env.stop().await;
}
