//! What the integration tests of this crate share: a store on a fresh
//! database of the test binary's private PostgreSQL server.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use switchboard_store_postgres::{PgStore, testing};

/// A store (default options) on a fresh database for the test `test`;
/// `None` when no PostgreSQL server can be started, and the test is then
/// skipped (see [`testing::fresh_database_or_skip`]).
pub async fn fresh_store_or_skip(test: &str) -> Option<PgStore> {
    let url = testing::fresh_database_or_skip(test).await?;
    Some(PgStore::open(&url).await.unwrap())
}
