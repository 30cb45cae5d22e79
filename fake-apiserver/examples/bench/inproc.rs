//! Section 1: the in-process client (`server.client()`, no socket) on one core: GET, CREATE,
//! UPDATE of a realistic pod, and watch delivery to one `Api::watch` stream.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fake_apiserver::FakeApiServer;
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, PostParams, WatchEvent, WatchParams};

use crate::fixtures::{self, rate, run_for, Result};
use crate::report::{emit, ratio, Figure, Target};

/// How long each throughput loop runs.
const LOOP: Duration = Duration::from_secs(2);
/// The realistic pod's name.
const POD: &str = "checkout-7d9f8b6c5d-x2x9q";
/// The server-only operations, in the order they run.
const SERVER_OPS: [&str; 5] = ["get", "update", "merge", "strategic", "create"];
/// Events the watch-delivery writer produces (at most; it also stops after [`LOOP`]).
const WATCH_EVENTS: u64 = 20_000;

/// Runs section 1 on a current-thread runtime; `ops` limits it to some of `get`, `get_small`,
/// `create`, `update`, `ceiling`, `server` (or one of its operations: `server_get`,
/// `server_update`, `server_merge`, `server_strategic`, `server_create`), `minimal`, `watch`
/// (empty: all). Ends with the ratios of the figures it measured to their references.
pub fn run(all: &mut Vec<Figure>, ops: &[String]) -> Result<()> {
    let wanted = |op: &str| ops.is_empty() || ops.iter().any(|o| o == op);
    let server_ops: Vec<&str> = SERVER_OPS
        .iter()
        .copied()
        .filter(|op| wanted("server") || wanted(&format!("server_{op}")))
        .collect();
    fixtures::current_thread()?.block_on(async {
        let server = FakeApiServer::builder().seed(1).build();
        let client = server.client();
        fixtures::create_namespace(&client, "bench").await?;
        let pod = fixtures::install_pod(&client, "bench", POD).await?;
        let pod_bytes = serde_json::to_vec(&pod)?.len();
        emit(
            Figure::info("inproc.pod_size", pod_bytes as f64, "bytes"),
            all,
        );
        decode_ceiling(&pod, all)?;
        if wanted("get") {
            get(&client, POD, "inproc.get", Target::AtLeast(100_000.0), all).await?;
        }
        if wanted("get_small") {
            get_small(&client, all).await?;
        }
        if wanted("create") {
            create(&client, all).await?;
        }
        if wanted("update") {
            let target = Target::AtLeast(30_000.0);
            update(&client, pod.clone(), "inproc.update", target, all).await?;
        }
        if wanted("ceiling") {
            client_ceiling(&pod, all).await?;
        }
        if !server_ops.is_empty() {
            server_only(&server, pod, &server_ops, all).await?;
        }
        if wanted("minimal") {
            minimal_pod(&client, all).await?;
        }
        if wanted("watch") {
            watch_delivery(&client, all).await?;
        }
        ratios(all);
        Ok(())
    })
}

/// The targets of issue 13, each a ratio to a reference measured in this run (so that the
/// machine's speed cancels out); a ratio is printed only when both figures were measured.
///
/// - the server alone spends at most half the time on a write of the pod that the client
///   spends encoding and decoding it (`pod_value_roundtrip`): time ratio = roundtrip rate /
///   server rate;
/// - end to end, UPDATE reaches 0.6 of the client-only ceiling and GET 0.85 of the client's
///   decode ceiling.
fn ratios(all: &mut Vec<Figure>) {
    let find = |all: &[Figure], name: &str| all.iter().rev().find(|f| f.name == name).cloned();
    let mut lines = Vec::new();
    if let Some(roundtrip) = find(all, "inproc.pod_value_roundtrip") {
        for op in SERVER_OPS.iter().filter(|op| **op != "get") {
            if let Some(server) = find(all, &format!("inproc.server_only.{op}")) {
                lines.push(ratio(
                    &format!("ratio.server_{op}_time_vs_roundtrip"),
                    &server,
                    &roundtrip,
                    roundtrip.value / server.value.max(1e-9),
                    Target::AtMost(0.5),
                ));
            }
        }
    }
    let pairs = [
        ("inproc.update", "inproc.client_only.update", 0.6),
        ("inproc.get", "inproc.pod_decode_only", 0.85),
        ("inproc.get", "inproc.client_only.get", 0.85),
    ];
    for (figure, reference, target) in pairs {
        if let (Some(f), Some(r)) = (find(all, figure), find(all, reference)) {
            let name = format!(
                "ratio.{}_vs_{}",
                figure.trim_start_matches("inproc."),
                reference.trim_start_matches("inproc.")
            );
            lines.push(ratio(
                &name,
                &f,
                &r,
                f.value / r.value.max(1e-9),
                Target::AtLeast(target),
            ));
        }
    }
    for line in lines {
        emit(line, all);
    }
}

/// The same `kube::Client` calls as [`update`] and [`get`], against a stub service that answers
/// every request with the stored pod's bytes at once: the client's own cost (request building,
/// encoding, decoding), the ceiling of any in-process server.
async fn client_ceiling(pod: &Pod, all: &mut Vec<Figure>) -> Result<()> {
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
    let pods = &Api::<Pod>::namespaced(client, "bench");
    let params = &PostParams::default();
    let run = run_for(LOOP / 2, u64::MAX, move |_| async move {
        pods.get(POD).await?;
        Ok(())
    })
    .await?;
    emit(
        Figure::info("inproc.client_only.get", run.rate(), "req/s").cores(run.cores()),
        all,
    );
    let current = &std::cell::RefCell::new(pod.clone());
    let run = run_for(LOOP / 2, u64::MAX, move |i| {
        let mut next = current.borrow().clone();
        next.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert("bench/counter".into(), i.to_string());
        async move {
            let stored = pods.replace(POD, params, &next).await?;
            *current.borrow_mut() = stored;
            Ok(())
        }
    })
    .await?;
    emit(
        Figure::info("inproc.client_only.update", run.rate(), "req/s").cores(run.cores()),
        all,
    );
    Ok(())
}

/// How fast this machine decodes the pod into `k8s_openapi` types (what every client-side read
/// costs at least), and round-trips it through `serde_json::Value` (what a server write costs).
fn decode_ceiling(pod: &Pod, all: &mut Vec<Figure>) -> Result<()> {
    let bytes = serde_json::to_vec(pod)?;
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < Duration::from_millis(300) {
        let decoded: Pod = serde_json::from_slice(&bytes)?;
        std::hint::black_box(decoded);
        n += 1;
    }
    emit(
        Figure::info("inproc.pod_decode_only", rate(n, start.elapsed()), "obj/s"),
        all,
    );
    // What every write of the pod costs the server first: reading its body.
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < Duration::from_millis(300) {
        std::hint::black_box(fake_apiserver::store::json::from_slice(&bytes)?);
        n += 1;
    }
    emit(
        Figure::info("inproc.pod_parse", rate(n, start.elapsed()), "obj/s"),
        all,
    );
    let value: serde_json::Value = serde_json::from_slice(&bytes)?;
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < Duration::from_millis(300) {
        let typed: Pod = serde_json::from_value(value.clone())?;
        std::hint::black_box(serde_json::to_value(typed)?);
        n += 1;
    }
    emit(
        Figure::info(
            "inproc.pod_value_roundtrip",
            rate(n, start.elapsed()),
            "obj/s",
        ),
        all,
    );
    let since = crate::alloc_count::Since::now();
    for _ in 0..ALLOC_SAMPLES {
        let typed: Pod = serde_json::from_value(value.clone())?;
        std::hint::black_box(serde_json::to_value(typed)?);
    }
    emit_allocations("inproc.pod_value_roundtrip", since.per(ALLOC_SAMPLES), all);
    Ok(())
}

/// Sequential GETs of the pod `name`, reported as `figure`.
async fn get(
    client: &kube::Client,
    name: &str,
    figure: &str,
    target: Target,
    all: &mut Vec<Figure>,
) -> Result<()> {
    let pods = &Api::<Pod>::namespaced(client.clone(), "bench");
    run_for(Duration::from_millis(200), 2_000, move |_| async move {
        pods.get(name).await?;
        Ok(())
    })
    .await?;
    let run = run_for(LOOP, u64::MAX, move |_| async move {
        pods.get(name).await?;
        Ok(())
    })
    .await?;
    emit(
        Figure::new(figure, run.rate(), "req/s", target).cores(run.cores()),
        all,
    );
    Ok(())
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
    update(client, pod, "inproc.minimal_pod.update", Target::None, all).await
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

/// Sequential replaces of `pod`, each changing an annotation, reported as `figure`.
async fn update(
    client: &kube::Client,
    pod: Pod,
    figure: &str,
    target: Target,
    all: &mut Vec<Figure>,
) -> Result<()> {
    let pods = &Api::<Pod>::namespaced(client.clone(), "bench");
    let name = pod.metadata.name.clone().unwrap_or_default();
    let name = name.as_str();
    let params = &PostParams::default();
    // Each replace carries the resourceVersion the previous one returned.
    let current = &std::cell::RefCell::new(pod);
    let run = run_for(LOOP, u64::MAX, move |i| {
        let mut next = current.borrow().clone();
        next.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert("bench/counter".into(), i.to_string());
        async move {
            let stored = pods.replace(name, params, &next).await?;
            *current.borrow_mut() = stored;
            Ok(())
        }
    })
    .await?;
    emit(
        Figure::new(figure, run.rate(), "req/s", target).cores(run.cores()),
        all,
    );
    // The stored pod must not grow with the number of updates.
    let final_size = serde_json::to_vec(&*current.borrow())?.len();
    emit(
        Figure::info(format!("{figure}_final_size"), final_size as f64, "bytes"),
        all,
    );
    Ok(())
}

/// The pod's GET, UPDATE (PUT), merge and strategic PATCH and CREATE sent straight to the router
/// as prepared HTTP requests, without a client: what the server itself costs, apart from the
/// client's encoding and decoding. `ops` are some of [`SERVER_OPS`].
async fn server_only(
    server: &FakeApiServer,
    pod: Pod,
    ops: &[&str],
    all: &mut Vec<Figure>,
) -> Result<()> {
    let uri = &format!("/api/v1/namespaces/bench/pods/{POD}");
    let router = &server.router();
    // Two versions that differ in one annotation, written in turn (pods allow an update without
    // a resourceVersion), so every request is a real change. A client sends back the object as
    // it read it, managedFields included: the bodies carry what the server stored after the
    // annotation was first written (sending the install-time managedFields instead would make
    // every write rewrite the writer's entry, which no real client does).
    let counter_of = |pod: &Pod, i: u64| {
        let mut pod = pod.clone();
        pod.metadata.resource_version = None;
        pod.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert("bench/counter".into(), i.to_string());
        pod
    };
    let pod = if ops.contains(&"update") {
        for i in 0..2 {
            let body = serde_json::to_vec(&counter_of(&pod, i))?;
            send(
                router,
                http::Method::PUT,
                uri,
                "application/json",
                body.into(),
            )
            .await?;
        }
        let stored = send(
            router,
            http::Method::GET,
            uri,
            "application/json",
            Default::default(),
        )
        .await?;
        serde_json::from_slice(&stored)?
    } else {
        pod
    };
    let counter = |i: u64| counter_of(&pod, i);
    let json = "application/json";
    let merge = "application/merge-patch+json";
    let strategic = "application/strategic-merge-patch+json";
    let patch = |i: u64| serde_json::json!({"metadata": {"annotations": {"bench/counter": format!("p{i}")}}});
    // CREATE: the pod as its owner sends it, with a generated name so that one body serves.
    let mut created = fixtures::realistic_pod("bench", "")?;
    created.metadata.name = None;
    created.metadata.generate_name = Some("bench-".into());
    let bodies = |f: &dyn Fn(u64) -> Result<Vec<u8>>| -> Result<Vec<bytes::Bytes>> {
        (0..2).map(|i| f(i).map(bytes::Bytes::from)).collect()
    };
    for op in ops {
        let (method, target, content_type, bodies) = match *op {
            "get" => (
                http::Method::GET,
                uri.clone(),
                json,
                vec![bytes::Bytes::new()],
            ),
            "update" => (
                http::Method::PUT,
                uri.clone(),
                json,
                bodies(&|i| Ok(serde_json::to_vec(&counter(i))?))?,
            ),
            "merge" => (
                http::Method::PATCH,
                uri.clone(),
                merge,
                bodies(&|i| Ok(serde_json::to_vec(&patch(i))?))?,
            ),
            "strategic" => (
                http::Method::PATCH,
                uri.clone(),
                strategic,
                bodies(&|i| Ok(serde_json::to_vec(&patch(i))?))?,
            ),
            "create" => (
                http::Method::POST,
                "/api/v1/namespaces/bench/pods".to_string(),
                json,
                bodies(&|_| Ok(serde_json::to_vec(&created)?))?,
            ),
            other => return Err(format!("no server-only operation {other}").into()),
        };
        let (method, target, bodies) = (&method, &target, &bodies);
        let run = run_for(LOOP / 2, u64::MAX, move |i| async move {
            let body = bodies[i as usize % bodies.len()].clone();
            let answer = send(router, method.clone(), target, content_type, body).await?;
            std::hint::black_box(answer);
            Ok(())
        })
        .await?;
        emit(
            Figure::info(format!("inproc.server_only.{op}"), run.rate(), "req/s")
                .cores(run.cores()),
            all,
        );
        let counted = allocations_per(ALLOC_SAMPLES, |i| async move {
            let body = bodies[i as usize % bodies.len()].clone();
            std::hint::black_box(send(router, method.clone(), target, content_type, body).await?);
            Ok(())
        })
        .await?;
        emit_allocations(&format!("inproc.server_only.{op}"), counted, all);
    }
    Ok(())
}

/// Requests (or round trips) whose allocations are counted for a figure's `.allocs`.
const ALLOC_SAMPLES: u64 = 200;

/// Allocations and bytes per call of `op` over `n` calls on this thread (the runtime is a
/// current-thread one, so the server's work is counted too).
async fn allocations_per<F, Fut>(n: u64, mut op: F) -> Result<(f64, f64)>
where
    F: FnMut(u64) -> Fut,
    Fut: std::future::Future<Output = Result<()>>,
{
    let since = crate::alloc_count::Since::now();
    for i in 0..n {
        op(i).await?;
    }
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
