//! `make bench-scale`: both controllers at scale, against the fake API server over loopback.
//!
//! For each size, a fresh fake API server (in this process, served on 127.0.0.1 with every
//! request counted per verb and resource) and a fresh controller process (this program with
//! `--child`, the production wiring and the kubelet stand-in), so that the controllers' RSS and
//! CPU are their own. The objects are created in-process before the controllers start; the
//! clock runs from the controller process's start.
//!
//! - Eno: N Compositions across 100 namespaces, 20 Synthesizers; time until all are
//!   synthesized, then a change of every Synthesizer rolls out to all of them (the Synthesizers'
//!   `rolloutCooldown` set by `--rollout-cooldown-ms`). The synthesizer runs in process (no
//!   process is spawned per pod); the executor around it is production code.
//! - Karpenter: N NodeClaims with the kwok provider; time until all are Ready, then all are
//!   deleted: time until every NodeClaim, Node and instance is gone.
//!
//! Prints figures (time, requests per object, reconcile latency, peak RSS, where the time went),
//! PASS/MISS against the targets, and per figure the ratios to the smallest size. It reports;
//! it does not assert (exit 0 whatever the figures).
//!
//! `SCALE_SIZES=1000,3000` (or `--sizes`) picks the sizes of both; `--only eno|karpenter`.
//! `SCALE_CHILD_WRAPPER=heaptrack` runs the controller process under a profiler (heaptrack
//! writes its profile to the working directory; `heaptrack_print` reads it).
//! `SCALE_KUBE_POOL=unbounded` gives the controller process kube's own client (every idle
//! connection kept) instead of the production one (`operator::client`: 25 idle per host).

#[path = "scale/child.rs"]
mod child;
#[path = "scale/counting.rs"]
mod counting;
#[path = "scale/heap.rs"]
mod heap;
#[path = "scale/progress.rs"]
mod progress;

/// Both processes (the bench with the server, and the controller process) count their heap.
#[global_allocator]
static ALLOC: heap::Counting = heap::Counting;

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use clap::Parser;
use futures::{stream, StreamExt};
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, DeleteParams, PostParams};
use kube::Resource;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use controllers::eno::demo::{demo_composition, demo_synthesizer, ensure_namespace, install_crds};
use controllers::eno::types::{Composition, GoDuration, Synthesizer};
use controllers::karpenter::demo::{demo_nodeclaim, install_crd};
use controllers::karpenter::types::NodeClaim;
use counting::{Counts, Tally};
use fake_apiserver::FakeApiServer;

const NAMESPACES: usize = 100;
const SYNTHESIZERS: usize = 20;
const ENO_TARGET_SIZE: usize = 10_000;
const KARPENTER_TARGET_SIZE: usize = 5_000;
const TARGET_SECS: f64 = 60.0;
const RSS_TARGET_MIB: f64 = 300.0;

#[derive(Debug, Parser)]
#[command(about = "Both controllers at scale against the fake API server")]
struct Args {
    /// Sizes for both (Compositions and NodeClaims), e.g. 1000,3000; overrides the defaults
    /// (Eno 1000,3000,10000; Karpenter 1000,3000,5000). Also read from SCALE_SIZES.
    #[arg(long, env = "SCALE_SIZES", value_delimiter = ',')]
    sizes: Vec<usize>,
    /// Eno sizes (default 1000,3000,10000).
    #[arg(long, value_delimiter = ',')]
    eno_sizes: Vec<usize>,
    /// Karpenter sizes (default 1000,3000,5000).
    #[arg(long, value_delimiter = ',')]
    karpenter_sizes: Vec<usize>,
    /// Run only this controller's bench (eno or karpenter).
    #[arg(long)]
    only: Option<String>,
    /// The Synthesizers' rolloutCooldown during the bench (upstream default 30s).
    #[arg(long, default_value_t = 10)]
    rollout_cooldown_ms: u64,
    /// The Eno controllers' reconciles at once (`Config::max_concurrent_reconciles`; default:
    /// the production default, 1 as controller-runtime's and upstream's; 0 = any number).
    #[arg(long)]
    eno_concurrency: Option<u16>,
    /// Karpenter: keep whole objects in the caches (no trimming; to measure what it saves).
    #[arg(long)]
    karpenter_untrimmed: bool,
    /// Give up on a phase after this long.
    #[arg(long, default_value_t = 600)]
    timeout_secs: u64,
    /// Internal: run as the controller process (eno or karpenter) against this URL.
    #[arg(long, hide = true)]
    child: Option<String>,
    /// Internal: the API server URL for `--child`.
    #[arg(long, hide = true)]
    url: Option<String>,
}

/// One phase at one size.
#[derive(Debug, Clone)]
struct Phase {
    name: &'static str,
    size: usize,
    secs: f64,
    requests: u64,
    done: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(which) = &args.child {
        return child::run(
            which,
            args.url.as_deref().unwrap_or_default(),
            args.eno_concurrency,
            args.karpenter_untrimmed,
        );
    }
    let pick = |own: &[usize], default: &[usize]| -> Vec<usize> {
        if !own.is_empty() {
            own.to_vec()
        } else if !args.sizes.is_empty() {
            args.sizes.clone()
        } else {
            default.to_vec()
        }
    };
    let eno_sizes = pick(&args.eno_sizes, &[1000, 3000, 10_000]);
    let karpenter_sizes = pick(&args.karpenter_sizes, &[1000, 3000, 5000]);
    let runtime = tokio::runtime::Runtime::new()?;
    let started = Instant::now();
    println!(
        "# scale bench: {} cores, release: {}; controller process separate from the server \
         (RSS and CPU of the controller process: controllers + kubelet stand-in + in-process \
         synthesizer)",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        !cfg!(debug_assertions)
    );
    let mut phases: Vec<Phase> = Vec::new();
    let mut rss: Vec<(String, f64)> = Vec::new();
    if args.only.as_deref() != Some("karpenter") {
        for &size in &eno_sizes {
            match runtime.block_on(eno(&args, size)) {
                Ok((mut p, r)) => {
                    phases.append(&mut p);
                    rss.push((format!("eno {size}"), r));
                }
                Err(e) => println!("# eno {size}: failed: {e:#}"),
            }
        }
    }
    if args.only.as_deref() != Some("eno") {
        for &size in &karpenter_sizes {
            match runtime.block_on(karpenter(&args, size)) {
                Ok((mut p, r)) => {
                    phases.append(&mut p);
                    rss.push((format!("karpenter {size}"), r));
                }
                Err(e) => println!("# karpenter {size}: failed: {e:#}"),
            }
        }
    }
    summary(&phases, &rss);
    println!("# done in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The controller process.
struct Controllers {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    log: std::path::PathBuf,
}

impl Controllers {
    fn start(
        which: &str,
        url: &str,
        size: usize,
        concurrency: Option<u16>,
        untrimmed: bool,
    ) -> anyhow::Result<Self> {
        let log = std::env::temp_dir().join(format!("scale-{which}-{size}.log"));
        // `SCALE_CHILD_WRAPPER=heaptrack` (or any command taking the program and its
        // arguments) runs the controller process under a profiler.
        let exe = std::env::current_exe()?;
        let mut command = match std::env::var_os("SCALE_CHILD_WRAPPER") {
            Some(wrapper) => {
                let mut c = tokio::process::Command::new(wrapper);
                c.arg(&exe);
                c
            }
            None => tokio::process::Command::new(&exe),
        };
        let mut child = command
            .args(["--child", which, "--url", url])
            .args(concurrency.map(|c| format!("--eno-concurrency={c}")))
            .args(untrimmed.then_some("--karpenter-untrimmed"))
            .env_remove("SCALE_SIZES")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log)?)
            .kill_on_drop(true)
            .spawn()?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| anyhow::anyhow!("no stdin"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| anyhow::anyhow!("no stdout"))?;
        Ok(Self {
            child,
            stdin,
            stdout: BufReader::new(stdout).lines(),
            log,
        })
    }

    async fn command(&mut self, command: &str) -> anyhow::Result<()> {
        self.stdin
            .write_all(format!("{command}\n").as_bytes())
            .await?;
        self.stdin.flush().await?;
        Ok(())
    }

    async fn report(&mut self) -> anyhow::Result<Value> {
        self.command("report").await?;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(30), self.stdout.next_line())
                .await??
                .ok_or_else(|| anyhow::anyhow!("controller process ended"))?;
            // A wrapper (heaptrack) may print its own lines.
            if line.starts_with('{') {
                return Ok(serde_json::from_str(&line)?);
            }
        }
    }

    async fn stop(mut self) {
        drop(self.stdin);
        if tokio::time::timeout(Duration::from_secs(15), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// CPU seconds of this (the server's) process.
fn server_cpu() -> f64 {
    child::cpu_seconds()
}

/// Wait until `check` (counting done objects) reaches `total`; false on timeout.
async fn wait_until(
    label: &str,
    total: usize,
    timeout: Duration,
    mut check: impl FnMut() -> usize,
) -> bool {
    let started = Instant::now();
    let mut last_print = Instant::now();
    loop {
        let done = check();
        if done >= total {
            return true;
        }
        if started.elapsed() > timeout {
            println!("# {label}: timed out with {done}/{total} after {timeout:?}");
            return false;
        }
        if last_print.elapsed() > Duration::from_secs(15) {
            eprintln!(
                "# {label}: {done}/{total} at {:.0} s",
                started.elapsed().as_secs_f64()
            );
            last_print = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Checks the event-fed count against the store once at the end of a phase (every Composition
/// read): says so and returns false if fewer than `total` are synthesized by `generation`.
fn confirmed(label: &str, total: usize, compositions: Vec<Value>, generation: i64) -> bool {
    let synthesized = compositions
        .iter()
        .filter(|c| synthesized_for(c, generation))
        .count();
    if synthesized < total {
        println!(
            "# {label}: the store shows {synthesized}/{total} synthesized (the count said all)"
        );
    }
    synthesized >= total
}

fn synthesized_for(comp: &Value, synthesizer_generation: i64) -> bool {
    let current = &comp["status"]["currentSynthesis"];
    !current["synthesized"].is_null()
        && current["observedSynthesizerGeneration"]
            .as_i64()
            .unwrap_or(0)
            >= synthesizer_generation
}

async fn eno(args: &Args, size: usize) -> anyhow::Result<(Vec<Phase>, f64)> {
    println!(
        "\n## eno: {size} Compositions, {NAMESPACES} namespaces, {SYNTHESIZERS} Synthesizers, \
         max concurrent reconciles {} (0: any number)",
        args.eno_concurrency.map_or_else(
            || controllers::eno::Config::new("", "")
                .max_concurrent_reconciles
                .to_string(),
            |c| c.to_string()
        )
    );
    let server = FakeApiServer::new();
    // Progress from the server's writes, each parsed once (see `progress`).
    let syntheses = progress::Syntheses::follow(&server);
    let client = server.client();
    install_crds(&client).await?;
    ensure_namespace(&client, "eno-system").await?;
    for ns in 0..NAMESPACES {
        ensure_namespace(&client, &format!("ns-{ns:02}")).await?;
    }
    let synthesizers: Api<Synthesizer> = Api::all(client.clone());
    for s in 0..SYNTHESIZERS {
        let mut syn = demo_synthesizer(&format!("syn-{s:02}"));
        syn.spec.rollout_cooldown = Some(GoDuration::from_millis(args.rollout_cooldown_ms));
        synthesizers.create(&PostParams::default(), &syn).await?;
    }
    let creates = stream::iter(0..size).map(|i| {
        let client = client.clone();
        async move {
            let ns = format!("ns-{:02}", i % NAMESPACES);
            let comp = demo_composition(
                &format!("comp-{i:05}"),
                &ns,
                &format!("syn-{:02}", i % SYNTHESIZERS),
            );
            Api::<Composition>::namespaced(client, &ns)
                .create(&PostParams::default(), &comp)
                .await
        }
    });
    let failed = creates
        .buffer_unordered(32)
        .filter(|r| futures::future::ready(r.is_err()))
        .count()
        .await;
    anyhow::ensure!(failed == 0, "{failed} compositions not created");

    let counts = Counts::default();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let url = counting::serve(&server, counts.clone(), async move {
        let _ = stop_rx.await;
    })
    .await?;
    let timeout = Duration::from_secs(args.timeout_secs);
    let compositions = |server: &FakeApiServer| {
        server
            .list_objects(&Composition::api_version(&()), "compositions", None)
            .1
    };

    // Phase 1: from the controller process's start until every composition is synthesized.
    let cpu0 = server_cpu();
    let t0 = Instant::now();
    let mut controllers = Controllers::start("eno", &url, size, args.eno_concurrency, false)?;
    let done = wait_until("eno synthesis", size, timeout, || {
        syntheses.synthesized_for(1)
    })
    .await;
    let secs = t0.elapsed().as_secs_f64();
    let done = done && confirmed("eno synthesis", size, compositions(&server), 1);
    let server_cpu1 = server_cpu() - cpu0;
    let counts1 = counts.snapshot();
    let report1 = controllers.report().await?;
    controllers.command("reset").await?;
    let mut phases = vec![Phase {
        name: "eno synthesis",
        size,
        secs,
        requests: total(&counts1),
        done,
    }];
    print_phase(
        &phases[0],
        &counts1,
        &report1,
        server_cpu1,
        report1["cpu_s"].as_f64().unwrap_or(0.0),
    );
    target_line(
        "eno synthesis",
        size,
        ENO_TARGET_SIZE,
        secs,
        done,
        &format!("{ENO_TARGET_SIZE} Compositions synthesized"),
    );

    // Phase 2: every Synthesizer changes; the change rolls out to every composition.
    let cpu0 = server_cpu();
    let ctrl_cpu0 = report1["cpu_s"].as_f64().unwrap_or(0.0);
    let t0 = Instant::now();
    let mut new_generation = 0;
    for s in 0..SYNTHESIZERS {
        let name = format!("syn-{s:02}");
        let mut syn = synthesizers.get(&name).await?;
        syn.spec.command.push("# v2".into());
        let updated = synthesizers
            .replace(&name, &PostParams::default(), &syn)
            .await?;
        new_generation = updated.metadata.generation.unwrap_or(0);
    }
    let done = wait_until("eno rollout", size, timeout, || {
        syntheses.synthesized_for(new_generation)
    })
    .await;
    let secs = t0.elapsed().as_secs_f64();
    let done = done && confirmed("eno rollout", size, compositions(&server), new_generation);
    let server_cpu2 = server_cpu() - cpu0;
    let counts2 = counting::diff(&counts.snapshot(), &counts1);
    let report2 = controllers.report().await?;
    let rollout = Phase {
        name: "eno rollout",
        size,
        secs,
        requests: total(&counts2),
        done,
    };
    println!(
        "# rollout: every Synthesizer changed at once; rolloutCooldown {} ms (one composition \
         per cooldown per Synthesizer, {} per Synthesizer)",
        args.rollout_cooldown_ms,
        size.div_ceil(SYNTHESIZERS)
    );
    print_phase(
        &rollout,
        &counts2,
        &report2,
        server_cpu2,
        report2["cpu_s"].as_f64().unwrap_or(0.0) - ctrl_cpu0,
    );
    phases.push(rollout);
    let rss_mib = rss_line("eno", size, &report2);
    println!("# controller log (warnings): {}", controllers.log.display());
    controllers.stop().await;
    let _ = stop_tx.send(());
    Ok((phases, rss_mib))
}

async fn karpenter(args: &Args, size: usize) -> anyhow::Result<(Vec<Phase>, f64)> {
    println!(
        "\n## karpenter: {size} NodeClaims, kwok provider, kubelet stand-in; caches {}",
        if args.karpenter_untrimmed {
            "untrimmed (--karpenter-untrimmed)"
        } else {
            "trimmed"
        }
    );
    let server = FakeApiServer::new();
    let client = server.client();
    let timeout = Duration::from_secs(args.timeout_secs);
    install_crd(&client, timeout).await?;
    let api: Api<NodeClaim> = Api::all(client.clone());
    let creates = stream::iter(0..size).map(|_| {
        let api = api.clone();
        async move {
            api.create(&PostParams::default(), &demo_nodeclaim("default"))
                .await
        }
    });
    let names: Vec<String> = creates
        .buffer_unordered(32)
        .filter_map(|r| futures::future::ready(r.ok().and_then(|nc| nc.metadata.name)))
        .collect()
        .await;
    anyhow::ensure!(
        names.len() == size,
        "{} nodeclaims not created",
        size - names.len()
    );

    let counts = Counts::default();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let url = counting::serve(&server, counts.clone(), async move {
        let _ = stop_rx.await;
    })
    .await?;
    let nodeclaims = |server: &FakeApiServer| {
        server
            .list_objects(&NodeClaim::api_version(&()), "nodeclaims", None)
            .1
    };
    let ready = |nc: &Value| {
        nc["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
    };

    let cpu0 = server_cpu();
    let t0 = Instant::now();
    let mut controllers =
        Controllers::start("karpenter", &url, size, None, args.karpenter_untrimmed)?;
    let done = wait_until("karpenter ready", size, timeout, || {
        nodeclaims(&server).iter().filter(|nc| ready(nc)).count()
    })
    .await;
    let secs = t0.elapsed().as_secs_f64();
    if !done {
        if let Some(nc) = nodeclaims(&server).iter().find(|nc| !ready(nc)) {
            println!("# a NodeClaim not Ready: {}", nc["status"]);
        }
    }
    let server_cpu1 = server_cpu() - cpu0;
    let counts1 = counts.snapshot();
    let report1 = controllers.report().await?;
    controllers.command("reset").await?;
    let launch = Phase {
        name: "karpenter ready",
        size,
        secs,
        requests: total(&counts1),
        done,
    };
    print_phase(
        &launch,
        &counts1,
        &report1,
        server_cpu1,
        report1["cpu_s"].as_f64().unwrap_or(0.0),
    );
    memory_lines("karpenter ready", size, &report1);
    target_line(
        "karpenter ready",
        size,
        KARPENTER_TARGET_SIZE,
        secs,
        done,
        &format!("{KARPENTER_TARGET_SIZE} NodeClaims Ready"),
    );

    // Delete every NodeClaim; wait until no NodeClaim, kwok Node or instance is left.
    let ctrl_cpu0 = report1["cpu_s"].as_f64().unwrap_or(0.0);
    let cpu0 = server_cpu();
    let t0 = Instant::now();
    let deletes = stream::iter(names.iter()).map(|name| {
        let api = api.clone();
        async move { api.delete(name, &DeleteParams::default()).await }
    });
    deletes.buffer_unordered(32).for_each(|_| async {}).await;
    let kwok_nodes = |server: &FakeApiServer| {
        server
            .list_objects("v1", "nodes", None)
            .1
            .into_iter()
            .filter_map(|n| serde_json::from_value::<Node>(n).ok())
            .filter(controllers::karpenter::kubelet::is_kwok_node)
            .count()
    };
    let done = wait_until("karpenter deletion", size, timeout, || {
        // Gone objects, counting a NodeClaim and its Node as one (done only once nothing is left).
        let left = nodeclaims(&server).len() + kwok_nodes(&server);
        if left == 0 {
            size
        } else {
            size.saturating_sub(left.div_ceil(2)).min(size - 1)
        }
    })
    .await;
    let done = done && nodeclaims(&server).is_empty() && kwok_nodes(&server) == 0;
    let secs = t0.elapsed().as_secs_f64();
    let server_cpu2 = server_cpu() - cpu0;
    let counts2 = counting::diff(&counts.snapshot(), &counts1);
    let report2 = controllers.report().await?;
    let instances = report2["instances"].as_u64().unwrap_or(0);
    let deletion = Phase {
        name: "karpenter deletion",
        size,
        secs,
        requests: total(&counts2),
        done,
    };
    print_phase(
        &deletion,
        &counts2,
        &report2,
        server_cpu2,
        report2["cpu_s"].as_f64().unwrap_or(0.0) - ctrl_cpu0,
    );
    println!(
        "karpenter.{size}.left: {} NodeClaims, {} kwok Nodes, {instances} instances  {}",
        nodeclaims(&server).len(),
        kwok_nodes(&server),
        if done && instances == 0 {
            "PASS"
        } else {
            "MISS"
        }
    );
    memory_lines("karpenter deletion", size, &report2);
    let rss_mib = rss_line("karpenter", size, &report2);
    println!("# controller log (warnings): {}", controllers.log.display());
    controllers.stop().await;
    let _ = stop_tx.send(());
    Ok((vec![launch, deletion], rss_mib))
}

fn total(counts: &BTreeMap<String, Tally>) -> u64 {
    counts.values().map(|t| t.count).sum()
}

/// The phase's figures and where its time went.
fn print_phase(
    phase: &Phase,
    counts: &BTreeMap<String, Tally>,
    report: &Value,
    server_cpu: f64,
    controller_cpu: f64,
) {
    let n = phase.size as f64;
    let key = phase.name.replace(' ', ".");
    println!(
        "{key}.{}.time: {:.2} s{}",
        phase.size,
        phase.secs,
        if phase.done { "" } else { " (timed out)" }
    );
    println!(
        "{key}.{}.requests: {} ({:.1} per object, {:.0}/s)",
        phase.size,
        phase.requests,
        phase.requests as f64 / n,
        phase.requests as f64 / phase.secs.max(1e-9)
    );
    // Where the time went: the API calls...
    let mut by_count: Vec<(&String, &Tally)> = counts.iter().collect();
    by_count.sort_by_key(|(_, t)| std::cmp::Reverse(t.count));
    println!(
        "#   API requests (verb resource: count, per object, errors (409s...), mean server time):"
    );
    for (key, tally) in by_count.iter().take(12) {
        println!(
            "#     {key:<32} {:>8} {:>6.2}/obj {:>7} err {:>8.2} ms",
            tally.count,
            tally.count as f64 / n,
            tally.errors,
            tally.time.as_secs_f64() * 1000.0 / tally.count.max(1) as f64
        );
    }
    // ...the controllers' reconciles...
    println!("#   reconciles (controller: count, per object, p50, p99, max, busy):");
    if let Some(reconciles) = report["reconciles"].as_object() {
        for (controller, r) in reconciles {
            let count = r["count"].as_u64().unwrap_or(0);
            println!(
                "#     {controller:<40} {count:>8} {:>6.2}/obj p50 {:>7.2} ms p99 {:>8.2} ms max {:>8.1} ms busy {:>7.1} s",
                count as f64 / n,
                r["p50_ms"].as_f64().unwrap_or(0.0),
                r["p99_ms"].as_f64().unwrap_or(0.0),
                r["max_ms"].as_f64().unwrap_or(0.0),
                r["total_s"].as_f64().unwrap_or(0.0),
            );
        }
    }
    // ...and what bounds it: the two cores, or waiting.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let used = (server_cpu + controller_cpu) / phase.secs.max(1e-9);
    println!(
        "#   CPU: controller process {controller_cpu:.1} s, server process {server_cpu:.1} s \
         (incl. the bench's progress polls) in {:.1} s wall = {used:.2} of {cores} cores",
        phase.secs
    );
    // A controller busy most of the wall time, one reconcile at a time, is the bottleneck.
    let busiest = report["reconciles"].as_object().and_then(|r| {
        r.iter()
            .map(|(c, v)| (c.clone(), v["total_s"].as_f64().unwrap_or(0.0)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    });
    if let Some((controller, busy)) = &busiest {
        println!(
            "#   busiest controller: {controller}, {:.1} reconciles in flight on average",
            busy / phase.secs.max(1e-9)
        );
    }
    let serial = busiest
        .as_ref()
        .filter(|(_, busy)| *busy > 0.6 * phase.secs && *busy <= 1.1 * phase.secs)
        .map(|(c, _)| {
            format!(
                "{c}: about one reconcile in flight, busy most of the wall time (its concurrency)"
            )
        });
    let bound = if let Some(serial) = &serial {
        serial.as_str()
    } else if used > 0.8 * cores {
        "CPU: both processes together keep the machine's cores busy"
    } else if controller_cpu / phase.secs.max(1e-9) > 0.9 {
        "CPU of the controller process (one core's worth)"
    } else {
        "waiting, not CPU: requeue delays, rate limits, serial steps or request latency"
    };
    println!("#   bound by: {bound}");
}

fn target_line(name: &str, size: usize, target_size: usize, secs: f64, done: bool, what: &str) {
    let key = name.replace(' ', ".");
    if size == target_size {
        let verdict = if done && secs < TARGET_SECS {
            "PASS"
        } else {
            "MISS"
        };
        println!("{key}.{size}.target: {what} in < {TARGET_SECS} s: {secs:.1} s  {verdict}");
    } else {
        // Linear extrapolation to the target size, as an indication only.
        println!(
            "# {key}.{size}.target: {what} in < {TARGET_SECS} s applies at {target_size}; \
             linear extrapolation from {size}: {:.1} s",
            secs * target_size as f64 / size as f64
        );
    }
}

/// Where the controller process's memory is at the end of a phase: RSS, live and peak heap, and
/// the deep size of each cache.
fn memory_lines(phase: &str, size: usize, report: &Value) {
    let mib = |v: &Value| v.as_f64().unwrap_or(0.0) / (1024.0 * 1024.0);
    println!(
        "#   memory: RSS {:.1} MiB now, peak {:.1} MiB; heap live {:.1} MiB, heap peak {:.1} MiB \
         (RSS above the heap is the allocator's: arenas, fragmentation, thread stacks); \
         {} open fds (connections), {} threads",
        report["vm_rss_kib"].as_f64().unwrap_or(0.0) / 1024.0,
        report["vm_hwm_kib"].as_f64().unwrap_or(0.0) / 1024.0,
        mib(&report["heap_live"]),
        mib(&report["heap_peak"]),
        report["open_fds"],
        report["threads"],
    );
    let m = &report["memory"];
    if m.is_object() {
        let per = |bytes: &Value, count: &Value| {
            bytes.as_f64().unwrap_or(0.0) / count.as_f64().unwrap_or(0.0).max(1.0)
        };
        println!(
            "#   caches at {phase} {size}: {} NodeClaims {:.1} MiB ({:.0} B each, managedFields {:.1} MiB); \
             {} Nodes {:.1} MiB ({:.0} B each, managedFields {:.1} MiB, status {:.1} MiB; the kubelet \
             stand-in's own Node cache is about as big); {} kwok instances {:.1} MiB; {} launch cache entries",
            m["nodeclaims"],
            mib(&m["nodeclaim_bytes"]),
            per(&m["nodeclaim_bytes"], &m["nodeclaims"]),
            mib(&m["nodeclaim_managed_fields_bytes"]),
            m["nodes"],
            mib(&m["node_bytes"]),
            per(&m["node_bytes"], &m["nodes"]),
            mib(&m["node_managed_fields_bytes"]),
            mib(&m["node_status_bytes"]),
            m["instances"],
            mib(&m["instance_bytes"]),
            m["launch_cache"],
        );
    }
}

fn rss_line(which: &str, size: usize, report: &Value) -> f64 {
    let mib = report["vm_hwm_kib"].as_f64().unwrap_or(0.0) / 1024.0;
    let verdict = if mib < RSS_TARGET_MIB { "PASS" } else { "MISS" };
    println!(
        "{which}.{size}.controller_peak_rss: {mib:.1} MiB (VmHWM of the controller process; \
         target < {RSS_TARGET_MIB} MiB)  {verdict}"
    );
    mib
}

/// Ratios of each phase's time and requests per object to its smallest size, and whether the
/// work grows linearly (per-object figure within 1.5× of the smallest size's).
fn summary(phases: &[Phase], rss: &[(String, f64)]) {
    println!("\n## scaling (per object, relative to the smallest size)");
    let mut names: Vec<&'static str> = Vec::new();
    for p in phases {
        if !names.contains(&p.name) {
            names.push(p.name);
        }
    }
    for name in names {
        let runs: Vec<&Phase> = phases.iter().filter(|p| p.name == name).collect();
        let Some(base) = runs.iter().min_by_key(|p| p.size) else {
            continue;
        };
        let base_time = base.secs / base.size as f64;
        let base_requests = base.requests as f64 / base.size as f64;
        for p in &runs {
            let time_ratio = p.secs / p.size as f64 / base_time.max(1e-12);
            let request_ratio = p.requests as f64 / p.size as f64 / base_requests.max(1e-12);
            println!(
                "{}.{}.scaling: {:.2} ms/obj (×{time_ratio:.2}), {:.1} req/obj (×{request_ratio:.2}) vs {}",
                name.replace(' ', "."),
                p.size,
                p.secs * 1000.0 / p.size as f64,
                p.requests as f64 / p.size as f64,
                base.size,
            );
        }
        // The marginal cost: what each object past the smaller size added. Fixed costs
        // (start-up, the first list, the last object's requeue delays) weigh on the smallest
        // size's per-object figure; the marginal one shows how the work itself grows.
        let mut by_size: Vec<&&Phase> = runs.iter().collect();
        by_size.sort_by_key(|p| p.size);
        for pair in by_size.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if b.size > a.size {
                println!(
                    "{}.{}.marginal: {:.2} ms/obj from {} to {} ({:.2} ms/obj at {})",
                    name.replace(' ', "."),
                    b.size,
                    (b.secs - a.secs) * 1000.0 / (b.size - a.size) as f64,
                    a.size,
                    b.size,
                    a.secs * 1000.0 / a.size as f64,
                    a.size,
                );
            }
        }
        if runs.len() > 1 {
            let worst_time = runs
                .iter()
                .map(|p| p.secs / p.size as f64 / base_time.max(1e-12))
                .fold(0.0, f64::max);
            let worst_requests = runs
                .iter()
                .map(|p| p.requests as f64 / p.size as f64 / base_requests.max(1e-12))
                .fold(0.0, f64::max);
            let says = |ratio: f64| {
                if ratio <= 1.5 {
                    "linear"
                } else {
                    "superlinear"
                }
            };
            println!(
                "# {name}: time grows {} (worst ×{worst_time:.2} per object), requests grow {} \
                 (worst ×{worst_requests:.2} per object)",
                says(worst_time),
                says(worst_requests)
            );
        } else {
            println!("# {name}: one size only; no ratio");
        }
    }
    for (run, mib) in rss {
        println!("# peak controller RSS {run}: {mib:.1} MiB");
    }
}
