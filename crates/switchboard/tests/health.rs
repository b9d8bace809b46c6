//! `/healthz` and `/readyz` on a real `serve`: ready on each store, and not
//! ready (503, with the reason) once its PostgreSQL server is stopped, or
//! while its database refuses writes, while `/healthz` still answers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod proc;

use proc::Serve;
use serde_json::Value;

async fn probe(base: &str, path: &str) -> (u16, Value) {
    let resp = reqwest::get(format!("{base}{path}")).await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

#[tokio::test]
async fn memory_and_sqlite_are_ready() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("h.db").display());
    for store in ["memory", db.as_str()] {
        let serve = Serve::start(store);
        let (status, body) = probe(&serve.base(), "/healthz").await;
        assert_eq!(
            (status, body["status"].as_str()),
            (200, Some("ok")),
            "{store}"
        );
        let (status, body) = probe(&serve.base(), "/readyz").await;
        assert_eq!(
            (status, body["status"].as_str()),
            (200, Some("ok")),
            "{store}"
        );
        // A tenant-prefixed REST path with the same name is not taken over.
        let (status, _) = probe(&serve.base(), "/healthz/tasks").await;
        assert_ne!(status, 200, "{store}");
    }
}

#[tokio::test]
async fn readyz_fails_when_postgres_stops() {
    let Some(pg) =
        switchboard_store_postgres::testing::start_or_skip("readyz_fails_when_postgres_stops")
    else {
        return;
    };
    let url = pg.fresh_database().await.unwrap();
    let serve = Serve::start(&url);
    let (status, body) = probe(&serve.base(), "/readyz").await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("ok")),
        "{body}"
    );
    pg.stop().unwrap();
    let (status, body) = probe(&serve.base(), "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "unavailable");
    assert!(!body["reason"].as_str().unwrap().is_empty(), "{body}");
    let (status, _) = probe(&serve.base(), "/healthz").await;
    assert_eq!(status, 200, "the process is still up");
}

#[tokio::test]
async fn readyz_fails_while_the_postgres_database_refuses_writes() {
    let test = "readyz_fails_while_the_postgres_database_refuses_writes";
    let Some(pg) = switchboard_store_postgres::testing::start_or_skip(test) else {
        return;
    };
    let url = pg.fresh_database().await.unwrap();
    let serve = Serve::start(&url);
    let (status, body) = probe(&serve.base(), "/readyz").await;
    assert_eq!(status, 200, "{body}");
    // As after a failover to a read-only server: every new session refuses
    // writes, and the server's sessions are ended, so its pool reconnects.
    let name = url.rsplit('/').next().unwrap();
    let script = format!(
        "ALTER DATABASE \"{name}\" SET default_transaction_read_only = on; \
         SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = '{name}' AND pid <> pg_backend_pid();"
    );
    switchboard_store_postgres::testing::load_dump(&pg.url(), &script)
        .await
        .unwrap();
    let base = serve.base();
    let (status, body) = proc::poll_until(
        std::time::Duration::from_secs(20),
        std::time::Duration::from_millis(100),
        "/readyz answers 503: the database refuses writes",
        || probe(&base, "/readyz"),
        |(status, body)| {
            *status == 503
                && body["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("refuses writes"))
        },
    )
    .await;
    assert_eq!(status, 503, "{body}");
}
