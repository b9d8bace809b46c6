//! The writer's connection: its transactions, what a failed one leaves
//! behind, and whether writes work at all.
//!
//! # Transactions without sqlx's bookkeeping
//!
//! sqlx's `Transaction` counts the transactions open on a connection and
//! lowers the count only when a `COMMIT` or `ROLLBACK` succeeds. When SQLite
//! fails a `COMMIT` (a full disk, `SQLITE_FULL`; an I/O error) it may already
//! have rolled the transaction back itself; sqlx's `ROLLBACK` then fails with
//! "no transaction is active", the count stays at one, and every later
//! `begin_with` on that connection fails ("attempted to call begin_with at
//! non-zero transaction depth") until the process restarts. A full disk
//! that was freed again a second later thus broke every write for good
//! (found 2026-12-07 at `cfe2118`).
//!
//! So every write here runs with plain `BEGIN IMMEDIATE` / `COMMIT` /
//! `ROLLBACK` statements, which leave no count behind, through
//! [`Writer::transaction`], and a failed one is ended here: `ROLLBACK`,
//! where "no transaction is active" means SQLite already did. After a failed
//! write the connection is also replaced (a file database; an in-memory one
//! lives in its connection): its page cache may hold pages of the
//! transaction that failed, and a connection SQLite opened read-only stays
//! read-only even once the file is writable again. A transaction abandoned
//! half-way (its future dropped) leaves the connection in an unknown state,
//! so it is closed too. The pool opens a fresh connection for the next
//! write, so the writer recovers by itself once the cause is gone.
//!
//! # Write health
//!
//! A read can succeed while every write fails (a full disk, a read-only
//! file), so readiness must know about writes (`switchboard_core::store::
//! writes`): [`WriteHealth`] keeps the error of the last write that failed,
//! cleared by the next one that succeeds. While it is set, [`Writer::probe`] tries a small real write
//! (one row of `write_probe`, migration 0008), so the store reports ready
//! again as soon as writes work, without waiting for a caller's commit.
//! The store probes once when it opens, which is how a read-only file is
//! found before anyone writes. A probe proves that a small write fits, not
//! every write: when a larger commit fails afterwards, the store is not
//! ready again until a write succeeds.

use std::sync::Arc;

use sqlx::pool::PoolConnection;
use sqlx::query::Query;
use sqlx::sqlite::SqliteArguments;
use sqlx::{Sqlite, SqliteConnection, SqlitePool};
use switchboard_core::StoreError;
use switchboard_core::store::backend;
use switchboard_core::store::writes::WriteHealth;

/// The writer pool's one connection and the health of what it writes.
/// SQLite has one writer; sharing one connection avoids "database is
/// locked" between our own connections.
#[derive(Debug, Clone)]
pub(crate) struct Writer {
    pool: SqlitePool,
    health: Arc<WriteHealth>,
    /// A file database: a failed write replaces the connection. (An
    /// in-memory database would vanish with its connection.)
    replace_after_failure: bool,
}

impl Writer {
    pub(crate) fn new(pool: SqlitePool, replace_after_failure: bool) -> Self {
        Writer {
            pool,
            health: Arc::default(),
            replace_after_failure,
        }
    }

    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The writer connection, for a write that manages its own statements
    /// (the one-round-trip commit); hand its outcome to
    /// [`WriterConn::finish`].
    pub(crate) async fn connection(&self) -> Result<WriterConn, StoreError> {
        let conn = self
            .pool
            .acquire()
            .await
            .map_err(backend("acquiring the SQLite writer connection"));
        match conn {
            Ok(conn) => Ok(WriterConn {
                conn,
                writer: self.clone(),
                in_doubt: false,
            }),
            Err(e) => {
                self.health.failed(&e);
                Err(e)
            }
        }
    }

    /// Runs `body` in a `BEGIN IMMEDIATE … COMMIT` transaction: the write
    /// lock is taken at once, so what `body` reads cannot change before it
    /// writes, even if another process opens the file. An error from `body`
    /// or from `COMMIT` rolls it back (see the [module docs](self)).
    pub(crate) async fn transaction<T>(
        &self,
        what: &str,
        body: impl AsyncFnOnce(&mut SqliteConnection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.connection().await?;
        conn.in_doubt = true;
        let begun = sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut *conn.conn)
            .await
            .map_err(backend("starting a write transaction"));
        if let Err(e) = begun {
            // Nothing was begun, but the connection may be what failed.
            return conn.finish(Err(e)).await;
        }
        let outcome = match body(&mut conn.conn).await {
            Ok(value) => sqlx::query("COMMIT")
                .execute(&mut *conn.conn)
                .await
                .map(|_| value)
                .map_err(backend(what)),
            Err(e) => Err(e),
        };
        conn.finish(outcome).await
    }

    /// Runs one statement on its own (SQLite makes it its own transaction).
    pub(crate) async fn statement(
        &self,
        statement: Query<'_, Sqlite, SqliteArguments>,
        what: &str,
    ) -> Result<(), StoreError> {
        let mut conn = self.connection().await?;
        conn.in_doubt = true;
        let outcome = statement
            .execute(&mut *conn.conn)
            .await
            .map(|_| ())
            .map_err(backend(what));
        conn.finish(outcome).await
    }

    /// Whether writes work: the last write's error, unless a small real
    /// write now succeeds (see the [module docs](self)).
    pub(crate) async fn probe(&self) -> Result<(), StoreError> {
        match self.health.failure() {
            None => Ok(()),
            Some(last) => {
                tracing::debug!(%last, "probing SQLite writes");
                self.probe_write().await
            }
        }
    }

    /// One small real write, recorded in the write health like any other.
    /// The store does one when it opens, so a file that cannot be written
    /// is known before anyone tries.
    pub(crate) async fn probe_write(&self) -> Result<(), StoreError> {
        self.transaction("committing a write probe", async |conn| {
            sqlx::query(
                "INSERT INTO write_probe (id, probed_micros) VALUES (1, ?1) \
                 ON CONFLICT (id) DO UPDATE SET probed_micros = excluded.probed_micros",
            )
            .bind(chrono::Utc::now().timestamp_micros())
            .execute(conn)
            .await
            .map_err(backend("writing a write probe"))?;
            Ok(())
        })
        .await
        .map_err(|e| StoreError::Backend(format!("writes fail: {e}")))
    }
}

/// The writer's connection while a write is done on it. A write left in
/// doubt (its future dropped before [`finish`](Self::finish)) closes it.
pub(crate) struct WriterConn {
    conn: PoolConnection<Sqlite>,
    writer: Writer,
    /// A write was started and has not been finished.
    in_doubt: bool,
}

impl WriterConn {
    /// The connection, for a write whose outcome goes to
    /// [`finish`](Self::finish).
    pub(crate) fn begin(&mut self) -> &mut SqliteConnection {
        self.in_doubt = true;
        &mut self.conn
    }

    /// Ends a write with `outcome`, recording it in the write health. A
    /// backend error rolls back what may still be open and, for a file
    /// database, replaces the connection (see the [module docs](self)).
    pub(crate) async fn finish<T>(
        mut self,
        outcome: Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if self.writer.health.record(&outcome) {
            self.roll_back().await;
            if self.writer.replace_after_failure {
                self.conn.close_on_drop();
            }
        }
        self.in_doubt = false;
        outcome
    }

    /// Ends the transaction a failed write may have left open.
    async fn roll_back(&mut self) {
        if let Err(e) = sqlx::query("ROLLBACK").execute(&mut *self.conn).await {
            // SQLite rolls back by itself on some errors (a full disk among
            // them), and the failure may have come before `BEGIN`: then
            // there is nothing to roll back.
            if !e.to_string().contains("no transaction is active") {
                tracing::error!(error = %e, "SQLite ROLLBACK failed; closing the writer connection");
                self.conn.close_on_drop();
            }
        }
    }
}

impl Drop for WriterConn {
    fn drop(&mut self) {
        if self.in_doubt {
            self.conn.close_on_drop();
        }
    }
}
