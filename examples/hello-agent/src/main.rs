//! The smallest useful agent: greets you, streaming the greeting word by word.
//!
//! Run with `cargo run -p hello-agent`, then talk to it:
//! `cargo run -p switchboard -- stream --url http://127.0.0.1:9090 "Ada"`.

use switchboard_sdk::prelude::*;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    // 1. The agent: one async closure. Its first emission creates a task.
    let agent = agent_fn(|ctx, events| async move {
        events.working("thinking of a greeting").await?;
        let mut reply = events.artifact_writer("greeting");
        reply.append(Part::text("Hello, ")).await?;
        reply
            .finish(Part::text(format!("{}!", ctx.text().trim())))
            .await?;
        Ok(()) // returning Ok completes the task
    });

    // 2. Its card: who it is and what it can do.
    let card = AgentCard::new("hello", "Greets you by name", "1.0")
        .with_streaming(true)
        .with_skill(AgentSkill::new(
            "greet",
            "Greet",
            "Says hello",
            &["greeting"],
        ));

    // 3. Serve it over A2A (JSON-RPC + SSE), tasks in memory.
    let handler = RequestHandler::builder(agent, card).build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:9090").await?;
    println!("hello-agent on http://127.0.0.1:9090");
    A2aServer::new(handler)
        .public_url("http://127.0.0.1:9090")
        .serve(listener, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}
