//! Production plumbing shared by every controller of this crate (Eno's and Karpenter's).
//!
//! - [`client::client_from_env`]: a [`kube::Client`] from `--kubeconfig`, `$KUBECONFIG`,
//!   `~/.kube/config` or the in-cluster service account, in that order.
//! - [`leader::LeaderElector`]: leader election on a `coordination.k8s.io/v1` Lease, with
//!   timestamps from the injected [`crate::clock::SharedClock`]. `run_as_leader(shutdown, work)`
//!   waits to become leader, runs `work` while renewing the lease, releases the lease on
//!   shutdown, and returns [`leader::LeaderError::Lost`] if leadership is lost (the process should
//!   then exit, as controller-runtime does).
//! - [`http::serve`] / [`http::router`]: an axum server for `/healthz` (always 200 once serving),
//!   `/readyz` (200 once the [`http::Readiness`] flag is set, 503 before) and `/metrics` (the shared
//!   [`prometheus_client::registry::Registry`] in the OpenMetrics/Prometheus text format).
//!   Register every metric before wrapping the registry in an `Arc` and serving it.
//! - [`logging::init`]: `tracing` output as `--log-format text|json`, filtered by `RUST_LOG`
//!   (default `info`).
//! - [`shutdown::signal`]: a cloneable future that completes on SIGTERM or SIGINT;
//!   [`shutdown::on`] makes one from any future (tests).
//!
//! - [`index::store`]: a reflector store with one index (controller-runtime's field indexers),
//!   so that a controller looks up the objects of one owner instead of scanning its cache.
//!
//! - [`trim::strip_managed_fields`]: drop `metadata.managedFields` from watched objects before
//!   they enter a reflector cache (`watcher(..).modify(strip_managed_fields)`).
//!
//! - [`runner::run`] with [`runner::OperatorArgs`] (clap flags `--kubeconfig`, `--http-address`,
//!   `--leader-elect`, `--leader-election-namespace`): all of the above around a controller's
//!   start function `FnOnce(Client, Shutdown, Readiness) -> impl Future<Output = ()>`.
//!
//! A controller subcommand is then: register its metrics in a `Registry`, and call
//! `runner::run(&args, lease_name, lease_namespace, registry, |client, shutdown, readiness| …)`.

pub mod client;
pub mod events;
pub mod http;
pub mod index;
pub mod leader;
pub mod logging;
pub mod runner;
pub mod shutdown;
pub mod trim;
