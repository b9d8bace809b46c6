//! What the SQL stores have in common once the SQL has run: turning result
//! rows back into [`TaskRecord`]s, [`LoggedEvent`]s, [`PushConfig`]s and
//! [`OutboxItem`]s, and turning push configs and outbox positions into
//! column values.
//!
//! The SQLite and PostgreSQL stores write their own SQL, because the two
//! dialects lock, batch and notify differently. But their tables hold the
//! same things under the same column names, so reading a row is the same
//! logic in both: decode the JSON, restore the exact timestamps the JSON
//! rounds to milliseconds, check that counters are not negative, and say
//! which column was corrupt when one is. That logic lives here once, behind
//! [`SqlRow`]: a store wraps its driver's row type in a small adapter that
//! reads a column by name as text or as an integer, and calls these
//! functions.
//!
//! Integers come back as `i64` whatever the column's width (SQLite has only
//! 64-bit integers; PostgreSQL's `smallint`/`integer` columns are widened
//! by the adapter), and text columns as `String`, so nothing here depends
//! on a driver.

use chrono::{DateTime, Utc};
use switchboard_protocol::{AuthenticationInfo, StreamResponse, Task};

use crate::push::{ConfigPage, OutboxItem, OutboxState, PayloadKind, PushConfig};
use crate::store::{ListCursor, LoggedEvent, StoreError, TaskPage, TaskRecord, to_micros};

/// One result row, read by column name. Implemented by each SQL store for
/// its driver's row type.
pub trait SqlRow {
    /// A text column; `None` when it is NULL.
    fn opt_text(&self, column: &str) -> Result<Option<String>, StoreError>;

    /// An integer column of any width, widened; `None` when it is NULL.
    fn opt_int(&self, column: &str) -> Result<Option<i64>, StoreError>;

    /// A text column that must not be NULL.
    fn text(&self, column: &str) -> Result<String, StoreError> {
        self.opt_text(column)?.ok_or_else(|| null(column))
    }

    /// An integer column that must not be NULL.
    fn int(&self, column: &str) -> Result<i64, StoreError> {
        self.opt_int(column)?.ok_or_else(|| null(column))
    }
}

fn null(column: &str) -> StoreError {
    StoreError::Corrupt(format!("column {column}: unexpected NULL"))
}

/// A stored counter or id as `u64`; a negative one means corrupt data.
pub fn to_u64(value: i64, what: &str) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| StoreError::Corrupt(format!("{what}: negative value {value}")))
}

/// An outbox id as the SQL `BIGINT` it came from. Ids come from the
/// database, so they fit; an impossible one becomes -1, which matches
/// nothing.
pub fn db_id(id: u64) -> i64 {
    i64::try_from(id).unwrap_or(-1)
}

/// A keyset cursor (the last position a page returned) as the SQL `BIGINT`
/// a page's `> position` compares with: none starts before every row, and
/// one beyond `i64::MAX` is past every row.
pub fn db_after(after: Option<u64>) -> i64 {
    after.map_or(0, |a| i64::try_from(a).unwrap_or(i64::MAX))
}

/// A row count for `LIMIT` (saturating: "all" is as good as "very many").
pub fn db_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// The instant `micros` µs + `rest` ns after the epoch: the split form SQL
/// stores keep exact timestamps in (see [`super::sub_micro_nanos`]).
pub fn from_split(micros: i64, rest: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_micros(micros)?
        .checked_add_signed(chrono::TimeDelta::nanoseconds(rest))
}

// ---------------------------------------------------------------------------
// Tasks and their logs.

/// A `tasks` row: columns `tenant`, `owner`, `task_json`, `last_seq`,
/// `status_micros` and `status_subus_nanos`; the creation time is stored
/// differently per store, so `created_at` reads it (given the task id for
/// its error message).
pub fn task_record<R: SqlRow>(
    row: &R,
    created_at: impl FnOnce(&R, &str) -> Result<DateTime<Utc>, StoreError>,
) -> Result<TaskRecord, StoreError> {
    let tenant = row.text("tenant")?;
    let mut task: Task = serde_json::from_str(&row.text("task_json")?)
        .map_err(|e| StoreError::Corrupt(format!("task JSON in tenant {tenant:?}: {e}")))?;
    if task.status.timestamp.is_some() {
        // The JSON has milliseconds; the columns have the exact time.
        let micros = row.int("status_micros")?;
        let rest = row.int("status_subus_nanos")?;
        task.status.timestamp = Some(from_split(micros, rest).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "task {}: status time {micros} µs + {rest} ns",
                task.id
            ))
        })?);
    }
    let last_seq = to_u64(row.int("last_seq")?, &format!("task {}: last_seq", task.id))?;
    let created_at = created_at(row, &task.id)?;
    Ok(TaskRecord {
        tenant,
        owner: row.text("owner")?,
        task,
        last_seq,
        created_at,
    })
}

/// A `task_events` row of `task_id`: columns `seq` and `event_json`;
/// `exact_status` reads the event's exact status time, if the store kept
/// one (the JSON has milliseconds), or says why it cannot.
pub fn logged_event<R: SqlRow>(
    row: &R,
    task_id: &str,
    exact_status: impl FnOnce(&R) -> Result<Option<DateTime<Utc>>, String>,
) -> Result<LoggedEvent, StoreError> {
    let seq = row.int("seq")?;
    let corrupt = |what: &dyn std::fmt::Display| {
        StoreError::Corrupt(format!("event {seq} of task {task_id}: {what}"))
    };
    let mut event: StreamResponse =
        serde_json::from_str(&row.text("event_json")?).map_err(|e| corrupt(&e))?;
    if let Some(ts) = event.status_timestamp_mut()
        && ts.is_some()
        && let Some(exact) = exact_status(row).map_err(|e| corrupt(&e))?
    {
        *ts = Some(exact);
    }
    let seq = to_u64(seq, &format!("task {task_id}: seq"))?;
    Ok(LoggedEvent { seq, event })
}

/// The page of a ListTasks query that fetched one row more than `limit`
/// (so an extra row means there is a next page), with the `total` count.
pub fn task_page(mut records: Vec<TaskRecord>, limit: usize, total: i64) -> TaskPage {
    let next = if records.len() > limit {
        records.truncate(limit);
        records.last().map(|r| ListCursor {
            status_micros: to_micros(r.status_time()),
            task_id: r.task.id.clone(),
        })
    } else {
        None
    };
    TaskPage {
        records,
        next,
        total: u64::try_from(total).unwrap_or(0),
    }
}

// ---------------------------------------------------------------------------
// Push configs and the outbox.

/// The `push_configs` columns that store a config's `Authorization`
/// settings: `(auth_scheme, auth_credentials)`, both NULL without one.
pub fn auth_columns(config: &PushConfig) -> (Option<&str>, Option<&str>) {
    match &config.authentication {
        Some(a) => (Some(a.scheme.as_str()), a.credentials.as_deref()),
        None => (None, None),
    }
}

/// The `hidden_metadata_keys` column: the keys as a JSON array.
pub fn hidden_keys_column(config: &PushConfig) -> Result<String, StoreError> {
    serde_json::to_string(&config.hidden_metadata_keys)
        .map_err(|e| StoreError::Backend(format!("encoding hidden metadata keys: {e}")))
}

/// A `push_configs` row.
pub fn push_config(row: &impl SqlRow) -> Result<PushConfig, StoreError> {
    Ok(PushConfig {
        tenant: row.text("tenant")?,
        task_id: row.text("task_id")?,
        id: row.text("id")?,
        url: row.text("url")?,
        token: row.opt_text("token")?,
        authentication: authentication(row)?,
        payload_kind: payload_kind(row)?,
        hidden_metadata_keys: hidden_keys(row)?,
    })
}

/// A page of `push_configs` rows, in `ord` order, fetched with one row
/// more than `limit` (so an extra row means there is a next page, which
/// starts after the last `ord` of this one).
pub fn config_page<R: SqlRow>(rows: &[R], limit: usize) -> Result<ConfigPage, StoreError> {
    let page = &rows[..rows.len().min(limit)];
    let configs = page.iter().map(push_config).collect::<Result<_, _>>()?;
    let next = match page.last() {
        Some(last) if rows.len() > limit => Some(to_u64(last.int("ord")?, "push config ord")?),
        _ => None,
    };
    Ok(ConfigPage { configs, next })
}

/// The columns [`outbox_item`] reads, from the outbox `o` and its config
/// `c` (which a dead letter may have lost: use a LEFT JOIN there).
pub const OUTBOX_ITEM_COLUMNS: &str = "o.id, o.tenant, o.task_id, o.config_id, o.seq, o.payload, \
     o.payload_kind, o.state, o.attempts, o.last_error, o.created_micros, \
     COALESCE(c.url, '') AS url, c.token, c.auth_scheme, c.auth_credentials, \
     COALESCE(c.hidden_metadata_keys, '[]') AS hidden_metadata_keys";

/// A row of [`OUTBOX_ITEM_COLUMNS`].
pub fn outbox_item(row: &impl SqlRow) -> Result<OutboxItem, StoreError> {
    let attempts = row.int("attempts")?;
    Ok(OutboxItem {
        id: to_u64(row.int("id")?, "outbox id")?,
        tenant: row.text("tenant")?,
        task_id: row.text("task_id")?,
        config_id: row.text("config_id")?,
        seq: to_u64(row.int("seq")?, "outbox seq")?,
        payload: row.text("payload")?,
        payload_kind: payload_kind(row)?,
        url: row.text("url")?,
        token: row.opt_text("token")?,
        authentication: authentication(row)?,
        hidden_metadata_keys: hidden_keys(row)?,
        attempts: u32::try_from(attempts.max(0)).unwrap_or(u32::MAX),
        last_error: row.opt_text("last_error")?,
        state: if row.int("state")? == 0 {
            OutboxState::Pending
        } else {
            OutboxState::Dead
        },
        created_at: DateTime::from_timestamp_micros(row.int("created_micros")?).unwrap_or_default(),
    })
}

/// The `payload_kind` column (`event` or `task_snapshot`).
fn payload_kind(row: &impl SqlRow) -> Result<PayloadKind, StoreError> {
    let name = row.text("payload_kind")?;
    PayloadKind::from_name(&name)
        .ok_or_else(|| StoreError::Corrupt(format!("unknown push payload kind {name:?}")))
}

/// The `Authorization` settings: a scheme with optional credentials.
fn authentication(row: &impl SqlRow) -> Result<Option<AuthenticationInfo>, StoreError> {
    match row.opt_text("auth_scheme")? {
        Some(scheme) => Ok(Some(AuthenticationInfo {
            scheme,
            credentials: row.opt_text("auth_credentials")?,
        })),
        None => Ok(None),
    }
}

fn hidden_keys(row: &impl SqlRow) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(&row.text("hidden_metadata_keys")?)
        .map_err(|e| StoreError::Corrupt(format!("push config hidden_metadata_keys: {e}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::HashMap;

    use super::*;

    /// A row as a map: `None` values are NULL.
    #[derive(Default)]
    struct MapRow(HashMap<&'static str, Option<String>>);

    impl SqlRow for MapRow {
        fn opt_text(&self, column: &str) -> Result<Option<String>, StoreError> {
            self.0
                .get(column)
                .cloned()
                .ok_or_else(|| StoreError::Corrupt(format!("no column {column}")))
        }

        fn opt_int(&self, column: &str) -> Result<Option<i64>, StoreError> {
            self.opt_text(column)?
                .map(|v| {
                    v.parse()
                        .map_err(|e| StoreError::Corrupt(format!("{column}: {e}")))
                })
                .transpose()
        }
    }

    fn outbox_row(overrides: &[(&'static str, Option<&str>)]) -> MapRow {
        let mut row = MapRow::default();
        for (k, v) in [
            ("id", Some("7")),
            ("tenant", Some("t")),
            ("task_id", Some("task")),
            ("config_id", Some("cfg")),
            ("seq", Some("3")),
            ("payload", Some("{}")),
            ("payload_kind", Some("task_snapshot")),
            ("url", Some("https://example.com/hook")),
            ("token", None),
            ("auth_scheme", Some("Bearer")),
            ("auth_credentials", None),
            ("hidden_metadata_keys", Some(r#"["x"]"#)),
            ("attempts", Some("2")),
            ("last_error", Some("503")),
            ("state", Some("1")),
            ("created_micros", Some("1000000")),
        ]
        .into_iter()
        .chain(overrides.iter().copied())
        {
            row.0.insert(k, v.map(str::to_string));
        }
        row
    }

    #[test]
    fn an_outbox_row_decodes_with_its_config() {
        let item = outbox_item(&outbox_row(&[])).unwrap();
        assert_eq!((item.id, item.seq, item.attempts), (7, 3, 2));
        assert_eq!(item.payload_kind, PayloadKind::TaskSnapshot);
        assert_eq!(item.state, OutboxState::Dead);
        assert_eq!(item.hidden_metadata_keys, ["x"]);
        assert_eq!(item.authentication.unwrap().scheme, "Bearer");
        assert_eq!(item.created_at.timestamp(), 1);
    }

    #[test]
    fn corrupt_outbox_rows_say_which_column() {
        for (column, value, says) in [
            ("seq", Some("-1"), "outbox seq"),
            ("payload_kind", Some("carrier pigeon"), "payload kind"),
            ("hidden_metadata_keys", Some("{"), "hidden_metadata_keys"),
            ("url", None, "column url"),
        ] {
            let err = outbox_item(&outbox_row(&[(column, value)])).unwrap_err();
            assert!(
                matches!(&err, StoreError::Corrupt(m) if m.contains(says)),
                "{column}: {err}"
            );
        }
    }

    #[test]
    fn pages_end_where_the_extra_row_begins() {
        let record = |id: &str| TaskRecord {
            tenant: String::new(),
            owner: String::new(),
            task: Task {
                id: id.into(),
                context_id: "ctx".into(),
                status: switchboard_protocol::TaskStatus::new(
                    switchboard_protocol::TaskState::Completed,
                ),
                artifacts: None,
                history: None,
                metadata: None,
            },
            last_seq: 1,
            created_at: DateTime::from_timestamp(5, 0).unwrap(),
        };
        let page = task_page(vec![record("a"), record("b"), record("c")], 2, 9);
        assert_eq!(page.records.len(), 2);
        assert_eq!(page.next.unwrap().task_id, "b");
        assert_eq!(page.total, 9);
        let last = task_page(vec![record("a")], 2, 1);
        assert!(last.next.is_none());
    }
}
