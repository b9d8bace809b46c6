//! The web console the SDK way (feature `console`): one call mounts it on
//! an `A2aServer`, behind the server's own authenticator, calling the
//! agent as each caller.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Running, json_of, key_holder};
use switchboard_sdk::prelude::*;

const KEY: &str = "sdk-console-key-0123456789";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_is_one_call_behind_the_servers_gate() {
    let agent = agent_fn(|ctx, events| async move {
        events.reply_text(format!("echo: {}", ctx.text())).await?;
        Ok(())
    });
    let handler = RequestHandler::builder(agent, AgentCard::new("echo", "Echoes", "1.0")).build();
    let running = Running::start(|base| {
        A2aServer::new(handler)
            .public_url(base)
            .authenticator(key_holder(KEY))
            .console(base)
    })
    .await;
    let base = running.base.clone();
    let http = reqwest::Client::new();
    let page = http.get(format!("{base}/console/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let card = format!("{base}/console/api/card");
    let refused = http
        .get(&card)
        .header("X-Switchboard-Console", "1")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let answer = json_of(
        http.get(&card)
            .header("X-Switchboard-Console", "1")
            .header("X-API-Key", KEY),
    )
    .await;
    assert_eq!(answer["result"]["card"]["name"], "echo", "{answer}");
    running.stop().await;
}
