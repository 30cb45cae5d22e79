//! Section 2: GET over TCP loopback (`serve` on 127.0.0.1:0, a `kube::Config`-built client), with
//! server and client on one current-thread runtime, and on a two-worker runtime.

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
    let run = fixtures::current_thread()?.block_on(sequential_gets())?;
    emit(
        Figure::new(
            "tcp.get.1core",
            run.rate(),
            "req/s",
            Target::AtLeast(30_000.0),
        )
        .cores(run.cores()),
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
    let watch = Stopwatch::start();
    let mut tasks = Vec::new();
    for _ in 0..CONCURRENCY {
        let pods = Api::<Pod>::namespaced(client.clone(), "bench");
        tasks.push(tokio::spawn(async move {
            let pods = &pods;
            run_for(LOOP, u64::MAX, move |_| async move {
                pods.get(POD).await?;
                Ok(())
            })
            .await
        }));
    }
    let mut total = 0;
    for task in tasks {
        total += task.await??.count;
    }
    let run = watch.run(total);
    let _ = stop.send(());
    Ok(run)
}
