//! When to stop: the signals a service manager and a terminal send.
//!
//! [`A2aServer::serve`](crate::A2aServer::serve) stops when the future it
//! is given resolves: it stops accepting, tells running tasks to stop and
//! gives them a grace period to reach a final state, ends open streams
//! with their last event, and stops the push worker after the final
//! notifications are queued. [`shutdown_signal`] is the future a program
//! usually wants there: Ctrl-C (SIGINT) or SIGTERM, which is what
//! `docker stop`, Kubernetes and systemd send before they kill. Without
//! SIGTERM handled, the process dies at once on it: streams are cut and
//! runs are lost (failed at the next start, see
//! `RequestHandlerBuilder::recover_abandoned`).

/// Resolves on Ctrl-C (SIGINT) or, on Unix, SIGTERM.
///
/// ```no_run
/// # async fn run(server: switchboard_server::A2aServer) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:9090").await?;
/// server.serve(listener, switchboard_server::shutdown_signal()).await
/// # }
/// ```
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "SIGTERM cannot be handled; stopping on Ctrl-C only");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
