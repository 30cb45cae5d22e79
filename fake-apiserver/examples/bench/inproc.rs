//! Section 1: the in-process client (`server.client()`, no socket) on one core: GET, CREATE,
//! UPDATE of a realistic pod, and watch delivery to one `Api::watch` stream.

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fake_apiserver::FakeApiServer;
use futures::future::{FutureExt, LocalBoxFuture};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, PostParams, WatchEvent, WatchParams};

use crate::callgrind::Collect;
use crate::fixtures::{self, run_for, Result};
use crate::paired::{self, Probe};
use crate::report::{emit, Figure, Target};

/// How long each throughput loop runs.
const LOOP: Duration = Duration::from_secs(2);
/// The realistic pod's name.
const POD: &str = "checkout-7d9f8b6c5d-x2x9q";
/// The server-only operations, in the order they run (`create_named`, a create whose body is
/// new each time, has no target of its own: it shows what `create`'s alike bodies save).
const SERVER_OPS: [&str; 6] = [
    "get",
    "update",
    "merge",
    "strategic",
    "create",
    "create_named",
];
/// Events the watch-delivery writer produces (at most; it also stops after [`LOOP`]).
const WATCH_EVENTS: u64 = 20_000;

/// Runs section 1 on a current-thread runtime; `ops` limits it to some of `get`, `get_small`,
/// `create`, `update`, `ceiling`, `server` (or one of its operations: `server_get`,
/// `server_update`, `server_merge`, `server_strategic`, `server_create`,
/// `server_create_named`), `minimal`, `watch`
/// (empty: all). Ends with the ratios of the figures it measured to their references.
pub fn run(all: &mut Vec<Figure>, ops: &[String]) -> Result<()> {
    let wanted = |op: &str| ops.is_empty() || ops.iter().any(|o| o == op);
    let server_ops: Vec<&str> = SERVER_OPS
        .iter()
        .copied()
        .filter(|op| wanted("server") || wanted(&format!("server_{op}")))
        .collect();
    fixtures::current_thread()?.block_on(async {
        let server = FakeApiServer::builder()
            .seed(1)
            .history(
                std::env::var("BENCH_HISTORY")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(100_000),
            )
            .build();
        let client = server.client();
        fixtures::create_namespace(&client, "bench").await?;
        let pod = fixtures::install_pod(&client, "bench", POD).await?;
        let pod_bytes = serde_json::to_vec(&pod)?.len();
        emit(
            Figure::info("inproc.pod_size", pod_bytes as f64, "bytes"),
            all,
        );
        // What each ratio is measured with again, in pairs of slices (see `paired`).
        let mut probes: Vec<Probe> = decode_ceiling(&pod, all).await?;
        if wanted("get") {
            let target = Target::AtLeast(100_000.0);
            probes.push(get(&client, POD, "inproc.get", target, all).await?);
        }
        if wanted("get_small") {
            get_small(&client, all).await?;
        }
        if wanted("create") {
            create(&client, all).await?;
        }
        if wanted("update") {
            let target = Target::AtLeast(30_000.0);
            probes.push(update(&client, pod.clone(), "inproc.update", target, all).await?);
        }
        if wanted("ceiling") {
            probes.extend(client_ceiling(&pod, all).await?);
        }
        if !server_ops.is_empty() {
            probes.extend(server_only(&server, &client, &server_ops, all).await?);
        }
        if wanted("minimal") {
            minimal_pod(&client, all).await?;
        }
        if wanted("watch") {
            watch_delivery(&client, all).await?;
        }
        ratios(probes, all).await
    })
}

/// The targets of issue 13, each a ratio to a reference measured in this run (so that the
/// machine's speed cancels out), as (figure, numerator, denominator, target):
///
/// - the server alone spends at most half the time on a write of the pod that the client
///   spends encoding and decoding it (`pod_value_roundtrip`): time ratio = roundtrip rate /
///   server rate;
/// - end to end, UPDATE reaches 0.6 of the client-only ceiling and GET 0.85 of the client's
///   decode ceiling.
fn ratio_targets() -> Vec<(String, String, String, Target)> {
    let writes = SERVER_OPS[1..5].iter().map(|op| {
        (
            format!("ratio.server_{op}_time_vs_roundtrip"),
            "inproc.pod_value_roundtrip".to_string(),
            format!("inproc.server_only.{op}"),
            Target::AtMost(0.5),
        )
    });
    let end_to_end = [
        ("update", "client_only.update", 0.6),
        ("get", "pod_decode_only", 0.85),
        ("get", "client_only.get", 0.85),
    ]
    .map(|(figure, reference, target)| {
        (
            format!("ratio.{figure}_vs_{reference}"),
            format!("inproc.{figure}"),
            format!("inproc.{reference}"),
            Target::AtLeast(target),
        )
    });
    writes.chain(end_to_end).collect()
}

/// Measures each of [`ratio_targets`] whose two operations ran (see `--op`) again, as pairs of
/// slices of both run back to back: the machine's drift between the figures above (seconds
/// apart) does not reach the ratio.
async fn ratios(mut probes: Vec<Probe>, all: &mut Vec<Figure>) -> Result<()> {
    for (name, numerator, denominator, target) in ratio_targets() {
        let position =
            |probes: &[Probe], wanted: &str| probes.iter().position(|p| p.name == wanted);
        let (Some(n), Some(d)) = (
            position(&probes, &numerator),
            position(&probes, &denominator),
        ) else {
            continue;
        };
        let [numerator, denominator] = probes.get_disjoint_mut([n, d])?;
        let measured = paired::measure(numerator, denominator).await?;
        emit(measured.figure(&name, numerator, denominator, target), all);
    }
    Ok(())
}

/// The same `kube::Client` calls as [`update`] and [`get`], against a stub service that answers
/// every request with the stored pod's bytes at once: the client's own cost (request building,
/// encoding, decoding), the ceiling of any in-process server. Returns both as probes.
async fn client_ceiling(pod: &Pod, all: &mut Vec<Figure>) -> Result<Vec<Probe>> {
    let answer = bytes::Bytes::from(serde_json::to_vec(pod)?);
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let answer = answer.clone();
        async move {
            use http_body_util::BodyExt;
            let body = request.into_body().collect().await?.to_bytes();
            std::hint::black_box(body);
            let response = http::Response::builder()
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(axum::body::Body::from(answer))?;
            Ok::<_, fixtures::BoxError>(response)
        }
    });
    let client = kube::Client::new(service, "bench");
    let pods = Rc::new(Api::<Pod>::namespaced(client, "bench"));
    let (name, unit) = ("inproc.client_only.get", "req/s");
    let get = measure(
        name,
        unit,
        Target::None,
        LOOP / 2,
        get_op(pods.clone(), POD),
        all,
    );
    let get = get.await?;
    let current = Rc::new(RefCell::new(pod.clone()));
    let (name, update) = ("inproc.client_only.update", update_op(pods, POD, current));
    let mut update = measure(name, unit, Target::None, LOOP / 2, update, all).await?;
    emit_allocations(name, update.allocations(ALLOC_SAMPLES).await?, all);
    Ok(vec![get, update])
}

/// Runs `op` back to back for `duration`, emits its rate as the figure `name` held against
/// `target`, and returns it as a probe for the ratios.
async fn measure<F, Fut>(
    name: &str,
    unit: &'static str,
    target: Target,
    duration: Duration,
    mut op: F,
    all: &mut Vec<Figure>,
) -> Result<Probe>
where
    F: FnMut(u64) -> Fut + 'static,
    Fut: Future<Output = Result<()>> + 'static,
{
    let run = run_for(duration, u64::MAX, &mut op).await?;
    emit(
        Figure::new(name, run.rate(), unit, target).cores(run.cores()),
        all,
    );
    Ok(Probe::new(name, unit, run.count, op))
}

/// How fast this machine decodes the pod into `k8s_openapi` types (what every client-side read
/// costs at least), and round-trips it through `serde_json::Value` (what a server write costs).
/// Returns the decode and the round trip as probes.
async fn decode_ceiling(pod: &Pod, all: &mut Vec<Figure>) -> Result<Vec<Probe>> {
    let bytes = Rc::new(serde_json::to_vec(pod)?);
    let (slice, unit) = (Duration::from_millis(300), "obj/s");
    let decode = {
        let bytes = bytes.clone();
        move |_| std::future::ready(decode_pod(&bytes))
    };
    let decode = measure(
        "inproc.pod_decode_only",
        unit,
        Target::None,
        slice,
        decode,
        all,
    );
    let decode = decode.await?;
    // What every write of the pod costs the server first: reading its body.
    let value = Rc::new(serde_json::from_slice::<serde_json::Value>(&bytes)?);
    let parse = move |_| std::future::ready(parse_pod(&bytes));
    measure("inproc.pod_parse", unit, Target::None, slice, parse, all).await?;
    let since = crate::alloc_count::Since::now();
    let region = Collect::start("inproc.pod_value_roundtrip");
    for _ in 0..ALLOC_SAMPLES {
        value_roundtrip(&value)?;
    }
    drop(region);
    let allocations = since.per(ALLOC_SAMPLES);
    let roundtrip = move |_| std::future::ready(value_roundtrip(&value));
    let name = "inproc.pod_value_roundtrip";
    let roundtrip = measure(name, unit, Target::None, slice, roundtrip, all).await?;
    emit_allocations(name, allocations, all);
    Ok(vec![decode, roundtrip])
}

/// Decodes the pod's bytes into `k8s_openapi` types.
fn decode_pod(bytes: &[u8]) -> Result<()> {
    let decoded: Pod = serde_json::from_slice(bytes)?;
    std::hint::black_box(decoded);
    Ok(())
}

/// Parses the pod's bytes as the server reads a body.
fn parse_pod(bytes: &[u8]) -> Result<()> {
    std::hint::black_box(fake_apiserver::store::json::from_slice(bytes)?);
    Ok(())
}

/// The pod's value through `k8s_openapi` types and back.
fn value_roundtrip(value: &serde_json::Value) -> Result<()> {
    let typed: Pod = serde_json::from_value(value.clone())?;
    std::hint::black_box(serde_json::to_value(typed)?);
    Ok(())
}

/// Sequential GETs of the pod `name`, reported as `figure`; returns them as a probe.
async fn get(
    client: &kube::Client,
    name: &str,
    figure: &str,
    target: Target,
    all: &mut Vec<Figure>,
) -> Result<Probe> {
    let mut op = get_op(Rc::new(Api::namespaced(client.clone(), "bench")), name);
    run_for(Duration::from_millis(200), 2_000, &mut op).await?;
    measure(figure, "req/s", target, LOOP, op, all).await
}

/// One GET of the pod `name` through `pods`. (Its future is boxed, as [`update_op`]'s: a
/// function cannot name a closure's future type.)
fn get_op(
    pods: Rc<Api<Pod>>,
    name: &str,
) -> impl FnMut(u64) -> LocalBoxFuture<'static, Result<()>> {
    let name: Rc<str> = name.into();
    move |_| {
        let (pods, name) = (pods.clone(), name.clone());
        async move {
            pods.get(&name).await?;
            Ok(())
        }
        .boxed_local()
    }
}

/// The smallest pod a user makes, as `kubectl run web --image=nginx` does (the server adds its
/// defaults: service-account volume, tolerations, ...), for comparison with the realistic one:
/// its size, GET and UPDATE.
async fn minimal_pod(client: &kube::Client, all: &mut Vec<Figure>) -> Result<()> {
    let pods = Api::<Pod>::namespaced(client.clone(), "bench");
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web", "labels": {"run": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx"}]}
    }))?;
    let pod = pods.create(&PostParams::default(), &pod).await?;
    emit(
        Figure::info(
            "inproc.minimal_pod.size",
            serde_json::to_vec(&pod)?.len() as f64,
            "bytes",
        ),
        all,
    );
    get(client, "web", "inproc.minimal_pod.get", Target::None, all).await?;
    update(client, pod, "inproc.minimal_pod.update", Target::None, all).await?;
    Ok(())
}

/// GET of a small ConfigMap: the same path with little to decode, to separate the server's and
/// client's fixed costs from the pod's decoding.
async fn get_small(client: &kube::Client, all: &mut Vec<Figure>) -> Result<()> {
    let cms = &Api::<ConfigMap>::namespaced(client.clone(), "bench");
    cms.create(
        &PostParams::default(),
        &fixtures::config_map("bench", "small", 0, 16),
    )
    .await?;
    let run = run_for(LOOP / 2, u64::MAX, move |_| async move {
        cms.get("small").await?;
        Ok(())
    })
    .await?;
    emit(
        Figure::info("inproc.get_small_configmap", run.rate(), "req/s").cores(run.cores()),
        all,
    );
    Ok(())
}

async fn create(client: &kube::Client, all: &mut Vec<Figure>) -> Result<()> {
    let cms = &Api::<ConfigMap>::namespaced(client.clone(), "bench");
    let params = &PostParams::default();
    let run = run_for(LOOP, 200_000, move |i| {
        let cm = fixtures::config_map("bench", &format!("cm-{i}"), i % 10, 64);
        async move {
            cms.create(params, &cm).await?;
            Ok(())
        }
    })
    .await?;
    emit(
        Figure::info("inproc.create", run.rate(), "req/s").cores(run.cores()),
        all,
    );
    Ok(())
}

/// Sequential replaces of `pod`, each changing an annotation, reported as `figure`; returns
/// them as a probe.
async fn update(
    client: &kube::Client,
    pod: Pod,
    figure: &str,
    target: Target,
    all: &mut Vec<Figure>,
) -> Result<Probe> {
    let pods = Rc::new(Api::<Pod>::namespaced(client.clone(), "bench"));
    let name = pod.metadata.name.clone().unwrap_or_default();
    let current = Rc::new(RefCell::new(pod));
    let op = update_op(pods, &name, current.clone());
    let mut probe = measure(figure, "req/s", target, LOOP, op, all).await?;
    emit_allocations(figure, probe.allocations(ALLOC_SAMPLES).await?, all);
    // The stored pod must not grow with the number of updates.
    let final_size = serde_json::to_vec(&*current.borrow())?.len();
    emit(
        Figure::info(format!("{figure}_final_size"), final_size as f64, "bytes"),
        all,
    );
    Ok(probe)
}

/// One replace of the pod `name` through `pods`: `current` with the annotation `bench/counter`
/// set to the call's number; what the server answers becomes `current` (so that each replace
/// carries the resourceVersion the previous one returned).
fn update_op(
    pods: Rc<Api<Pod>>,
    name: &str,
    current: Rc<RefCell<Pod>>,
) -> impl FnMut(u64) -> LocalBoxFuture<'static, Result<()>> {
    let name: Rc<str> = name.into();
    move |i| {
        let mut next = current.borrow().clone();
        next.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert("bench/counter".into(), i.to_string());
        let (pods, name, current) = (pods.clone(), name.clone(), current.clone());
        async move {
            let stored = pods.replace(&name, &PostParams::default(), &next).await?;
            *current.borrow_mut() = stored;
            Ok(())
        }
        .boxed_local()
    }
}

/// GET, UPDATE (PUT), merge and strategic PATCH and CREATE of the realistic pod sent straight
/// to the router as prepared HTTP requests, without a client: what the server itself costs,
/// apart from the client's encoding and decoding. `ops` are some of [`SERVER_OPS`]; each writes
/// a pod of its own (so that measured again in the ratios, in turn with the others, each still
/// finds the pod its bodies were made against). Returns the operations as probes.
async fn server_only(
    server: &FakeApiServer,
    client: &kube::Client,
    ops: &[&str],
    all: &mut Vec<Figure>,
) -> Result<Vec<Probe>> {
    let router = &Rc::new(server.router());
    let json = "application/json";
    let merge = "application/merge-patch+json";
    let strategic = "application/strategic-merge-patch+json";
    let patch = |i: u64| serde_json::json!({"metadata": {"annotations": {"bench/counter": format!("p{i}")}}});
    let bodies = |f: &dyn Fn(u64) -> Result<Vec<u8>>| -> Result<Bodies> {
        let bodies = (0..2).map(|i| f(i).map(bytes::Bytes::from));
        Ok(Bodies::Fixed(bodies.collect::<Result<_>>()?))
    };
    let mut probes = Vec::new();
    for op in ops {
        // The op's own pod, named as long as the others.
        let name = format!("checkout-7d9f8b6c5d-{op:.5}");
        let uri = format!("/api/v1/namespaces/bench/pods/{name}");
        let pod = match *op {
            "create" => None,
            _ => Some(fixtures::install_pod(client, "bench", &name).await?),
        };
        let (method, target, content_type, bodies) = match (*op, pod) {
            ("get", Some(_)) => (
                http::Method::GET,
                uri,
                json,
                Bodies::Fixed(vec![Default::default()]),
            ),
            ("update", Some(pod)) => {
                let answer = counted_pod(router, &uri, pod).await?;
                (
                    http::Method::PUT,
                    uri,
                    json,
                    Bodies::Answered(RefCell::new(answer)),
                )
            }
            ("merge", Some(_)) => (
                http::Method::PATCH,
                uri,
                merge,
                bodies(&|i| Ok(serde_json::to_vec(&patch(i))?))?,
            ),
            ("strategic", Some(_)) => (
                http::Method::PATCH,
                uri,
                strategic,
                bodies(&|i| Ok(serde_json::to_vec(&patch(i))?))?,
            ),
            ("create_named", _) => {
                // A pod of its own name and `bench/index` label each time (a test creating its
                // objects): no two bodies are the same bytes.
                let mut created = fixtures::realistic_pod("bench", NUMBERED)?;
                if let Some(labels) = created.metadata.labels.as_mut() {
                    labels.insert("bench/index".into(), NUMBERED.into());
                }
                let target = "/api/v1/namespaces/bench/pods".to_string();
                let template = serde_json::to_vec(&created)?;
                (http::Method::POST, target, json, Bodies::Numbered(template))
            }
            ("create", _) => {
                // The pod as its owner sends it, with a generated name so that one body serves.
                let mut created = fixtures::realistic_pod("bench", "")?;
                created.metadata.name = None;
                created.metadata.generate_name = Some("bench-".into());
                let body = |_| Ok(serde_json::to_vec(&created)?);
                let target = "/api/v1/namespaces/bench/pods".to_string();
                (http::Method::POST, target, json, bodies(&body)?)
            }
            (other, _) => return Err(format!("no server-only operation {other}").into()),
        };
        let name = format!("inproc.server_only.{op}");
        let (router, target, bodies) = (router.clone(), Rc::<str>::from(target), Rc::new(bodies));
        let mut op = move |i: u64| {
            let (router, method, target) = (router.clone(), method.clone(), target.clone());
            let bodies = bodies.clone();
            async move {
                let answer = send(&router, method, &target, content_type, bodies.body(i)?).await?;
                bodies.answered(answer);
                Ok(())
            }
        };
        let run = run_for(LOOP / 2, u64::MAX, &mut op).await?;
        emit(
            Figure::info(name.clone(), run.rate(), "req/s").cores(run.cores()),
            all,
        );
        let counted = allocations_per(&name, ALLOC_SAMPLES, |i| op(run.count + i)).await?;
        emit_allocations(&name, counted, all);
        let calls = run.count + ALLOC_SAMPLES;
        probes.push(Probe::new(name, "req/s", calls, op));
    }
    Ok(probes)
}

/// The bodies a server-only operation sends.
enum Bodies {
    /// The same few bodies in turn (by call number).
    Fixed(Vec<bytes::Bytes>),
    /// This body with every [`NUMBERED`] in it replaced by the call's number (as many digits).
    Numbered(Vec<u8>),
    /// Each body made from the answer to the previous request, as a client writes back what it
    /// read with one change: the UPDATE of the pod (see [`flip_counter`]).
    Answered(RefCell<bytes::Bytes>),
}

impl Bodies {
    /// The body of call `i`.
    fn body(&self, i: u64) -> Result<bytes::Bytes> {
        match self {
            Bodies::Fixed(bodies) => Ok(bodies[i as usize % bodies.len()].clone()),
            Bodies::Numbered(template) => Ok(numbered(template, i).into()),
            Bodies::Answered(answer) => flip_counter(&answer.borrow()),
        }
    }

    /// Keeps what the server answered, if the next body is made from it.
    fn answered(&self, answer: bytes::Bytes) {
        match self {
            Bodies::Fixed(_) | Bodies::Numbered(_) => drop(std::hint::black_box(answer)),
            Bodies::Answered(last) => *last.borrow_mut() = answer,
        }
    }
}

/// The placeholder a [`Bodies::Numbered`] body carries where the call's number goes.
const NUMBERED: &str = "n00000000";

/// `template` with every [`NUMBERED`] replaced by `n` and `i` in as many digits (modulo 10^8).
fn numbered(template: &[u8], i: u64) -> Vec<u8> {
    let digits = format!("n{:08}", i % 100_000_000);
    let mut body = template.to_vec();
    let mut at = 0;
    while let Some(found) = body[at..]
        .windows(NUMBERED.len())
        .position(|w| w == NUMBERED.as_bytes())
    {
        let start = at + found;
        body[start..start + NUMBERED.len()].copy_from_slice(digits.as_bytes());
        at = start + NUMBERED.len();
    }
    body
}

/// `pod` with the annotation `bench/counter` set to `i`, without a resourceVersion (pods allow
/// an update without one).
fn with_counter(pod: &Pod, i: u64) -> Pod {
    let mut pod = pod.clone();
    pod.metadata.resource_version = None;
    pod.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert("bench/counter".into(), i.to_string());
    pod
}

/// The stored pod at `uri`, as the server answers it, once the annotation `bench/counter` was
/// written to it twice (so that the writer's managedFields entry holds it).
async fn counted_pod(router: &axum::Router, uri: &str, pod: Pod) -> Result<bytes::Bytes> {
    for i in 0..2 {
        let body = serde_json::to_vec(&with_counter(&pod, i))?;
        send(
            router,
            http::Method::PUT,
            uri,
            "application/json",
            body.into(),
        )
        .await?;
    }
    send(
        router,
        http::Method::GET,
        uri,
        "application/json",
        Default::default(),
    )
    .await
}

/// The next UPDATE of the pod: `answer` (the stored pod, as the server last answered it) with
/// the annotation `bench/counter` flipped between `0` and `1`, resourceVersion and
/// managedFields as they came, as a client writes back what it read. (Bodies made once, ahead,
/// would carry managedFields that go stale: each update stamps the writer's entry with the
/// time, so within a second the body's entry differs from the stored one and every write takes
/// the path of a client that rewrites managedFields, measured at half the rate.) Costs a copy
/// of the pod's bytes: ~0.09 µs measured, under 1% of the write.
fn flip_counter(answer: &[u8]) -> Result<bytes::Bytes> {
    const COUNTER: &[u8] = br#""bench/counter":""#;
    let at = memchr::memmem::find(answer, COUNTER).ok_or("no bench/counter annotation")?;
    let mut body = answer.to_vec();
    let digit = &mut body[at + COUNTER.len()];
    *digit = if *digit == b'0' { b'1' } else { b'0' };
    Ok(body.into())
}

/// Requests (or round trips) whose allocations are counted for a figure's `.allocs`.
const ALLOC_SAMPLES: u64 = 200;

/// Allocations and bytes per call of `op` over `n` calls on this thread (the runtime is a
/// current-thread one, so the server's work is counted too).
async fn allocations_per<F, Fut>(figure: &str, n: u64, mut op: F) -> Result<(f64, f64)>
where
    F: FnMut(u64) -> Fut,
    Fut: std::future::Future<Output = Result<()>>,
{
    let since = crate::alloc_count::Since::now();
    let region = Collect::start(figure);
    for i in 0..n {
        op(i).await?;
    }
    drop(region);
    Ok(since.per(n))
}

/// Emits `{name}.allocs` and `{name}.alloc_bytes` (per operation; information, no target).
fn emit_allocations(name: &str, (count, bytes): (f64, f64), all: &mut Vec<Figure>) {
    emit(
        Figure::info(format!("{name}.allocs"), count.round(), "allocs/op"),
        all,
    );
    emit(
        Figure::info(format!("{name}.alloc_bytes"), bytes.round(), "bytes/op"),
        all,
    );
}

/// Sends one prepared request straight to the router; its answer's body, or an error unless
/// it succeeded.
async fn send(
    router: &axum::Router,
    method: http::Method,
    target: &str,
    content_type: &str,
    body: bytes::Bytes,
) -> Result<bytes::Bytes> {
    use tower::ServiceExt;
    let request = http::Request::builder()
        .method(method.clone())
        .uri(target)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(axum::body::Body::from(body))?;
    let response = router.clone().oneshot(request).await?;
    if !response.status().is_success() {
        return Err(format!("{method} answered {}", response.status()).into());
    }
    Ok(axum::body::to_bytes(response.into_body(), usize::MAX).await?)
}

/// One `Api::watch` stream counts events while another task creates ConfigMaps.
async fn watch_delivery(client: &kube::Client, all: &mut Vec<Figure>) -> Result<()> {
    fixtures::create_namespace(client, "bench-watch").await?;
    let cms = Api::<ConfigMap>::namespaced(client.clone(), "bench-watch");
    let from = cms
        .list_metadata(&Default::default())
        .await?
        .metadata
        .resource_version
        .unwrap_or_default();
    let stream = cms.watch(&WatchParams::default(), &from).await?;
    let written = Arc::new(AtomicU64::new(0));
    let writer_done = Arc::new(tokio::sync::Notify::new());
    let writer = {
        let (cms, written, writer_done) = (cms.clone(), written.clone(), writer_done.clone());
        tokio::spawn(async move {
            let (cms, written, params) = (&cms, &written, &PostParams::default());
            let result = run_for(LOOP, WATCH_EVENTS, move |i| {
                let cm = fixtures::config_map("bench-watch", &format!("w-{i}"), i % 10, 64);
                async move {
                    cms.create(params, &cm).await?;
                    written.fetch_add(1, Ordering::Release);
                    Ok(())
                }
            })
            .await;
            writer_done.notify_one();
            result
        })
    };
    let watch = fixtures::Stopwatch::start();
    let start = Instant::now();
    let mut seen = 0u64;
    let mut stream = std::pin::pin!(stream);
    let deadline = start + LOOP * 3;
    let mut finished = std::pin::pin!(writer_done.notified());
    let mut writer_finished = false;
    loop {
        if writer_finished && seen >= written.load(Ordering::Acquire) {
            break;
        }
        tokio::select! {
            event = stream.next() => match event {
                Some(Ok(WatchEvent::Added(_))) => seen += 1,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                None => break,
            },
            _ = &mut finished, if !writer_finished => writer_finished = true,
            _ = tokio::time::sleep_until(deadline.into()) => break,
        }
    }
    let run = watch.run(seen);
    writer.await??;
    emit(
        Figure::info("inproc.watch_delivery", run.rate(), "events/s").cores(run.cores()),
        all,
    );
    let missing = written.load(Ordering::Acquire).saturating_sub(seen);
    emit(
        Figure::new(
            "inproc.watch_missing",
            missing as f64,
            "events",
            Target::Below(1.0),
        ),
        all,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_body_is_the_answer_with_the_counter_flipped() {
        let answer = br#"{"metadata":{"annotations":{"bench/counter":"1"},"resourceVersion":"7"}}"#;
        let body = flip_counter(answer).unwrap();
        let expected =
            br#"{"metadata":{"annotations":{"bench/counter":"0"},"resourceVersion":"7"}}"#;
        assert_eq!(&body[..], &expected[..]);
        assert_eq!(&flip_counter(&body).unwrap()[..], &answer[..]);
        assert!(flip_counter(br#"{"metadata":{}}"#).is_err());
    }

    #[test]
    fn the_ratios_are_issue_13s_seven() {
        let names: Vec<String> = ratio_targets().into_iter().map(|r| r.0).collect();
        assert_eq!(
            names,
            [
                "ratio.server_update_time_vs_roundtrip",
                "ratio.server_merge_time_vs_roundtrip",
                "ratio.server_strategic_time_vs_roundtrip",
                "ratio.server_create_time_vs_roundtrip",
                "ratio.update_vs_client_only.update",
                "ratio.get_vs_pod_decode_only",
                "ratio.get_vs_client_only.get",
            ]
        );
        let (_, numerator, denominator, _) = &ratio_targets()[4];
        assert_eq!(
            (numerator.as_str(), denominator.as_str()),
            ("inproc.update", "inproc.client_only.update")
        );
    }
}
