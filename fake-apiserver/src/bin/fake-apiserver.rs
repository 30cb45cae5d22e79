//! `fake-apiserver`: the fake Kubernetes API server on a loopback TCP port, for `kubectl` and for
//! reproducing a controller bug by hand.
//!
//! ```text
//! fake-apiserver --listen 127.0.0.1:0 --kubeconfig-out /tmp/fake.kubeconfig --load ./manifests
//! kubectl --kubeconfig /tmp/fake.kubeconfig get pods -A
//! ```
//!
//! Start-up: the `--state` file is loaded if it exists, then the `--load` manifests are applied
//! (CRDs first), then the listener is bound, the kubeconfig written, and exactly one line logged:
//! `fake-apiserver ready on http://ADDR`. On SIGINT or SIGTERM the server stops taking connections,
//! ends open watches, gives requests in flight [`SHUTDOWN_GRACE`] to finish, and writes the state
//! back to the `--state` file, atomically (a temporary file renamed over the old one). A second
//! signal ends the process at once without saving; the old state file is left intact. A state
//! file that is truncated or corrupt is refused at start with an error naming the file and the
//! problem, and nothing of it is loaded.

use std::future::Future;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use fake_apiserver::hooks::RequestMatcher;
use fake_apiserver::kubeconfig::kubeconfig_yaml;
use fake_apiserver::manifest::{self, ManifestError};
use fake_apiserver::state::{self, StateError};
use fake_apiserver::FakeApiServer;
use tokio::sync::oneshot;

/// JSON trees make many small allocations; mimalloc serves them faster than the system allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: fake_apiserver::allocator::MiMalloc = fake_apiserver::allocator::MiMalloc;

/// How long open connections (watches) may take to finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Command-line flags.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "fake-apiserver",
    version,
    about = "A fake Kubernetes API server on a loopback port, for kubectl and kube-rs"
)]
struct Args {
    /// Address to listen on; port 0 picks a free port (the ready line says which).
    #[arg(long, default_value = "127.0.0.1:6443", env = "FAKE_APISERVER_LISTEN")]
    listen: String,
    /// Write a kubeconfig for this server (cluster, user and context `fake`) to this file.
    #[arg(long, value_name = "PATH")]
    kubeconfig_out: Option<PathBuf>,
    /// Apply the manifests in this file or directory at start (CRDs first).
    #[arg(long, value_name = "DIR")]
    load: Option<PathBuf>,
    /// Load the cluster state from this file at start if it exists; save it there on SIGINT/SIGTERM.
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// Log format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Run without kube-controller-manager's controllers (garbage collector, namespace and
    /// service-account controllers, root CA publisher): a bare API server, on which deleted
    /// namespaces stay Terminating and owner references are not acted on.
    #[arg(long, env = "FAKE_APISERVER_NO_CONTROLLERS")]
    no_controllers: bool,
    /// Authenticate requests: without credentials a request is `system:anonymous` (see
    /// `--anonymous-auth`) rather than the cluster admin. Implied by `--token-auth-file`.
    #[arg(long)]
    authentication: bool,
    /// Static bearer tokens, one `token,user,uid,"group1,group2"` record a line (the real
    /// server's format).
    #[arg(long, value_name = "FILE")]
    token_auth_file: Option<PathBuf>,
    /// With authentication on, let requests without credentials through as `system:anonymous`
    /// (else they get 401).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    anonymous_auth: bool,
    /// How requests are authorized: `AlwaysAllow` or `RBAC` (the stored roles and bindings).
    #[arg(long, default_value = "AlwaysAllow")]
    authorization_mode: fake_apiserver::auth::AuthorizationMode,
    /// Serve HTTPS with this certificate (PEM; with `--tls-private-key-file`). kubectl sends
    /// tokens and impersonation headers only over TLS. The kubeconfig written trusts this file
    /// as its certificate authority (right for a self-signed certificate).
    #[arg(long, value_name = "FILE", requires = "tls_private_key_file")]
    tls_cert_file: Option<PathBuf>,
    /// The private key (PEM) of `--tls-cert-file`.
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    tls_private_key_file: Option<PathBuf>,
    /// Admission plugins to turn on besides the default ones (`ServiceAccount`; the plugins
    /// every real server runs, `NamespaceLifecycle`, `LimitRanger`, `PodSecurity`, ..., always
    /// run and are accepted here too).
    #[arg(long, value_delimiter = ',', value_name = "PLUGINS")]
    enable_admission_plugins: Vec<String>,
    /// kube-apiserver's admission configuration file (`apiserver.config.k8s.io/v1
    /// AdmissionConfiguration`): the `PodSecurity` plugin's defaults and exemptions are read
    /// from it (inline `configuration` or `path`); other plugins' entries are ignored.
    #[arg(long, value_name = "FILE")]
    admission_control_config_file: Option<PathBuf>,
    /// Fail this share of requests, in parts per thousand, with 429 (Retry-After), 500 or, on
    /// writes, 409 — a flaky server for fault-tolerance tests (see `fake_apiserver::chaos`).
    #[arg(long, value_name = "PER_MILLE", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=1000))]
    fault_rate: u32,
    /// Seed of the generator that picks which requests `--fault-rate` fails.
    #[arg(long, value_name = "N", default_value_t = 0)]
    fault_seed: u64,
}

/// How log lines are written (to stderr).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Why the server could not start or save its state.
#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error("reading state {path}: {source}", path = path.display())]
    ReadState {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("state file {path} cannot be loaded (nothing was loaded, the file is left as it is): {source}", path = path.display())]
    State { path: PathBuf, source: StateError },
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("applying {what} from {path}: {message}", path = path.display())]
    Apply {
        path: PathBuf,
        what: String,
        message: String,
    },
    #[error("listening on {address}: {source}")]
    Listen {
        address: String,
        source: std::io::Error,
    },
    #[error("writing {path}: {source}", path = path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("serving: {0}")]
    Serve(std::io::Error),
    #[error(transparent)]
    TokenFile(#[from] fake_apiserver::auth::token_file::TokenFileError),
    #[error(transparent)]
    Tls(#[from] fake_apiserver::tls::TlsError),
    #[error("admission plugin {name:?} is not supported (ServiceAccount, or one of the plugins always on: {always_on})", name = .0, always_on = ALWAYS_ON_ADMISSION_PLUGINS.join(", "))]
    AdmissionPlugin(String),
    #[error("admission configuration: {0}")]
    AdmissionConfiguration(#[from] fake_apiserver::admission::PodSecurityConfigError),
}

/// The admission plugins of a real server's default set that always run here (naming them in
/// `--enable-admission-plugins` changes nothing).
const ALWAYS_ON_ADMISSION_PLUGINS: &[&str] = &[
    "NamespaceLifecycle",
    "LimitRanger",
    "TaintNodesByCondition",
    "PodSecurity",
    "Priority",
    "DefaultTolerationSeconds",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
];

/// The server the flags describe.
fn server_from(args: &Args) -> Result<FakeApiServer, RunError> {
    let mut builder = FakeApiServer::builder()
        .controllers(if args.no_controllers {
            fake_apiserver::controllers::ControllerConfig::none()
        } else {
            fake_apiserver::controllers::ControllerConfig::all()
        })
        .authentication(args.authentication)
        .anonymous_auth(args.anonymous_auth)
        .authorization_mode(args.authorization_mode);
    if let Some(path) = &args.token_auth_file {
        builder = builder.static_tokens(fake_apiserver::auth::StaticTokens::from_file(path)?);
    }
    for plugin in &args.enable_admission_plugins {
        match plugin.as_str() {
            "ServiceAccount" => builder = builder.service_account_admission(true),
            always_on if ALWAYS_ON_ADMISSION_PLUGINS.contains(&always_on) => {}
            other => return Err(RunError::AdmissionPlugin(other.to_string())),
        }
    }
    if let Some(path) = &args.admission_control_config_file {
        if let Some(configuration) =
            fake_apiserver::admission::PodSecurityConfiguration::from_admission_configuration_file(
                path,
            )?
        {
            builder = builder.pod_security_configuration(configuration);
        }
    }
    let server = builder.build();
    if args.fault_rate > 0 {
        server
            .chaos()
            .set(Some(fake_apiserver::chaos::ChaosRule::rate(
                args.fault_seed,
                args.fault_rate,
            )));
    }
    Ok(server)
}

/// The `tracing` target of the start-up timeline (`RUST_LOG=fake_apiserver::startup=debug`):
/// when each step of the start finished, in µs since `main` began.
const STARTUP_TARGET: &str = "fake_apiserver::startup";

fn main() -> ExitCode {
    let began = Instant::now();
    let args = Args::parse();
    // Bound before anything else is built, logging included (its filter takes longer to set up
    // than the bind): a client connecting while the server starts waits in the accept queue for
    // the answer instead of being refused and left to retry.
    let bound = bind(&args.listen);
    let bound_us = began.elapsed().as_micros();
    init_logging(args.log_format);
    let logging_us = began.elapsed().as_micros();
    let listener = match bound {
        Ok(listener) => listener,
        Err(e) => {
            tracing::error!(error = %e, "fake-apiserver failed");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the async runtime");
            return ExitCode::FAILURE;
        }
    };
    let runtime_us = began.elapsed().as_micros();
    let result = runtime.block_on(async {
        // Built here, not on a thread of its own beside the runtime's build: that measured
        // slower (exec to `/readyz` p50 +0.6–1.0 ms over 150 starts on 2 cores), likely because
        // another thread's allocator heap and stack are more fresh memory to fault in.
        let server = server_from(&args)?;
        let server_us = began.elapsed().as_micros();
        let shutdown = shutdown_then_exit_on_second_signal(args.state.clone());
        run(args, listener, server, shutdown, |_| {
            tracing::debug!(
                target: STARTUP_TARGET,
                // The monotonic clock's reading (`tv_sec`, `tv_nsec` on Linux) when `main`
                // began, for a parent that timed the exec on the same clock.
                main_began = ?began,
                logging_us,
                bound_us,
                runtime_us,
                server_us,
                serving_us = began.elapsed().as_micros(),
                "start-up timeline"
            );
        })
        .await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "fake-apiserver failed");
            ExitCode::FAILURE
        }
    }
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

/// SIGINT and SIGTERM (Ctrl-C elsewhere), listened for from the moment this is made: a signal
/// that came before the handler was installed would kill the process without saving.
struct Signals {
    #[cfg(unix)]
    streams: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Signals {
    /// Installs the handlers; must run inside the tokio runtime.
    fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            match (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
            ) {
                (Ok(interrupt), Ok(terminate)) => Signals {
                    streams: Some((interrupt, terminate)),
                },
                _ => Signals { streams: None },
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// Resolves on the next signal.
    async fn next(&mut self) {
        #[cfg(unix)]
        if let Some((interrupt, terminate)) = &mut self.streams {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            return;
        }
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for signals; stopping");
        }
    }
}

/// Binds the `--listen` address (before a runtime exists; see [`fake_apiserver::listener::bind_std`]).
fn bind(address: &str) -> Result<std::net::TcpListener, RunError> {
    fake_apiserver::listener::bind_std(address).map_err(|source| RunError::Listen {
        address: address.to_string(),
        source,
    })
}

/// Runs `server` on `listener` as the flags say until `shutdown` resolves; `on_ready` gets the
/// bound address once the server accepts connections.
async fn run(
    args: Args,
    listener: std::net::TcpListener,
    server: FakeApiServer,
    shutdown: impl Future<Output = ()> + Send + 'static,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), RunError> {
    if let Some(path) = &args.state {
        load_state(&server, path)?;
    }
    if let Some(path) = &args.load {
        apply_manifests(&server, path)?;
    }
    let listener =
        tokio::net::TcpListener::from_std(listener).map_err(|source| RunError::Listen {
            address: args.listen.clone(),
            source,
        })?;
    let address = listener.local_addr().map_err(|source| RunError::Listen {
        address: args.listen.clone(),
        source,
    })?;
    let tls = match (&args.tls_cert_file, &args.tls_private_key_file) {
        (Some(cert), Some(key)) => Some((
            cert.clone(),
            fake_apiserver::tls::TlsConfig::from_pem_files(cert, key)?,
        )),
        _ => None,
    };
    let url = match &tls {
        Some(_) => format!("https://{address}"),
        None => format!("http://{address}"),
    };
    if let Some(path) = &args.kubeconfig_out {
        let kubeconfig = match &tls {
            Some((cert, _)) => {
                fake_apiserver::kubeconfig::kubeconfig_yaml_tls(&url, cert, None, "default")
            }
            None => kubeconfig_yaml(&url),
        };
        write_file(path, kubeconfig.as_bytes())?;
    }

    let (stop_serving, stopped) = oneshot::channel::<()>();
    let stopped = async {
        // A dropped sender also means stop.
        let _ = stopped.await;
    };
    let serving = match tls {
        Some((_, config)) => tokio::spawn(server.clone().serve_tls(listener, config, stopped)),
        None => tokio::spawn(server.clone().serve(listener, stopped)),
    };
    tracing::info!("fake-apiserver ready on {url}");
    on_ready(address);

    shutdown.await;
    tracing::info!("shutting down");
    let _ = stop_serving.send(());
    // Open watches would hold the graceful shutdown for the whole grace period: end them, as a
    // real server going away does (clients see the stream close).
    server.drop_watches(RequestMatcher::default());
    match tokio::time::timeout(SHUTDOWN_GRACE, serving).await {
        Ok(Ok(Ok(()))) => {}
        Ok(Ok(Err(e))) => return Err(RunError::Serve(e)),
        Ok(Err(e)) => tracing::error!(error = %e, "the server task failed"),
        Err(_) => tracing::warn!(
            grace = ?SHUTDOWN_GRACE,
            "connections still open after the grace period; stopping anyway"
        ),
    }
    if let Some(path) = &args.state {
        save_state(&server, path)?;
    }
    Ok(())
}

/// Imports `path` into `server` if the file exists.
fn load_state(server: &FakeApiServer, path: &Path) -> Result<(), RunError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            tracing::info!(path = %path.display(), "no saved state; starting empty");
            return Ok(());
        }
        Err(source) => {
            return Err(RunError::ReadState {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let state_error = |source| RunError::State {
        path: path.to_path_buf(),
        source,
    };
    let state = state::parse(&bytes).map_err(state_error)?;
    server.import_state(state).map_err(state_error)?;
    tracing::info!(path = %path.display(), revision = server.revision(), "state loaded");
    Ok(())
}

/// Applies every manifest under `path`, CRDs first.
fn apply_manifests(server: &FakeApiServer, path: &Path) -> Result<(), RunError> {
    let objects = manifest::load(path)?;
    let count = objects.len();
    for object in objects {
        let what = format!(
            "{} {}",
            object["kind"].as_str().unwrap_or_default(),
            object["metadata"]["name"].as_str().unwrap_or_default()
        );
        server.apply_manifest(object).map_err(|e| RunError::Apply {
            path: path.to_path_buf(),
            what,
            message: e.to_string(),
        })?;
    }
    tracing::info!(path = %path.display(), objects = count, "manifests applied");
    Ok(())
}

/// Test hook: how long to pause, with the new state written to its temporary file, before
/// renaming it over the old one (so a test can signal the process mid-write).
const STATE_WRITE_DELAY_ENV: &str = "FAKE_APISERVER_STATE_WRITE_DELAY_MS";

/// Writes the server's state to `path` atomically ([`state::write_atomically`]): a crash or a
/// second signal at any moment leaves the old file or the new one.
fn save_state(server: &FakeApiServer, path: &Path) -> Result<(), RunError> {
    let state = server.export_state();
    let text = serde_json::to_vec_pretty(&state).unwrap_or_default();
    tracing::info!(path = %path.display(), bytes = text.len(), "writing state");
    let delay = std::env::var(STATE_WRITE_DELAY_ENV)
        .ok()
        .and_then(|ms| ms.parse::<u64>().ok())
        .map(Duration::from_millis);
    state::write_atomically(path, &text, |_| {
        if let Some(delay) = delay {
            std::thread::sleep(delay);
        }
    })
    .map_err(|source| RunError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    tracing::info!(path = %path.display(), revision = server.revision(), "state saved");
    Ok(())
}

/// Writes `contents` to `path` atomically.
fn write_file(path: &Path, contents: &[u8]) -> Result<(), RunError> {
    state::write_atomically(path, contents, |_| {}).map_err(|source| RunError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Resolves on the first signal; a second one ends the process at once, without saving: the
/// state file keeps its old content (a save in progress has only written its temporary file,
/// which is removed).
fn shutdown_then_exit_on_second_signal(
    state: Option<PathBuf>,
) -> impl Future<Output = ()> + Send + 'static {
    let mut signals = Signals::install();
    async move {
        signals.next().await;
        tokio::spawn(async move {
            signals.next().await;
            if let Some(path) = &state {
                let _ = std::fs::remove_file(state::temporary_path(path));
            }
            tracing::error!("second signal: exiting now without saving the state");
            std::process::exit(1);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn args(dir: &Path) -> Args {
        Args::parse_from([
            "fake-apiserver",
            "--listen",
            "127.0.0.1:0",
            "--kubeconfig-out",
            dir.join("kubeconfig").to_str().unwrap(),
            "--state",
            dir.join("state.json").to_str().unwrap(),
        ])
    }

    /// What [`start`] returns: the address, the stop trigger and the task.
    type Started = (
        SocketAddr,
        oneshot::Sender<()>,
        tokio::task::JoinHandle<Result<(), RunError>>,
    );

    /// Starts `run` in the background on its own `--listen` address.
    async fn start(args: Args, server: FakeApiServer) -> Started {
        let listener = bind(&args.listen).unwrap();
        start_on(args, listener, server).await
    }

    /// Starts `run` in the background on `listener`; returns once it serves.
    async fn start_on(
        args: Args,
        listener: std::net::TcpListener,
        server: FakeApiServer,
    ) -> Started {
        let (stop, stopped) = oneshot::channel::<()>();
        let (ready_tx, ready_rx) = oneshot::channel();
        let task = tokio::spawn(run(
            args,
            listener,
            server,
            async {
                let _ = stopped.await;
            },
            move |address| {
                let _ = ready_tx.send(address);
            },
        ));
        let address = ready_rx.await.expect("server did not become ready");
        (address, stop, task)
    }

    /// A raw HTTP/1.1 GET, returning the whole response text.
    async fn http_get(address: SocketAddr, path: &str) -> String {
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response
    }

    #[test]
    fn flags_have_safe_defaults() {
        let args = Args::parse_from(["fake-apiserver"]);
        assert_eq!(args.listen, "127.0.0.1:6443");
        assert_eq!(args.log_format, LogFormat::Text);
        assert!(args.state.is_none() && args.load.is_none() && args.kubeconfig_out.is_none());
        let args = Args::parse_from(["fake-apiserver", "--log-format", "json"]);
        assert_eq!(args.log_format, LogFormat::Json);
        assert!(Args::try_parse_from(["fake-apiserver", "--log-format", "xml"]).is_err());
    }

    #[tokio::test]
    async fn a_fault_rate_fails_requests_and_none_fails_none() {
        let all = Args::parse_from(["fake-apiserver", "--fault-rate", "1000"]);
        let server = server_from(&all).unwrap();
        let (address, stop, task) = start(all, server.clone()).await;
        for _ in 0..5 {
            let response = http_get(address, "/api/v1/namespaces").await;
            assert!(
                response.starts_with("HTTP/1.1 429") || response.starts_with("HTTP/1.1 500"),
                "{response}"
            );
        }
        assert_eq!(server.chaos().counts().failed, 5);
        stop.send(()).unwrap();
        task.await.unwrap().unwrap();

        let none = Args::parse_from(["fake-apiserver"]);
        let server = server_from(&none).unwrap();
        let (address, stop, task) = start(none, server).await;
        let response = http_get(address, "/api/v1/namespaces").await;
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        stop.send(()).unwrap();
        task.await.unwrap().unwrap();
        assert!(Args::try_parse_from(["fake-apiserver", "--fault-rate", "1001"]).is_err());
    }

    #[tokio::test]
    async fn serves_on_a_free_port_loads_manifests_and_saves_state_on_shutdown() {
        let dir = tempfile::tempdir().unwrap();
        let manifests = dir.path().join("manifests");
        std::fs::create_dir(&manifests).unwrap();
        std::fs::write(
            manifests.join("objects.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: loaded, namespace: team}\ndata: {a: '1'}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n",
        )
        .unwrap();
        // The custom resource sorts before its CRD; loading applies the CRD first.
        std::fs::write(
            manifests.join("a-widget.yaml"),
            "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: team}\nspec: {size: 3}\n",
        )
        .unwrap();
        std::fs::write(
            manifests.join("z-crd.json"),
            json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "widgets.example.com"},
                "spec": {
                    "group": "example.com",
                    "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                    "versions": [{
                        "name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
                    }]
                }
            })
            .to_string(),
        )
        .unwrap();
        let mut flags = args(dir.path());
        flags.load = Some(manifests);

        let server = FakeApiServer::new();
        let (address, stop, task) = start(flags.clone(), server.clone()).await;
        assert!(address.ip().is_loopback());
        assert_ne!(address.port(), 0);

        // The kubeconfig points at the bound address.
        let kubeconfig = std::fs::read_to_string(dir.path().join("kubeconfig")).unwrap();
        assert!(
            kubeconfig.contains(&format!("http://{address}")),
            "{kubeconfig}"
        );
        // The manifests were applied (the Namespace before the ConfigMap in it).
        let loaded = server
            .get_object("v1", "configmaps", Some("team"), "loaded")
            .expect("manifest not applied");
        assert_eq!(loaded["data"], json!({"a": "1"}));
        let widget = server
            .get_object("example.com/v1", "widgets", Some("team"), "w1")
            .expect("custom resource not applied");
        assert_eq!(widget["spec"], json!({"size": 3}));
        // It answers HTTP.
        let response = http_get(address, "/version").await;
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        assert!(response.contains("\"gitVersion\""), "{response}");

        stop.send(()).unwrap();
        task.await.unwrap().unwrap();
        let saved: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("state.json")).unwrap()).unwrap();
        assert!(saved["objects"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["object"]["metadata"]["name"] == "loaded"));

        // A second start from the saved state has the object without --load.
        let restarted = FakeApiServer::new();
        let (_, stop, task) = start(args(dir.path()), restarted.clone()).await;
        assert!(restarted
            .get_object("v1", "configmaps", Some("team"), "loaded")
            .is_some());
        // The saved CRD is served again, with its objects.
        assert!(restarted
            .get_object("example.com/v1", "widgets", Some("team"), "w1")
            .is_some());
        assert!(restarted.resources().iter().any(|r| r.plural == "widgets"));
        stop.send(()).unwrap();
        task.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn bad_inputs_are_reported_not_panicked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("state.json"), "{not json").unwrap();
        let never = std::future::pending::<()>();
        let flags = args(dir.path());
        let listener = bind(&flags.listen).unwrap();
        let error = run(flags, listener, FakeApiServer::new(), never, |_| {})
            .await
            .unwrap_err();
        assert!(matches!(error, RunError::State { .. }), "{error}");

        let mut flags = args(dir.path());
        flags.state = None;
        flags.load = Some(dir.path().join("missing"));
        let listener = bind(&flags.listen).unwrap();
        let error = run(
            flags,
            listener,
            FakeApiServer::new(),
            std::future::pending(),
            |_| {},
        )
        .await
        .unwrap_err();
        assert!(matches!(error, RunError::Manifest(_)), "{error}");

        let mut flags = args(dir.path());
        flags.state = None;
        flags.listen = "not an address".into();
        let error = bind(&flags.listen).unwrap_err();
        assert!(matches!(error, RunError::Listen { .. }), "{error}");
    }

    /// `--admission-control-config-file` configures the `PodSecurity` plugin; a file that does
    /// not validate stops the start with the reason; the default-on plugins are accepted by
    /// `--enable-admission-plugins`, unknown ones refused.
    #[tokio::test]
    async fn the_admission_configuration_file_configures_pod_security() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("admission.yaml");
        std::fs::write(
            &file,
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n    kind: PodSecurityConfiguration\n    defaults:\n      enforce: baseline\n",
        )
        .unwrap();
        let flags = Args::parse_from([
            "fake-apiserver",
            "--admission-control-config-file",
            file.to_str().unwrap(),
            "--enable-admission-plugins",
            "PodSecurity,LimitRanger",
        ]);
        let server = server_from(&flags).unwrap();
        let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
            kube::Api::namespaced(server.client(), "default");
        let pod = serde_json::from_value(json!({"metadata": {"name": "host"},
            "spec": {"hostPID": true, "containers": [{"name": "app", "image": "nginx"}]}}))
        .unwrap();
        let error = pods
            .create(&Default::default(), &pod)
            .await
            .expect_err("refused by the configured baseline default");
        assert!(
            error.to_string().contains(
                "violates PodSecurity \"baseline:latest\": host namespaces (hostPID=true)"
            ),
            "{error}"
        );

        std::fs::write(
            &file,
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n    kind: PodSecurityConfiguration\n    defaults:\n      enforce: strict\n",
        )
        .unwrap();
        let Err(error) = server_from(&flags) else {
            panic!("an invalid configuration started a server");
        };
        assert!(
            error
                .to_string()
                .contains("defaults.enforce: Invalid value: \"strict\""),
            "{error}"
        );
        let unknown = Args::parse_from([
            "fake-apiserver",
            "--enable-admission-plugins",
            "AlwaysPullImages",
        ]);
        assert!(matches!(
            server_from(&unknown),
            Err(RunError::AdmissionPlugin(_))
        ));
    }

    /// A client that connects after the port is bound but before the server is built is not
    /// refused: its request waits and is answered once the server serves.
    #[tokio::test]
    async fn a_client_connecting_during_start_up_is_answered_once_serving() {
        let flags = Args::parse_from(["fake-apiserver", "--listen", "127.0.0.1:0"]);
        let listener = bind(&flags.listen).unwrap();
        let address = listener.local_addr().unwrap();
        let early = tokio::spawn(http_get(address, "/readyz"));
        // Nothing serves yet: the request is still waiting.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!early.is_finished(), "answered before anything served");
        let server = server_from(&flags).unwrap();
        let (_, stop, task) = start_on(flags, listener, server).await;
        let response = early.await.unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        stop.send(()).unwrap();
        task.await.unwrap().unwrap();
    }
}
