//! Section 2: GET over TCP loopback with a `kube::Config`-built client. First against the
//! `fake-apiserver` binary in its own process, as kubectl and out-of-process controllers use it
//! (client on one core here, server in its process); then `serve` inside the bench process, with
//! server and client sharing one current-thread runtime, and a two-worker runtime.

use std::time::Duration;

use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;

use crate::fixtures::{self, run_for, Result, Run, Stopwatch};
use crate::report::{emit, Figure, Target};

const LOOP: Duration = Duration::from_secs(2);
const POD: &str = "checkout-7d9f8b6c5d-x2x9q";
/// Concurrent client tasks in the multi-threaded variant.
const CONCURRENCY: u64 = 8;

/// Runs section 2.
pub fn run(all: &mut Vec<Figure>) -> Result<()> {
    separate_process(all)?;
    let run = fixtures::current_thread()?.block_on(sequential_gets())?;
    emit(
        Figure::info("tcp.get.inproc_serve.1core", run.rate(), "req/s").cores(run.cores()),
        all,
    );
    let rt = fixtures::multi_thread(2)?;
    let run = rt.block_on(sequential_gets())?;
    emit(
        Figure::info("tcp.get.2workers.seq", run.rate(), "req/s").cores(run.cores()),
        all,
    );
    let run = rt.block_on(concurrent_gets())?;
    emit(
        Figure::info(
            format!("tcp.get.2workers.c{CONCURRENCY}"),
            run.rate(),
            "req/s",
        )
        .cores(run.cores()),
        all,
    );
    Ok(())
}

/// The `fake-apiserver` binary in its own process, with a client on a two-worker runtime here:
/// GETs one at a time, then from [`CONCURRENCY`] tasks (over as many connections).
fn separate_process(all: &mut Vec<Figure>) -> Result<()> {
    let server = ServerProcess::start()?;
    // The client may use both cores: its typed decoding costs more than the server's answer.
    let rt = fixtures::multi_thread(2)?;
    let url: http::Uri = format!("http://{}", server.address).parse()?;
    let client = rt.block_on(async { kube::Client::try_from(kube::Config::new(url)) })?;
    rt.block_on(async {
        fixtures::create_namespace(&client, "bench").await?;
        fixtures::install_pod(&client, "bench", POD).await?;
        Ok::<_, crate::fixtures::BoxError>(())
    })?;
    raw_gets(&server, all)?;
    for concurrency in [1, CONCURRENCY] {
        let server_cpu = server.cpu_time();
        let run = rt.block_on(concurrent_gets_with(&client, concurrency))?;
        let server_cores = server.cores_since(server_cpu, run.wall);
        let name = if concurrency == 1 {
            "tcp.get.process.kube.seq".to_string()
        } else {
            format!("tcp.get.process.kube.c{concurrency}")
        };
        let mut figure = Figure::info(name, run.rate(), "req/s").cores(run.cores());
        if let Some(cores) = server_cores {
            figure = figure.note(format!("server process {cores:.2} cores"));
        }
        emit(figure, all);
    }
    Ok(())
}

/// What the server process itself sustains: the same GET from a plain HTTP/1 client that does
/// not decode the pod (on one core, [`CONCURRENCY`] connections), as `wrk` would measure it.
fn raw_gets(server: &ServerProcess, all: &mut Vec<Figure>) -> Result<()> {
    use http_body_util::{BodyExt, Empty};
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    let client: Client<_, Empty<bytes::Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let uri: http::Uri = format!(
        "http://{}/api/v1/namespaces/bench/pods/{POD}",
        server.address
    )
    .parse()?;
    let rt = fixtures::current_thread()?;
    let server_cpu = server.cpu_time();
    let run = rt.block_on(async {
        let watch = Stopwatch::start();
        let mut running = Vec::new();
        for _ in 0..CONCURRENCY {
            let (client, uri) = (client.clone(), uri.clone());
            running.push(tokio::spawn(async move {
                let (client, uri) = (&client, &uri);
                run_for(LOOP, u64::MAX, move |_| async move {
                    let response = client.get(uri.clone()).await?;
                    if !response.status().is_success() {
                        return Err(format!("GET answered {}", response.status()).into());
                    }
                    std::hint::black_box(response.into_body().collect().await?.to_bytes());
                    Ok(())
                })
                .await
            }));
        }
        let mut total = 0;
        for task in running {
            total += task.await??.count;
        }
        Ok::<_, crate::fixtures::BoxError>(watch.run(total))
    })?;
    let server_cores = server.cores_since(server_cpu, run.wall);
    let mut figure = Figure::new(
        format!("tcp.get.process.c{CONCURRENCY}"),
        run.rate(),
        "req/s",
        Target::AtLeast(30_000.0),
    )
    .cores(run.cores());
    if let Some(cores) = server_cores {
        figure = figure.note(format!("server process {cores:.2} cores"));
    }
    emit(figure, all);
    Ok(())
}

/// The `fake-apiserver` binary, started on a free loopback port; killed when dropped.
struct ServerProcess {
    child: std::process::Child,
    address: String,
}

impl ServerProcess {
    /// Starts the binary built next to this bench (`target/release/fake-apiserver`) and waits
    /// for its ready line.
    fn start() -> Result<Self> {
        use std::io::BufRead;
        let exe = std::env::current_exe()?;
        let binary = exe
            .parent()
            .and_then(|examples| examples.parent())
            .map(|dir| dir.join("fake-apiserver"))
            .filter(|b| b.exists())
            .ok_or("the fake-apiserver binary is not built next to the bench; run `make bench` (or `cargo build --release -p fake-apiserver --bin fake-apiserver` first)")?;
        let mut child = std::process::Command::new(binary)
            .args(["--listen", "127.0.0.1:0", "--log-format", "text"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let mut lines = std::io::BufReader::new(stderr).lines();
        let address = loop {
            let Some(line) = lines.next() else {
                let _ = child.kill();
                return Err("fake-apiserver exited before it was ready".into());
            };
            if let Some(rest) = line?.split("ready on http://").nth(1) {
                break rest
                    .split(|c: char| c.is_whitespace() || c == '"' || c == '\x1b')
                    .next()
                    .unwrap_or_default()
                    .to_string();
            }
        };
        // Keep draining its log so that it never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Ok(Self { child, address })
    }

    /// CPU time the server process used so far.
    fn cpu_time(&self) -> Option<Duration> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        Some(Duration::from_millis(fixtures::cpu_ticks(&stat)? * 10))
    }

    /// Cores the server process used on average since it had used `before` of CPU time,
    /// `wall` ago.
    fn cores_since(&self, before: Option<Duration>, wall: Duration) -> Option<f64> {
        let used = self.cpu_time()?.saturating_sub(before?);
        Some(used.as_secs_f64() / wall.as_secs_f64().max(1e-9))
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a server on a loopback port with the realistic pod; returns a TCP client and the
/// shutdown trigger.
async fn start() -> Result<(kube::Client, tokio::sync::oneshot::Sender<()>)> {
    let server = FakeApiServer::builder().seed(2).build();
    fixtures::create_namespace(&server.client(), "bench").await?;
    fixtures::install_pod(&server.client(), "bench", POD).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.serve(listener, async move {
        let _ = stopped.await;
    }));
    let url: http::Uri = format!("http://{addr}").parse()?;
    let client = kube::Client::try_from(kube::Config::new(url))?;
    Ok((client, stop))
}

async fn sequential_gets() -> Result<Run> {
    let (client, stop) = start().await?;
    let pods = &Api::<Pod>::namespaced(client, "bench");
    run_for(Duration::from_millis(200), 2_000, move |_| async move {
        pods.get(POD).await?;
        Ok(())
    })
    .await?;
    let run = run_for(LOOP, u64::MAX, move |_| async move {
        pods.get(POD).await?;
        Ok(())
    })
    .await?;
    let _ = stop.send(());
    Ok(run)
}

async fn concurrent_gets() -> Result<Run> {
    let (client, stop) = start().await?;
    let run = concurrent_gets_with(&client, CONCURRENCY).await;
    let _ = stop.send(());
    run
}

/// GETs of the pod from `tasks` concurrent tasks for [`LOOP`].
async fn concurrent_gets_with(client: &kube::Client, tasks: u64) -> Result<Run> {
    let pods = Api::<Pod>::namespaced(client.clone(), "bench");
    run_for(Duration::from_millis(200), 2_000, |_| {
        let pods = pods.clone();
        async move {
            pods.get(POD).await?;
            Ok(())
        }
    })
    .await?;
    let watch = Stopwatch::start();
    let mut running = Vec::new();
    for _ in 0..tasks {
        let pods = pods.clone();
        running.push(tokio::spawn(async move {
            let pods = &pods;
            run_for(LOOP, u64::MAX, move |_| async move {
                pods.get(POD).await?;
                Ok(())
            })
            .await
        }));
    }
    let mut total = 0;
    for task in running {
        total += task.await??.count;
    }
    Ok(watch.run(total))
}
