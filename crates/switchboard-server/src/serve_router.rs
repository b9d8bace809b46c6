//! Serving any axum [`Router`] with the connection protection the A2A
//! bindings get.
//!
//! [`A2aServer::serve`](crate::A2aServer::serve) runs its bindings on this
//! crate's own connection code (`conn.rs`), which holds every client to the
//! [`ConnectionLimits`]: a request head must arrive within the header read
//! timeout (a slowloris client that sends half a head is closed), idle
//! connections are closed, bodies must keep a minimum rate, and one address
//! may hold only so many connections. A process that serves routes of its
//! own — `switchboard bridge` serving the AG-UI endpoint in front of a remote
//! agent — faces the same hostile callers, so [`serve_router`] puts any
//! router on that code, with the same limits and the same peer address in
//! each request's extensions (`axum::extract::ConnectInfo<SocketAddr>`).
//!
//! Shutdown: once `shutdown` resolves no connection is accepted, idle ones
//! are closed, and requests in flight may finish for up to
//! [`SHUTDOWN_GRACE`]; a stream still open then is cut, so a long AG-UI run
//! cannot hold the process up.
//!
//! [`Front`] is the whole life of such a process's port: bound first (what
//! the router lets in may depend on the address it got: anonymous callers
//! only on loopback, say), then served until Ctrl-C or SIGTERM
//! ([`shutdown_signal`](crate::shutdown_signal)) and drained as above. The
//! bridge, the console and the MCP endpoint in front of remote agents are
//! served this way.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use tokio_util::sync::CancellationToken;

use crate::ConnectionLimits;

/// How long requests in flight may run on after shutdown is asked for.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serves `router` on `listener` under `limits` until `shutdown` resolves
/// (see the module docs). Plain HTTP/1.1 and HTTP/2 (prior knowledge) on
/// the one port; put TLS in front of it when it leaves loopback.
pub async fn serve_router(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let stop = CancellationToken::new();
    let stopping = stop.clone();
    tokio::spawn(async move {
        shutdown.await;
        stopping.cancel();
    });
    let grace = async {
        stop.cancelled().await;
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };
    tokio::select! {
        served = crate::conn::serve(listener, router, limits, crate::conn::Wire::default(), None, stop.clone()) => served,
        () = grace => {
            tracing::warn!(
                grace = ?SHUTDOWN_GRACE,
                "requests still running after the shutdown grace period: cut"
            );
            Ok(())
        }
    }
}

/// A port a router is served on by itself, until Ctrl-C or SIGTERM (see the
/// module docs).
#[derive(Debug)]
pub struct Front {
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
}

impl Front {
    /// Binds `addr` (`host:port`; port 0 picks a free one). Plain HTTP
    /// beyond loopback is logged as a warning: TLS belongs in front of it.
    pub async fn bind(addr: &str) -> std::io::Result<Front> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        if !addr.ip().is_loopback() {
            tracing::warn!(
                %addr,
                "serving plaintext HTTP on a non-loopback address: terminate TLS in front of it"
            );
        }
        Ok(Front { listener, addr })
    }

    /// The address bound (the port picked, for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves `router` under `limits` until Ctrl-C or SIGTERM, then lets
    /// requests in flight finish for up to [`SHUTDOWN_GRACE`].
    pub async fn serve(self, router: Router, limits: ConnectionLimits) -> std::io::Result<()> {
        serve_router(self.listener, router, limits, crate::shutdown_signal()).await?;
        tracing::info!("stopped");
        Ok(())
    }
}
