//! The fake API server as the controllers see it in the scale bench: served over loopback, with
//! every request counted and timed per verb and resource (axum middleware in front of the
//! server's own router). The bench's own setup and progress checks go in-process and are not
//! counted.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{Method, Uri};
use axum::middleware::Next;
use axum::response::Response;
use fake_apiserver::FakeApiServer;

/// Requests of one verb and resource.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    /// How many.
    pub count: u64,
    /// How many were answered with an error (not 2xx), e.g. 409 conflicts.
    pub errors: u64,
    /// Server time, request in to response head out (for a watch: until the stream opens).
    pub time: Duration,
}

/// Request tallies keyed `verb resource[/subresource]`.
#[derive(Debug, Clone, Default)]
pub struct Counts(Arc<Mutex<BTreeMap<String, Tally>>>);

impl Counts {
    fn record(&self, key: String, time: Duration, error: bool) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let tally = map.entry(key).or_default();
        tally.count += 1;
        tally.errors += u64::from(error);
        tally.time += time;
    }

    /// A copy of the tallies so far.
    pub fn snapshot(&self) -> BTreeMap<String, Tally> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// `after − before`, per key (keys with no new requests left out).
pub fn diff(
    after: &BTreeMap<String, Tally>,
    before: &BTreeMap<String, Tally>,
) -> BTreeMap<String, Tally> {
    after
        .iter()
        .filter_map(|(key, a)| {
            let b = before.get(key).copied().unwrap_or_default();
            let count = a.count - b.count;
            (count > 0).then(|| {
                (
                    key.clone(),
                    Tally {
                        count,
                        errors: a.errors - b.errors,
                        time: a.time.saturating_sub(b.time),
                    },
                )
            })
        })
        .collect()
}

/// The Kubernetes verb and resource of a request, from its method and path.
pub fn classify(method: &Method, uri: &Uri) -> String {
    let parts: Vec<&str> = uri.path().split('/').filter(|p| !p.is_empty()).collect();
    let rest: &[&str] = match parts.as_slice() {
        ["api", _version, rest @ ..] => rest,
        ["apis", _group, _version, rest @ ..] => rest,
        _ => return format!("{} {}", method.as_str().to_lowercase(), uri.path()),
    };
    let (resource, name, sub) = match rest {
        ["namespaces", _ns, resource, tail @ ..] => (*resource, tail.first(), tail.get(1)),
        [resource, tail @ ..] => (*resource, tail.first(), tail.get(1)),
        [] => ("", None, None),
    };
    let watch = uri
        .query()
        .is_some_and(|q| q.split('&').any(|kv| kv == "watch=true" || kv == "watch=1"));
    let verb = match (method.as_str(), name.is_some()) {
        ("GET", _) if watch => "watch",
        ("GET", true) => "get",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        (other, _) => other,
    };
    match sub {
        Some(sub) => format!("{verb} {resource}/{sub}"),
        None => format!("{verb} {resource}"),
    }
}

async fn count(State(counts): State<Counts>, request: Request, next: Next) -> Response {
    let key = classify(request.method(), request.uri());
    let started = Instant::now();
    let response = next.run(request).await;
    counts.record(key, started.elapsed(), !response.status().is_success());
    response
}

/// Serve `server` on 127.0.0.1 (a free port), counting every request in `counts`, until
/// `shutdown`; returns the URL.
pub async fn serve(
    server: &FakeApiServer,
    counts: Counts,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<String> {
    use axum::serve::ListenerExt;
    // As Go's `net.Listen` (the real API server's): an accept queue of `somaxconn`, not
    // tokio's 1024; HTTP/1.1 clients open a connection per concurrent request.
    let backlog = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(4096);
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))?;
    let listener = socket.listen(backlog)?;
    let url = format!("http://{}", listener.local_addr()?);
    // As `FakeApiServer::serve` does: answers go out at once (TCP_NODELAY).
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let router = server
        .router()
        .layer(axum::middleware::from_fn_with_state(counts, count));
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router)
            .with_graceful_shutdown(shutdown)
            .await
        {
            eprintln!("# serving the fake API server failed: {e}");
        }
    });
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_paths() {
        let c = |m: Method, p: &str| classify(&m, &p.parse().unwrap());
        assert_eq!(c(Method::GET, "/api/v1/namespaces/a/pods/x"), "get pods");
        assert_eq!(
            c(Method::GET, "/api/v1/namespaces/a/pods?labelSelector=x"),
            "list pods"
        );
        assert_eq!(c(Method::GET, "/api/v1/pods?watch=true&x=1"), "watch pods");
        assert_eq!(
            c(
                Method::PUT,
                "/apis/eno.azure.io/v1/namespaces/a/compositions/c/status"
            ),
            "update compositions/status"
        );
        assert_eq!(
            c(Method::POST, "/api/v1/namespaces/a/pods/x/binding"),
            "create pods/binding"
        );
        assert_eq!(c(Method::DELETE, "/api/v1/nodes/n"), "delete nodes");
        assert_eq!(c(Method::GET, "/api/v1/namespaces/a"), "get namespaces");
    }
}
