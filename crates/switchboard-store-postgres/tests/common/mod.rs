//! What the integration tests of this crate share: a store on a fresh
//! database of the test binary's private PostgreSQL server.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use switchboard_store_postgres::{PgStore, testing};

/// A store (default options) on a fresh database for the test `test`;
/// `None` when no PostgreSQL server can be started, and the test is then
/// skipped (see [`testing::fresh_database_or_skip`]).
pub async fn fresh_store_or_skip(test: &str) -> Option<PgStore> {
    fresh_store_with_or_skip(test, Default::default()).await
}

/// A store opened with `options` on a fresh database for the test `test`;
/// `None` when skipped, as with [`fresh_store_or_skip`].
pub async fn fresh_store_with_or_skip(
    test: &str,
    options: switchboard_store_postgres::PgOptions,
) -> Option<PgStore> {
    let url = testing::fresh_database_or_skip(test).await?;
    Some(PgStore::open_with(&url, options).await.unwrap())
}

/// `N` replicas, stores with a pool each as `N` servers would have, on one
/// fresh database for the test `test`; `None` when skipped, as with
/// [`fresh_store_or_skip`].
pub async fn replicas_or_skip<const N: usize>(test: &str) -> Option<[Arc<PgStore>; N]> {
    let url = testing::fresh_database_or_skip(test).await?;
    let mut replicas = Vec::with_capacity(N);
    for _ in 0..N {
        replicas.push(Arc::new(PgStore::open(&url).await.unwrap()));
    }
    Some(replicas.try_into().unwrap())
}
