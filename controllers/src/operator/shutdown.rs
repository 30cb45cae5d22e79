//! Shutdown signals as cloneable futures, so one signal can stop several tasks.

use futures::future::{BoxFuture, FutureExt, Shared};

/// A future that completes once, when the process should shut down; clone it freely.
pub type Shutdown = Shared<BoxFuture<'static, ()>>;

/// Completes on SIGTERM or SIGINT (Ctrl-C).
pub fn signal() -> Shutdown {
    on(async {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            match signal(SignalKind::terminate()) {
                Ok(mut term) => {
                    tokio::select! {
                        _ = term.recv() => tracing::info!("received SIGTERM, shutting down"),
                        _ = tokio::signal::ctrl_c() => tracing::info!("received SIGINT, shutting down"),
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for SIGTERM; only SIGINT stops the process");
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    })
}

/// A shutdown signal that completes when `future` does.
pub fn on(future: impl std::future::Future<Output = ()> + Send + 'static) -> Shutdown {
    future.boxed().shared()
}

/// A shutdown signal that never completes.
pub fn never() -> Shutdown {
    on(futures::future::pending())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_clone_sees_the_signal() {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let shutdown = on(async move {
            let _ = rx.await;
        });
        let (a, b) = (shutdown.clone(), shutdown.clone());
        tx.send(()).unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(1), async {
            a.await;
            b.await
        })
        .await
        .unwrap();
    }
}
