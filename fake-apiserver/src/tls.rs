//! HTTPS serving. `kubectl` (client-go's kubeconfig loader) sends a kubeconfig's credentials —
//! bearer tokens, impersonation — only to a server it reaches over TLS, so a server with
//! authentication on is useful to kubectl only over HTTPS. The certificate and key come from PEM
//! files, as the real `--tls-cert-file` and `--tls-private-key-file` give them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

use crate::FakeApiServer;

/// How long a client may take over its TLS handshake before it is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the TLS configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file could not be read or held no certificate or key.
    #[error("reading {path}: {message}", path = path.display())]
    Pem {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// rustls refused the certificate and key.
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
}

/// A server certificate chain and its key, ready to serve.
#[derive(Clone)]
pub struct TlsConfig(Arc<rustls::ServerConfig>);

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsConfig")
    }
}

impl TlsConfig {
    /// Reads the certificate chain (PEM, leaf first) and the private key (PEM: PKCS#8, PKCS#1
    /// or SEC1).
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<Self, TlsError> {
        let pem_error = |path: &Path, message: String| TlsError::Pem {
            path: path.to_path_buf(),
            message,
        };
        let chain = CertificateDer::pem_file_iter(cert)
            .map_err(|e| pem_error(cert, e.to_string()))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| pem_error(cert, e.to_string()))?;
        if chain.is_empty() {
            return Err(pem_error(cert, "no certificate found".into()));
        }
        let key_der =
            PrivateKeyDer::from_pem_file(key).map_err(|e| pem_error(key, e.to_string()))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, key_der)?;
        // HTTP/1.1 only: the router is served by hyper's HTTP/1 connections.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Self(Arc::new(config)))
    }
}

/// A listener handing out TLS connections: each accepted TCP connection is served once its
/// handshake completes (a failed or stalled handshake drops that connection only).
struct TlsListener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (tcp, address) = match self.tcp.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::debug!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            // Answers go out at once, as from a real API server (see `FakeApiServer::serve`).
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(error = %e, "cannot set TCP_NODELAY");
            }
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, self.acceptor.accept(tcp)).await {
                Ok(Ok(tls)) => return (tls, address),
                Ok(Err(e)) => tracing::debug!(error = %e, %address, "TLS handshake failed"),
                Err(_) => tracing::debug!(%address, "TLS handshake timed out"),
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

impl FakeApiServer {
    /// Serves HTTPS on `listener` with `tls` until `shutdown` resolves.
    pub async fn serve_tls(
        self,
        listener: TcpListener,
        tls: TlsConfig,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        serve_router_tls(self.router(), listener, tls, shutdown).await
    }
}

/// Serves any axum router over HTTPS on `listener` until `shutdown` resolves (e.g. an admission
/// webhook in a test).
pub async fn serve_router_tls(
    router: axum::Router,
    listener: TcpListener,
    tls: TlsConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = TlsListener {
        tcp: listener,
        acceptor: TlsAcceptor::from(tls.0),
    };
    // Routes made eager once, then a clone (a reference count) per connection, as
    // `FakeApiServer::serve` does.
    axum::serve(listener, router.with_state(()).into_make_service())
        .with_graceful_shutdown(shutdown)
        .await
}

/// Makes a self-signed certificate for `127.0.0.1` and `localhost` (one day, P-256) with the
/// `openssl` command in `dir`, for `--tls-cert-file` / [`TlsConfig::from_pem_files`] in tests and
/// local runs; returns the certificate and key files. An error carries openssl's own message.
pub fn self_signed_loopback_certificate(dir: &Path) -> std::io::Result<(PathBuf, PathBuf)> {
    self_signed_certificate(dir, &[])
}

/// [`self_signed_loopback_certificate`], also valid for the DNS names in `extra_names` (e.g. a
/// webhook service's `NAME.NAMESPACE.svc`).
pub fn self_signed_certificate(
    dir: &Path,
    extra_names: &[&str],
) -> std::io::Result<(PathBuf, PathBuf)> {
    let (cert, key) = (dir.join("server.crt"), dir.join("server.key"));
    let mut names = String::from("subjectAltName=IP:127.0.0.1,DNS:localhost");
    for name in extra_names {
        names.push_str(",DNS:");
        names.push_str(name);
    }
    let output = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=fake-apiserver",
            "-addext",
        ])
        .arg(&names)
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdin(std::process::Stdio::null())
        .output()?;
    if !output.status.success() {
        return Err(std::io::Error::other(format!(
            "openssl failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    Ok((cert, key))
}
