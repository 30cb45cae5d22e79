//! The common `main` of a controller subcommand: client, HTTP endpoints, leader election and
//! shutdown, around a controller-specific start function.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use prometheus_client::registry::Registry;
use tracing::{error, info};

use super::client::client_from_env;
use super::http::{serve, Readiness};
use super::leader::{LeaderElectionConfig, LeaderElector};
use super::shutdown::{self, Shutdown};
use crate::clock::{SharedClock, SystemClock};
use crate::ids::{IdSource, RandomIds};

/// Flags every controller subcommand shares.
#[derive(Debug, Clone, clap::Args)]
pub struct OperatorArgs {
    /// Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then the in-cluster account).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Address for /healthz, /readyz and /metrics.
    #[arg(long, env = "HTTP_ADDRESS", default_value = "0.0.0.0:8080")]
    pub http_address: SocketAddr,
    /// Run only while holding the leader Lease.
    #[arg(long, env = "LEADER_ELECT", default_value_t = true, action = clap::ArgAction::Set)]
    pub leader_elect: bool,
    /// Namespace of the leader Lease (default: the controller's own namespace setting).
    #[arg(long, env = "LEADER_ELECTION_NAMESPACE")]
    pub leader_election_namespace: Option<String>,
}

/// Run a controller: connect, serve the HTTP endpoints over `registry`, then run `start` (while
/// leading, with leader election) until SIGTERM/SIGINT.
///
/// `start` gets the client, the shutdown signal and the readiness flag to set once its caches
/// have synced (with leader election, the process reports ready while it waits as a standby). Returns an error if leadership is lost or the setup fails; the process should
/// then exit non-zero.
pub async fn run<F, Fut>(
    args: &OperatorArgs,
    lease_name: &str,
    default_lease_namespace: &str,
    registry: Registry,
    start: F,
) -> anyhow::Result<()>
where
    F: FnOnce(kube::Client, Shutdown, Readiness) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let client = client_from_env(args.kubeconfig.as_deref()).await?;
    let shutdown = shutdown::signal();
    let readiness = Readiness::new();
    let listener = tokio::net::TcpListener::bind(args.http_address).await?;
    info!(address = %args.http_address, "serving /healthz, /readyz and /metrics");
    let server = tokio::spawn(serve(
        listener,
        Arc::new(registry),
        readiness.clone(),
        shutdown.clone(),
    ));

    let outcome = if args.leader_elect {
        let identity = format!(
            "{}_{}",
            std::env::var("HOSTNAME").unwrap_or_else(|_| "controllers".into()),
            RandomIds.uuid()
        );
        let namespace = args
            .leader_election_namespace
            .clone()
            .unwrap_or_else(|| default_lease_namespace.to_string());
        let clock: SharedClock = Arc::new(SystemClock);
        let elector = LeaderElector::new(
            client.clone(),
            LeaderElectionConfig::new(lease_name, &namespace, &identity),
            clock,
        );
        // A standby replica is ready: it serves its purpose by waiting. Gating /readyz on
        // leadership would keep every standby unready and stall rolling updates.
        readiness.set(true);
        info!(lease = lease_name, %namespace, %identity, "waiting for leadership");
        elector
            .run_as_leader(shutdown.clone(), start(client, shutdown.clone(), readiness))
            .await
            .map_err(anyhow::Error::from)
    } else {
        start(client, shutdown.clone(), readiness).await;
        Ok(())
    };
    if let Err(e) = &outcome {
        error!(error = %e, "stopping");
    }
    server.abort();
    outcome
}
