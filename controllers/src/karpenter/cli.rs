//! The `karpenter` subcommand of the `controllers` binary: the NodeClaim lifecycle and termination
//! controllers (plus the minimal node termination controller), with the cloud provider chosen by
//! a flag, leader election, `/healthz` `/readyz` `/metrics` and graceful shutdown (the shared
//! [`crate::operator`] plumbing).

use std::sync::Arc;

use jiff::SignedDuration;
use prometheus_client::registry::Registry;
use tracing::info;

use crate::clock::{SharedClock, SystemClock};
use crate::ids::{RandomIds, SharedIds};
use crate::operator::runner::{self, OperatorArgs};

use super::cloudprovider::fake::FakeCloudProvider;
use super::cloudprovider::kwok::KwokCloudProvider;
use super::cloudprovider::SharedCloudProvider;
use super::context::{Config, Context};
use super::kubelet::{self, KubeletContext};
use super::metrics::Metrics;
use super::wiring::{self, WiringOptions};

/// Which cloud provider launches instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProviderKind {
    /// Create the Node objects directly (kwok-style): works on any cluster.
    Kwok,
    /// In-memory instances; Nodes must be created by someone else.
    Fake,
}

/// Flags of `controllers karpenter`.
#[derive(Debug, Clone, clap::Args)]
pub struct KarpenterArgs {
    /// Cloud provider.
    #[arg(long, value_enum, env = "CLOUD_PROVIDER", default_value_t = ProviderKind::Kwok)]
    pub cloud_provider: ProviderKind,
    /// Also run the kubelet stand-in for kwok Nodes (Ready condition, startup taints removed).
    /// Leave off where kwok itself runs.
    #[arg(long, env = "KUBELET_STANDIN", default_value_t = false, action = clap::ArgAction::Set)]
    pub kubelet_standin: bool,
    /// Run the minimal node termination controller (drops `karpenter.sh/termination` from
    /// deleting Nodes after deleting their NodeClaims).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub node_termination: bool,
    /// With the kwok provider: how many instances may run at once (unlimited when unset); a
    /// launch beyond it fails with insufficient capacity, as a cloud out of capacity would.
    #[arg(long, env = "KWOK_MAX_INSTANCES")]
    pub kwok_max_instances: Option<usize>,
    /// Namespace of the leader Lease unless `--leader-election-namespace` says otherwise.
    #[arg(long, env = "SYSTEM_NAMESPACE", default_value = "karpenter")]
    pub namespace: String,
    /// Liveness: delete NodeClaims whose Node has not registered after this many seconds.
    #[arg(long, default_value_t = 900)]
    pub registration_ttl_seconds: u64,
    /// Shared operator flags.
    #[command(flatten)]
    pub operator: OperatorArgs,
}

/// `controllers karpenter`: run until SIGTERM/SIGINT.
pub async fn run(args: KarpenterArgs) -> anyhow::Result<()> {
    let mut registry = Registry::default();
    let metrics = Metrics::registered_in(&mut registry);
    let config = Config {
        registration_ttl: SignedDuration::from_secs(
            i64::try_from(args.registration_ttl_seconds).unwrap_or(900),
        ),
        ..Config::default()
    };
    let (provider_kind, kubelet_standin, node_termination, kwok_max_instances) = (
        args.cloud_provider,
        args.kubelet_standin,
        args.node_termination,
        args.kwok_max_instances,
    );
    runner::run(
        &args.operator,
        "karpenter-leader-election",
        &args.namespace,
        registry,
        |client, shutdown, readiness| async move {
            let clock: SharedClock = Arc::new(SystemClock);
            let ids: SharedIds = Arc::new(RandomIds);
            let provider: SharedCloudProvider = match provider_kind {
                ProviderKind::Kwok => Arc::new(
                    KwokCloudProvider::new(client.clone(), ids.clone())
                        .with_max_instances(kwok_max_instances),
                ),
                ProviderKind::Fake => Arc::new(FakeCloudProvider::new(ids.clone())),
            };
            let (stores, writers) = wiring::new_stores();
            let ctx = Arc::new(Context::new(
                client.clone(),
                stores,
                provider,
                clock.clone(),
                ids,
                metrics,
                config,
            ));
            let running = wiring::spawn(
                ctx.clone(),
                writers,
                WiringOptions {
                    node_termination,
                    ..Default::default()
                },
                shutdown.clone(),
            );
            let standin = kubelet_standin.then(|| {
                let kctx = Arc::new(KubeletContext::new(
                    client.clone(),
                    clock,
                    std::time::Duration::from_secs(10),
                ));
                tokio::spawn(kubelet::run(kctx, Default::default(), shutdown.clone()))
            });
            if running.ready().await {
                readiness.set(true);
                info!(
                    provider = ctx.cloud_provider.name(),
                    "karpenter controllers running"
                );
            }
            shutdown.await;
            running.shutdown().await;
            if let Some(s) = standin {
                let _ = s.await;
            }
            info!("karpenter controllers stopped");
        },
    )
    .await
}
