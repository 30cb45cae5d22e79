//! Binding the server's TCP listener with the accept queue a real API server gets.
//!
//! Go's `net.Listen` (which kube-apiserver uses) asks the kernel for the largest accept queue
//! the host allows: `net.core.somaxconn`. tokio's `TcpListener::bind` asks for 1024. A burst of
//! connections larger than that — a controller's informers starting at once against a server
//! with thousands of objects, a load test — then sees dropped SYNs and one-second retransmits
//! against the fake that the real server would not cause.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};

use socket2::{Domain, Protocol, Socket, Type};
use tokio::net::TcpListener;

/// The accept queue asked for when the host's limit cannot be read: Linux's default
/// `somaxconn` since 5.4.
const FALLBACK_BACKLOG: u32 = 4096;

/// Binds `address` (`host:port`; a name is resolved, and its addresses are tried in order) with
/// the host's largest accept queue, as Go's `net.Listen` does.
pub async fn bind(address: &str) -> io::Result<TcpListener> {
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host(address).await?.collect();
    TcpListener::from_std(bind_first(address, addresses)?)
}

/// [`bind`] without a runtime (the name is resolved by the system resolver, blocking): a
/// non-blocking std listener, for [`TcpListener::from_std`] once a runtime runs.
///
/// The `fake-apiserver` binary binds this way first thing, before it builds its runtime and
/// server: a client that connects while the server starts is queued by the kernel and answered
/// once the server serves, instead of being refused and left to retry.
pub fn bind_std(address: &str) -> io::Result<std::net::TcpListener> {
    bind_first(address, address.to_socket_addrs()?.collect())
}

/// Binds the first of `addresses` that can be bound (`address` names them in errors).
fn bind_first(address: &str, addresses: Vec<SocketAddr>) -> io::Result<std::net::TcpListener> {
    let backlog = host_backlog();
    let mut last_error = None;
    for addr in addresses {
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
/// it, so that a restart does not wait for the old connections' TIME_WAIT), non-blocking.
fn bind_one(addr: SocketAddr, backlog: u32) -> io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(i32::try_from(backlog).unwrap_or(i32::MAX))?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
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
        let listener = bind_std("localhost:0").unwrap();
        assert!(listener.local_addr().unwrap().ip().is_loopback());
        assert!(bind_std("not an address").is_err());
    }

    /// A connection made to a listener bound without a runtime is queued, and served once the
    /// listener is handed to one.
    #[test]
    fn a_std_bound_listener_queues_connections_until_served() {
        use std::io::{Read, Write};
        let listener = bind_std("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut client = std::net::TcpStream::connect(addr).unwrap();
        client.write_all(b"ping").unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let listener = TcpListener::from_std(listener).unwrap();
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut got = [0u8; 4];
            stream.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"ping");
            stream.write_all(b"pong").await.unwrap();
        });
        let mut answer = [0u8; 4];
        client.read_exact(&mut answer).unwrap();
        assert_eq!(&answer, b"pong");
    }
}
