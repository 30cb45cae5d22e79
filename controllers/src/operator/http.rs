//! The operator's HTTP endpoints: `/healthz`, `/readyz` and `/metrics`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use prometheus_client::registry::Registry;

/// A flag the controllers set once their caches are synced (and, with leader election, once
/// they lead); `/readyz` reports it.
#[derive(Debug, Clone, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// Not ready yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// Mark ready (or not).
    pub fn set(&self, ready: bool) {
        self.0.store(ready, Ordering::SeqCst);
    }
    /// Whether ready.
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

#[derive(Clone)]
struct AppState {
    registry: Arc<Registry>,
    readiness: Readiness,
}

/// The router serving the three endpoints.
pub fn router(registry: Arc<Registry>, readiness: Readiness) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(AppState {
            registry,
            readiness,
        })
}

/// Serve the endpoints on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    registry: Arc<Registry>,
    readiness: Readiness,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(registry, readiness))
        .with_graceful_shutdown(shutdown)
        .await
}

async fn readyz(State(state): State<AppState>) -> Response {
    if state.readiness.is_ready() {
        (StatusCode::OK, "ok").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready").into_response()
    }
}

async fn metrics(State(state): State<AppState>) -> Response {
    let mut body = String::new();
    match prometheus_client::encoding::text::encode(&mut body, &state.registry) {
        Ok(()) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            body,
        )
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::metrics::counter::Counter;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get(addr: std::net::SocketAddr, path: &str) -> String {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response
    }

    #[tokio::test]
    async fn serves_health_readiness_and_metrics() {
        let mut registry = Registry::default();
        let counter = Counter::<u64>::default();
        registry.register("demo_things", "Things", counter.clone());
        counter.inc();
        let readiness = Readiness::new();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(
            listener,
            Arc::new(registry),
            readiness.clone(),
            async {
                let _ = stopped.await;
            },
        ));

        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.1 200"));
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 503"));
        readiness.set(true);
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 200"));
        let metrics = get(addr, "/metrics").await;
        assert!(metrics.contains("demo_things_total 1"), "{metrics}");

        stop.send(()).unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(5), server)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
    }
}
