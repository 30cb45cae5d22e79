//! The controller process of the scale bench: the production wiring of one controller (Eno or
//! Karpenter) with its kubelet stand-in, talking to the fake API server over loopback as a
//! deployment would. It runs until its stdin closes and answers two commands on stdin:
//! `report` (prints one JSON line: peak and current RSS, CPU time, reconcile latencies per
//! controller, kwok instances left) and `reset` (forgets the latencies recorded so far).
//!
//! Reconcile latency is each reconcile span's lifetime (Eno's `reconcile` spans, by their
//! `controller` field; Karpenter's `nodeclaim.lifecycle` and `nodeclaim.termination`): the
//! controllers export no reconcile-duration metric.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{filter, Layer};

use controllers::clock::{SharedClock, SystemClock};
use controllers::eno::executor::{ExecutorError, SynthesizerRunner};
use controllers::eno::kubelet_standin::{executor_runner_with, KubeletStandIn};
use controllers::eno::wiring::EnoControllers;
use controllers::ids::{RandomIds, SharedIds};
use controllers::karpenter::cloudprovider::kwok::KwokCloudProvider;
use controllers::karpenter::kubelet::{self, KubeletContext};
use controllers::karpenter::wiring::{self, WiringOptions};
use controllers::operator::http::Readiness;
use controllers::operator::shutdown;

use crate::heap;

/// Reconcile durations per controller since the last `reset`.
static SAMPLES: LazyLock<Mutex<BTreeMap<String, Vec<Duration>>>> = LazyLock::new(Mutex::default);

/// Times reconcile spans.
struct ReconcileTiming;

struct Started {
    controller: String,
    at: Instant,
}

#[derive(Default)]
struct ControllerField(Option<String>);

impl Visit for ControllerField {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "controller" {
            self.0 = Some(value.to_string());
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "controller" {
            self.0 = Some(format!("{value:?}").trim_matches('"').to_string());
        }
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for ReconcileTiming {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: LayerContext<'_, S>) {
        let name = attrs.metadata().name();
        let controller = match name {
            "reconcile" => {
                let mut field = ControllerField::default();
                attrs.record(&mut field);
                match field.0 {
                    Some(c) => format!("eno {c}"),
                    None => return,
                }
            }
            "nodeclaim.lifecycle" | "nodeclaim.termination" => format!("karpenter {name}"),
            _ => return,
        };
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Started {
                controller,
                at: Instant::now(),
            });
        }
    }

    fn on_close(&self, id: Id, ctx: LayerContext<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let extensions = span.extensions();
        let Some(started) = extensions.get::<Started>() else {
            return;
        };
        SAMPLES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(started.controller.clone())
            .or_default()
            .push(started.at.elapsed());
    }
}

/// `/proc/self/status` field in KiB (0 where there is no procfs).
pub fn proc_status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// CPU time (user + system) of this process so far, in seconds.
pub fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command (which may hold spaces) start after the last ')'.
    let Some(after) = stat.rsplit_once(')').map(|(_, a)| a) else {
        return 0.0;
    };
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 11 and 12 after the command.
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|i| fields.get(*i).and_then(|v| v.parse::<f64>().ok()))
        .sum();
    ticks / 100.0
}

fn quantile(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[index.min(sorted.len() - 1)].as_secs_f64() * 1000.0
}

/// Where the Karpenter process's heap goes: the deep size of each cache (measured as the heap a
/// deep copy allocates on this thread) and how much of it is `metadata.managedFields`.
fn karpenter_memory(
    ctx: &controllers::karpenter::context::Context,
    provider: &KwokCloudProvider,
) -> Value {
    let nodeclaims = ctx.nodeclaims.state();
    let nodes = ctx.nodes.state();
    let (_, nodeclaim_bytes) =
        heap::held_by(|| nodeclaims.iter().map(|o| (**o).clone()).collect::<Vec<_>>());
    let (_, nodeclaim_managed) = heap::held_by(|| {
        nodeclaims
            .iter()
            .map(|o| o.metadata.managed_fields.clone())
            .collect::<Vec<_>>()
    });
    let (_, node_bytes) = heap::held_by(|| nodes.iter().map(|o| (**o).clone()).collect::<Vec<_>>());
    let (_, node_managed) = heap::held_by(|| {
        nodes
            .iter()
            .map(|o| o.metadata.managed_fields.clone())
            .collect::<Vec<_>>()
    });
    let (_, node_status) =
        heap::held_by(|| nodes.iter().map(|o| o.status.clone()).collect::<Vec<_>>());
    let (instances, instance_bytes) = heap::held_by(|| provider.instances().list());
    json!({
        "nodeclaims": nodeclaims.len(),
        "nodeclaim_bytes": nodeclaim_bytes,
        "nodeclaim_managed_fields_bytes": nodeclaim_managed,
        "nodes": nodes.len(),
        "node_bytes": node_bytes,
        "node_managed_fields_bytes": node_managed,
        "node_status_bytes": node_status,
        "instances": instances.len(),
        "instance_bytes": instance_bytes,
        "launch_cache": ctx.launch_cache.len(),
    })
}

fn report(instances: Option<usize>, memory: Value) -> Value {
    let samples = SAMPLES.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let reconciles: BTreeMap<String, Value> = samples
        .into_iter()
        .map(|(controller, mut times)| {
            times.sort();
            let total: Duration = times.iter().sum();
            (
                controller,
                json!({
                    "count": times.len(),
                    "p50_ms": quantile(&times, 0.5),
                    "p99_ms": quantile(&times, 0.99),
                    "max_ms": quantile(&times, 1.0),
                    "total_s": total.as_secs_f64(),
                }),
            )
        })
        .collect();
    json!({
        "vm_hwm_kib": proc_status_kib("VmHWM:"),
        "heap_live": heap::live(),
        "heap_peak": heap::peak(),
        "memory": memory,
        "vm_rss_kib": proc_status_kib("VmRSS:"),
        "open_fds": std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count()),
        "threads": proc_status_kib("Threads:"),
        "cpu_s": cpu_seconds(),
        "reconciles": reconciles,
        "instances": instances,
    })
}

/// An in-process synthesizer (no process is spawned): one ConfigMap named after the
/// composition, in its namespace. The executor around it — reading the composition, writing
/// the ResourceSlice, recording the result — is production code.
fn in_process_synthesizer() -> SynthesizerRunner {
    Arc::new(|syn, _input, _timeout, env| {
        async move {
            let get = |suffix: &str| {
                env.iter()
                    .find(|(k, _)| k.ends_with(suffix))
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            Ok::<_, ExecutorError>(vec![json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": get("COMPOSITION_NAME"), "namespace": get("COMPOSITION_NAMESPACE")},
                "data": {"synthesizerGeneration": syn.metadata.generation.unwrap_or(0).to_string()}
            })])
        }
        .boxed()
    })
}

/// Run the controller process: `which` is `eno` or `karpenter`.
pub fn run(
    which: &str,
    url: &str,
    eno_concurrency: Option<u16>,
    karpenter_untrimmed: bool,
) -> anyhow::Result<()> {
    tracing_subscriber::registry()
        .with(ReconcileTiming.with_filter(filter::filter_fn(|m| m.is_span())))
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(filter::LevelFilter::WARN),
        )
        .init();
    // As the `controllers` binary: tokio's default multi-threaded runtime.
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        // The production client (operator::client), as the controllers binary builds it;
        // `SCALE_KUBE_POOL=unbounded`: kube's own, which keeps every idle connection.
        let config = kube::Config::new(url.parse()?);
        let client = if std::env::var("SCALE_KUBE_POOL").as_deref() == Ok("unbounded") {
            kube::Client::try_from(config)?
        } else {
            controllers::operator::client::client_from_config(config)?
        };
        let clock: SharedClock = Arc::new(SystemClock);
        let ids: SharedIds = Arc::new(RandomIds);
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let stop = shutdown::on(async move {
            let _ = stop_rx.await;
        });
        let mut provider: Option<Arc<KwokCloudProvider>> = None;
        let mut tasks = Vec::new();
        let mut karpenter = None;
        match which {
            "eno" => {
                let mut config = controllers::eno::Config::new("eno-system", "controllers:scale");
                if let Some(c) = eno_concurrency {
                    config.max_concurrent_reconciles = c;
                }
                let controllers = EnoControllers {
                    client: client.clone(),
                    config,
                    clock: clock.clone(),
                    ids: ids.clone(),
                    metrics: Default::default(),
                };
                let mut standin = KubeletStandIn::new(
                    client.clone(),
                    "eno-system",
                    executor_runner_with(client.clone(), clock.clone(), in_process_synthesizer()),
                    clock.clone(),
                );
                standin.termination_delay = Duration::from_millis(200);
                tasks.push(tokio::spawn(
                    controllers.run(stop.clone(), Readiness::new()),
                ));
                tasks.push(tokio::spawn(standin.run(stop.clone())));
            }
            "karpenter" => {
                let kwok = Arc::new(KwokCloudProvider::new(client.clone(), ids.clone()));
                provider = Some(kwok.clone());
                let (stores, writers) = wiring::new_stores();
                let ctx = Arc::new(controllers::karpenter::context::Context::new(
                    client.clone(),
                    stores,
                    kwok,
                    clock.clone(),
                    ids.clone(),
                    controllers::karpenter::metrics::Metrics::new(),
                    controllers::karpenter::context::Config::default(),
                ));
                karpenter = Some(wiring::spawn(
                    ctx,
                    writers,
                    WiringOptions {
                        trim_caches: !karpenter_untrimmed,
                        ..WiringOptions::default()
                    },
                    stop.clone(),
                ));
                // As `controllers karpenter --kubelet-stand-in`: a 10s heartbeat
                // (`SCALE_KUBELET_HEARTBEAT_SECS`: another; kwok's own is 600 s).
                let heartbeat = std::env::var("SCALE_KUBELET_HEARTBEAT_SECS")
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(10);
                let mut kctx = KubeletContext::new(
                    client.clone(),
                    clock.clone(),
                    Duration::from_secs(heartbeat),
                );
                kctx.trim_cache = !karpenter_untrimmed;
                let kctx = Arc::new(kctx);
                tasks.push(tokio::spawn(kubelet::run(
                    kctx,
                    Default::default(),
                    stop.clone(),
                )));
            }
            other => anyhow::bail!("unknown controller {other:?}"),
        }

        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        let mut stdout = tokio::io::stdout();
        while let Some(line) = lines.next_line().await? {
            match line.trim() {
                "report" => {
                    let instances = provider.as_ref().map(|p| p.instances().len());
                    let memory = match (&karpenter, &provider) {
                        (Some(running), Some(p)) => karpenter_memory(&running.context, p),
                        _ => Value::Null,
                    };
                    let mut text = report(instances, memory).to_string();
                    text.push('\n');
                    stdout.write_all(text.as_bytes()).await?;
                    stdout.flush().await?;
                }
                "reset" => SAMPLES.lock().unwrap_or_else(|e| e.into_inner()).clear(),
                _ => {}
            }
        }
        let _ = stop_tx.send(());
        if let Some(running) = karpenter {
            let _ = tokio::time::timeout(Duration::from_secs(5), running.shutdown()).await;
        }
        for task in tasks {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
        Ok(())
    })
}
