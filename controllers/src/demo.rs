//! `controllers demo`: both controllers against the embedded, in-process fake API server.
//!
//! Starts a [`fake_apiserver::FakeApiServer`] in this process, then runs Eno's demo (a Synthesizer
//! whose command is a small script, a Composition, the lifecycle and status controllers, and a
//! kubelet stand-in that runs the executor) and Karpenter's demo (NodeClaims launched by the
//! kwok-style provider, registered and initialized, then deleted) against it, and prints what
//! happened. With `--serve` the server also listens on loopback and stays up afterwards, so the
//! result can be inspected with `kubectl`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use fake_apiserver::FakeApiServer;

use crate::clock::{SharedClock, SystemClock};
use crate::ids::RandomIds;

/// Which demos to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Which {
    /// Eno and Karpenter.
    All,
    /// Eno's synthesis only.
    Eno,
    /// Karpenter's NodeClaims only.
    Karpenter,
}

/// Flags of `controllers demo`.
#[derive(Debug, Clone, clap::Args)]
pub struct DemoArgs {
    /// Which controllers to demonstrate.
    #[arg(long, value_enum, default_value_t = Which::All)]
    pub only: Which,
    /// NodeClaims to create in Karpenter's demo.
    #[arg(long, default_value_t = 3)]
    pub nodeclaims: usize,
    /// Also serve the fake API server on this loopback address, and keep serving after the
    /// demo until interrupted (inspect it with kubectl).
    #[arg(long, value_name = "ADDR")]
    pub serve: Option<String>,
    /// With `--serve`: write a kubeconfig for the server here.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig_out: Option<PathBuf>,
    /// Give up on a demo after this many seconds.
    #[arg(long, default_value_t = 60)]
    pub timeout_seconds: u64,
}

/// Runs the demo.
pub async fn run(args: DemoArgs) -> anyhow::Result<()> {
    let server = FakeApiServer::new();
    let client = server.client();
    if let Some(addr) = &args.serve {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let url = format!("http://{}", listener.local_addr()?);
        if let Some(path) = &args.kubeconfig_out {
            std::fs::write(path, fake_apiserver::kubeconfig::kubeconfig_yaml(&url))?;
            println!(
                "kubeconfig for the embedded server written to {}",
                path.display()
            );
        }
        println!("embedded fake API server listening on {url}");
        tokio::spawn(
            server
                .clone()
                .serve(listener, crate::operator::shutdown::signal()),
        );
    }
    let timeout = Duration::from_secs(args.timeout_seconds);
    let clock: SharedClock = Arc::new(SystemClock);

    if matches!(args.only, Which::All | Which::Eno) {
        println!("== Eno: a Composition synthesizes ==");
        let logs = server.clone();
        let options = crate::eno::demo::DemoOptions {
            timeout,
            pod_logs: Some(Arc::new(move |pod, container, text| {
                let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
                let name = pod.metadata.name.as_deref().unwrap_or_default();
                if let Err(e) = logs.append_pod_log(namespace, name, container, text) {
                    tracing::debug!(error = %e, "writing a pod log line failed");
                }
            })),
            ..Default::default()
        };
        let report = crate::eno::demo::run_demo(client.clone(), options).await?;
        println!("{report}");
    }
    if matches!(args.only, Which::All | Which::Karpenter) {
        println!("== Karpenter: NodeClaims become Ready ==");
        let options = crate::karpenter::demo::DemoOptions {
            count: args.nodeclaims,
            timeout,
            delete_after: args.serve.is_none(),
            clock: clock.clone(),
            ids: Arc::new(RandomIds),
        };
        let report = crate::karpenter::demo::run_demo(client.clone(), options).await?;
        print!("{}", report.table());
        println!(
            "instances left: {}, nodes left: {}",
            report.instances_left, report.nodes_left
        );
    }
    if args.serve.is_some() {
        println!("demo done; the server keeps serving until interrupted (Ctrl-C)");
        crate::operator::shutdown::signal().await;
    }
    Ok(())
}
