//! `store::open`: the store a URL names, ready for the handler.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use switchboard_sdk::prelude::*;
use switchboard_sdk::store::{self, OpenError};

fn agent() -> impl AgentExecutor {
    agent_fn(|ctx, events| async move {
        events.reply_text(format!("echo: {}", ctx.text())).await?;
        Ok(())
    })
}

#[tokio::test]
async fn a_url_opens_its_store_and_the_handler_keeps_tasks_there() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tasks.db").display());
    for url in ["memory", url.as_str()] {
        let opened = store::open(url).await.unwrap();
        assert!(opened.push().is_some(), "{url}: push configs beside tasks");
        assert!(opened.cluster().is_none(), "{url}: one process");
        let card = AgentCard::new("a", "b", "1.0");
        let handler = opened
            .builder(RequestHandler::builder(agent(), card))
            .build();
        assert!(
            std::sync::Arc::ptr_eq(handler.store(), opened.tasks()),
            "{url}: the handler uses the opened store"
        );
    }
}

#[tokio::test]
async fn an_unknown_url_is_refused_without_its_password() {
    let err = store::open("redis://user:hunter2@db:6379")
        .await
        .unwrap_err();
    assert!(matches!(err, OpenError::Unknown(_)), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("unknown store") && !text.contains("hunter2"),
        "{text}"
    );
}

#[cfg(not(feature = "postgres"))]
#[tokio::test]
async fn a_store_whose_feature_is_off_says_which_feature() {
    let err = store::open("postgres://u@127.0.0.1:1/db")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("`postgres` feature"), "{err}");
}
