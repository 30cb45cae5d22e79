//! Binding the server's TCP listener with the accept queue a real API server gets.
//!
//! Go's `net.Listen` (which kube-apiserver uses) asks the kernel for the largest accept queue
//! the host allows: `net.core.somaxconn`. tokio's `TcpListener::bind` asks for 1024. A burst of
//! connections larger than that — a controller's informers starting at once against a server
//! with thousands of objects, a load test — then sees dropped SYNs and one-second retransmits
//! against the fake that the real server would not cause.

use std::io;
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpSocket};

/// The accept queue asked for when the host's limit cannot be read: Linux's default
/// `somaxconn` since 5.4.
const FALLBACK_BACKLOG: u32 = 4096;

/// Binds `address` (`host:port`; a name is resolved, and its addresses are tried in order) with
/// the host's largest accept queue, as Go's `net.Listen` does.
pub async fn bind(address: &str) -> io::Result<TcpListener> {
    let backlog = host_backlog();
    let mut last_error = None;
    for addr in tokio::net::lookup_host(address).await? {
        match bind_one(addr, backlog) {
            Ok(listener) => return Ok(listener),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{address} resolves to no address"),
        )
    }))
}

/// Binds one address with an accept queue of `backlog` (address reuse on, as Go and tokio set
/// it, so that a restart does not wait for the old connections' TIME_WAIT).
fn bind_one(addr: SocketAddr, backlog: u32) -> io::Result<TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(backlog)
}

/// The host's largest accept queue (`/proc/sys/net/core/somaxconn`), as Go's
/// `maxListenerBacklog` reads it; [`FALLBACK_BACKLOG`] where it cannot be read.
fn host_backlog() -> u32 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .filter(|&n| n > 0)
        .map_or(FALLBACK_BACKLOG, |n| n.min(i32::MAX as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// More connections than tokio's default queue (1024) all complete their handshake while
    /// nothing accepts them: the queue is the host's. (On a host whose `somaxconn` is at most
    /// 1024 the test has nothing to show and says so.)
    #[tokio::test]
    async fn the_accept_queue_is_the_hosts() {
        let backlog = host_backlog();
        if backlog <= 1100 {
            eprintln!("somaxconn is {backlog}: no larger queue to show");
            return;
        }
        let listener = bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut held = Vec::new();
        for i in 0..1100 {
            // A SYN dropped for a full queue is retried after a second: the connect would
            // not finish within the timeout.
            let connect = tokio::net::TcpStream::connect(addr);
            let stream = tokio::time::timeout(std::time::Duration::from_millis(500), connect)
                .await
                .unwrap_or_else(|_| panic!("connection {i} was not queued"))
                .unwrap();
            held.push(stream);
        }
        drop(listener);
    }

    #[tokio::test]
    async fn a_name_is_resolved_and_a_bad_address_refused() {
        let listener = bind("localhost:0").await.unwrap();
        assert!(listener.local_addr().unwrap().ip().is_loopback());
        assert!(bind("not an address").await.is_err());
    }
}
