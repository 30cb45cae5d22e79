//! The `eno` and `synthesize` subcommands of the `controllers` binary.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::registry::Registry;
use tracing::info;

use super::context::Config;
use super::executor::{install_executor, synthesize, Outcome, SynthesisRequest};
use super::kubelet_standin::{executor_runner, KubeletStandIn};
use super::metrics::Metrics;
use super::wiring::EnoControllers;
use crate::clock::{SharedClock, SystemClock};
use crate::ids::RandomIds;
use crate::operator::client::client_from_env;
use crate::operator::runner::{self, OperatorArgs};

/// Flags of `controllers eno`.
#[derive(Debug, Clone, clap::Args)]
pub struct EnoArgs {
    /// Namespace synthesizer pods are created in.
    #[arg(long, env = "POD_NAMESPACE", default_value = "eno-system")]
    pub pod_namespace: String,
    /// ServiceAccount of synthesizer pods (it needs the executor's permissions).
    #[arg(long, env = "POD_SERVICE_ACCOUNT")]
    pub pod_service_account: Option<String>,
    /// Image of this binary; synthesizer pods copy the executor out of it.
    #[arg(long, env = "EXECUTOR_IMAGE")]
    pub executor_image: String,
    /// Development only, for clusters without nodes (the fake API server): also run a kubelet
    /// stand-in that runs synthesizer pods in this process, executing each Synthesizer's command
    /// on this host.
    #[arg(long)]
    pub simulate_kubelet: bool,
    /// Longest wait between retries of a failing reconcile, in seconds.
    #[arg(long, default_value_t = 300)]
    pub max_error_backoff_seconds: u64,
    /// Shared operator flags.
    #[command(flatten)]
    pub operator: OperatorArgs,
}

/// Flags of `controllers synthesize`.
#[derive(Debug, Clone, clap::Args)]
pub struct SynthesizeArgs {
    /// Copy this binary to the given path and exit (the synthesizer pod's init container).
    #[arg(long)]
    pub install_to: Option<PathBuf>,
    /// Kubeconfig file (default: the pod's service account).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// `controllers eno`: the lifecycle and status controllers until SIGTERM.
pub async fn run_eno(args: EnoArgs) -> anyhow::Result<()> {
    let mut registry = Registry::default();
    let metrics = Metrics::register(&mut registry);
    let mut config = Config::new(&args.pod_namespace, &args.executor_image);
    config.pod_service_account = args.pod_service_account.clone().filter(|s| !s.is_empty());
    config.max_error_backoff = Duration::from_secs(args.max_error_backoff_seconds.max(1));
    runner::run(
        &args.operator,
        "eno-controller-lease",
        &args.pod_namespace,
        registry,
        |client, shutdown, readiness| {
            let clock: SharedClock = Arc::new(SystemClock);
            let kubelet = args.simulate_kubelet.then(|| {
                KubeletStandIn::new(
                    client.clone(),
                    &config.pod_namespace,
                    executor_runner(client.clone(), clock.clone()),
                    clock.clone(),
                )
            });
            let controllers = EnoControllers {
                client,
                config,
                clock,
                ids: Arc::new(RandomIds),
                metrics,
            }
            .run(shutdown.clone(), readiness);
            async move {
                match kubelet {
                    Some(kubelet) => {
                        info!("simulating a kubelet: synthesizer commands run on this host");
                        futures::future::join(controllers, kubelet.run(shutdown)).await;
                    }
                    None => controllers.await,
                }
            }
        },
    )
    .await
}

/// `controllers synthesize`: the in-pod executor (or, with `--install-to`, its installer).
pub async fn run_synthesize(args: SynthesizeArgs) -> anyhow::Result<()> {
    if let Some(target) = &args.install_to {
        install_executor(target)?;
        info!(target = %target.display(), "installed executor");
        return Ok(());
    }
    let request = SynthesisRequest::from_env(|name| std::env::var(name).ok())?;
    let client = client_from_env(args.kubeconfig.as_deref()).await?;
    let clock: SharedClock = Arc::new(SystemClock);
    match synthesize(&client, &clock, &request).await? {
        Outcome::Synthesized { slices } => info!(?slices, "synthesized"),
        Outcome::Skipped(reason) => info!(%reason, "nothing to synthesize"),
    }
    Ok(())
}
