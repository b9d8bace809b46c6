//! An agent whose tasks outlive the process: served by `switchboard-sdk`
//! alone (feature `sqlite`), on a SQLite file.
//!
//! Run with `cargo run -p durable-agent -- sqlite://tasks.db 127.0.0.1:9090`,
//! then `cargo run -p switchboard -- send --url http://127.0.0.1:9090 "sleep 60000"`.
//!
//! A message `sleep MS` keeps its task working for MS milliseconds (or
//! until it is cancelled); anything else is answered at once. Kill the
//! process while a task sleeps and start it again on the same file: the
//! task is failed, with a status message saying its run was lost, before
//! the server takes its first request. Nothing here asks for that; a
//! durable store's handler does it by itself
//! (`RequestHandlerBuilder::recover_abandoned`).
//!
//! Stopped with SIGTERM or Ctrl-C instead, it drains: running tasks are
//! told to stop (this agent then returns, and its task is failed as cut
//! short by the shutdown), their streams end with that final event, and
//! the process exits 0.

use std::time::Duration;

use switchboard_sdk::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let store_url = args.next().unwrap_or_else(|| "sqlite://tasks.db".into());
    let listen = args.next().unwrap_or_else(|| "127.0.0.1:9090".into());

    let agent = agent_fn(|ctx, events| async move {
        let text = ctx.text();
        let Some(ms) = text.trim().strip_prefix("sleep ") else {
            events.reply_text(format!("you said: {text}")).await?;
            return Ok(());
        };
        let ms: u64 = ms.trim().parse()?;
        events.working(format!("sleeping {ms} ms")).await?;
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
            _ = events.cancelled() => return Ok(()),
        }
        events
            .artifact_text("slept", format!("slept {ms} ms"))
            .await?;
        Ok(())
    });
    let card = AgentCard::new("durable", "Sleeps on request; its tasks survive", "1.0")
        .with_streaming(true);

    let store = SqliteStore::open(&store_url).await?;
    let handler = RequestHandler::builder(agent, card).store(store).build();
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    let url = format!("http://{}", listener.local_addr()?);
    // The first line on stdout, for whoever started us.
    println!("durable-agent listening on {url}");
    A2aServer::new(handler)
        .public_url(url)
        // SIGTERM or Ctrl-C: no new connections, running tasks told to stop
        // and given time to finish, open streams ended with their last
        // event; then `serve` returns and the process exits 0.
        .serve(listener, shutdown_signal())
        .await?;
    Ok(())
}
