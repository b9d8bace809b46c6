//! What the integration tests of this crate share: database files in
//! temporary directories.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use switchboard_store_sqlite::SqliteStore;
use tempfile::TempDir;

/// The path of a database file `name` in a new temporary directory, and the
/// directory: the file is deleted when the directory is dropped, so keep it
/// alive for as long as the file is used.
pub fn temp_db(name: &str) -> (TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name).to_str().unwrap().to_string();
    (dir, path)
}

/// A store on a new database file `name` in a new temporary directory (see
/// [`temp_db`]: keep the directory alive while the store is used).
pub async fn open_temp(name: &str) -> (TempDir, SqliteStore) {
    let (dir, path) = temp_db(name);
    (dir, SqliteStore::open(&path).await.unwrap())
}
