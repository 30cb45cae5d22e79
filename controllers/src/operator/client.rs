//! Building a [`kube::Client`] for a real cluster.
//!
//! kube's own `Client::try_from(Config)` stacks its layers on a hyper client whose connection
//! pool keeps every idle HTTP/1.1 connection it ever opened: after a burst of concurrent
//! requests (1000 lifecycle reconciles at once) the controller holds thousands of sockets and
//! ~30 KiB of buffers each until they time out. client-go bounds the pool: its TLS transport
//! keeps at most `idleConnsPerHost = 25` idle connections per host
//! (`k8s.io/client-go/transport/cache.go`) and closes them after Go's default 90 s
//! (`utilnet.SetTransportDefaults`). [`client_from_config`] builds the same stack as kube from
//! kube's own pieces ([`ConfigExt`]: TLS connector, base URI, auth, extra headers; its retry
//! policy; its timeouts) on a hyper client whose pool is bounded like client-go's.

use std::path::Path;
use std::time::Duration;

use hyper_timeout::TimeoutConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::client::retry::RetryPolicy;
use kube::client::{Body, ConfigExt};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use tower::retry::RetryLayer;
use tower::{BoxError, ServiceBuilder};

/// Idle connections kept per host, as client-go's `idleConnsPerHost`.
pub const MAX_IDLE_CONNECTIONS_PER_HOST: usize = 25;

/// How long an idle connection is kept, as Go's `http.DefaultTransport.IdleConnTimeout`.
pub const IDLE_CONNECTION_TIMEOUT: Duration = Duration::from_secs(90);

/// Why no client could be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The kubeconfig file could not be read or parsed.
    #[error("reading kubeconfig {path}: {source}")]
    Kubeconfig {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// Neither a kubeconfig nor an in-cluster environment was found.
    #[error("inferring cluster configuration: {0}")]
    Infer(#[from] kube::config::InferConfigError),
    /// The configuration could not become a client (TLS, proxy…).
    #[error("building client: {0}")]
    Build(#[from] kube::Error),
}

/// A client from `kubeconfig` when given, else `$KUBECONFIG` / `~/.kube/config`, else the
/// in-cluster service account.
pub async fn client_from_env(kubeconfig: Option<&Path>) -> Result<Client, ClientError> {
    let config = match kubeconfig {
        Some(path) => {
            let kubeconfig =
                Kubeconfig::read_from(path).map_err(|source| ClientError::Kubeconfig {
                    path: path.display().to_string(),
                    source,
                })?;
            Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|source| ClientError::Kubeconfig {
                    path: path.display().to_string(),
                    source,
                })?
        }
        None => Config::infer().await?,
    };
    client_from_config(config)
}

/// A client for `config` as kube's `Client::try_from` builds it (TLS with the configured CA,
/// client certificate or insecure flag; token, basic, exec or auth-provider credentials; extra
/// headers; kube's retry of 429/503/504; the connect/read/write timeouts), whose connection
/// pool keeps at most [`MAX_IDLE_CONNECTIONS_PER_HOST`] idle connections for
/// [`IDLE_CONNECTION_TIMEOUT`].
///
/// Not kept from kube's stack: its `HTTP` debug span per request, and the expiry of an exec
/// plugin's client certificate (`Client::valid_until`, which kube only reports). A proxy URL
/// is left to kube's own builder, which refuses it: this crate enables no proxy feature.
pub fn client_from_config(config: Config) -> Result<Client, ClientError> {
    if config.proxy_url.is_some() {
        return Ok(Client::try_from(config)?);
    }
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    let mut connector = TimeoutConnector::new(config.rustls_https_connector_with_connector(http)?);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let hyper = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(MAX_IDLE_CONNECTIONS_PER_HOST)
        .pool_idle_timeout(IDLE_CONNECTION_TIMEOUT)
        .build::<_, Body>(connector);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(
            config
                .default_retry
                .then(|| RetryLayer::new(RetryPolicy::server_retry())),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .service(hyper);
    Ok(Client::new(service, config.default_namespace))
}

#[cfg(test)]
mod tests {
    use std::pin::Pin;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll};

    use axum::http;
    use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;

    /// A server connection that counts itself open until the server drops it.
    struct Counted {
        stream: TcpStream,
        open: Arc<AtomicUsize>,
    }

    impl Drop for Counted {
        fn drop(&mut self) {
            self.open.fetch_sub(1, Ordering::SeqCst);
        }
    }

    impl AsyncRead for Counted {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            Pin::new(&mut self.stream).poll_read(cx, buf)
        }
    }

    impl AsyncWrite for Counted {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            Pin::new(&mut self.stream).poll_write(cx, buf)
        }
        fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Pin::new(&mut self.stream).poll_flush(cx)
        }
        fn poll_shutdown(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<std::io::Result<()>> {
            Pin::new(&mut self.stream).poll_shutdown(cx)
        }
    }

    /// Accepts connections, counting the open ones in `open`.
    struct CountingListener {
        listener: TcpListener,
        open: Arc<AtomicUsize>,
    }

    impl axum::serve::Listener for CountingListener {
        type Io = Counted;
        type Addr = std::net::SocketAddr;

        async fn accept(&mut self) -> (Self::Io, Self::Addr) {
            loop {
                if let Ok((stream, address)) = self.listener.accept().await {
                    self.open.fetch_add(1, Ordering::SeqCst);
                    let open = self.open.clone();
                    return (Counted { stream, open }, address);
                }
            }
        }

        fn local_addr(&self) -> std::io::Result<Self::Addr> {
            self.listener.local_addr()
        }
    }

    /// A burst of concurrent requests opens one HTTP/1.1 connection each; once they are
    /// answered the client keeps client-go's 25 idle and closes the rest (kube's own pool
    /// would keep all of them).
    #[tokio::test]
    async fn keeps_at_most_client_gos_idle_connections_after_a_burst() {
        const BURST: usize = 60;
        let open = Arc::new(AtomicUsize::new(0));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        // Every request waits for all the others: the burst is truly concurrent.
        let barrier = Arc::new(tokio::sync::Barrier::new(BURST));
        let router = axum::Router::new().route(
            "/version",
            axum::routing::get(move || {
                let barrier = barrier.clone();
                async move {
                    barrier.wait().await;
                    "{}"
                }
            }),
        );
        let listener = CountingListener {
            listener,
            open: open.clone(),
        };
        tokio::spawn(async move { axum::serve(listener, router).await });

        let config = Config::new(format!("http://{address}").parse().expect("url"));
        let client = client_from_config(config).expect("client");
        let requests = (0..BURST).map(|_| {
            let client = client.clone();
            async move {
                let request = http::Request::get("/version")
                    .body(Vec::new())
                    .expect("request");
                client.request_text(request).await
            }
        });
        for answer in futures::future::join_all(requests).await {
            assert_eq!(answer.expect("answered"), "{}");
        }

        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while open.load(Ordering::SeqCst) > MAX_IDLE_CONNECTIONS_PER_HOST
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(open.load(Ordering::SeqCst), MAX_IDLE_CONNECTIONS_PER_HOST);
        // The kept ones stay open.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(open.load(Ordering::SeqCst), MAX_IDLE_CONNECTIONS_PER_HOST);
    }
}
