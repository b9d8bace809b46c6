-- switchboard task store on PostgreSQL, schema version 1.
--
-- One row per task holding its latest snapshot, plus one row per event of
-- the task's log. Several server replicas may share this database: every
-- rule that keeps the log consistent is enforced here (row locks taken by
-- the conditional writes, the primary keys), never in a process.
--
-- Times are integers: microseconds since the Unix epoch (the unit ListTasks
-- cursors use) plus the sub-microsecond rest in nanoseconds (0..=999). The
-- JSON columns hold the A2A wire form, whose timestamps stop at the
-- millisecond; the exact status time is kept beside it and put back on read,
-- so what is loaded equals what was committed. To look at a time by hand:
-- `to_timestamp(status_micros / 1e6)`.
--
-- Text that is compared or sorted uses the "C" collation: byte order, the
-- same as Rust's `str` ordering, whatever the database's locale.
--
-- The JSON columns are `json` (validated text, kept byte for byte), not
-- `jsonb`: the snapshot is written whole at every commit and read whole, so
-- re-encoding it into jsonb would cost time for nothing, and jsonb refuses
-- the `\u0000` escape that a text part may legitimately contain.

CREATE TABLE tasks (
    tenant              TEXT COLLATE "C" NOT NULL,
    id                  TEXT COLLATE "C" NOT NULL,
    context_id          TEXT COLLATE "C" NOT NULL,
    owner               TEXT COLLATE "C" NOT NULL,
    -- TaskState::as_str, e.g. TASK_STATE_WORKING.
    state               TEXT COLLATE "C" NOT NULL,
    -- The status time (TaskRecord::status_time: the status timestamp, or the
    -- creation time when the status has none).
    status_micros       BIGINT  NOT NULL,
    status_subus_nanos  INTEGER NOT NULL CHECK (status_subus_nanos BETWEEN 0 AND 999),
    created_micros      BIGINT  NOT NULL,
    created_subus_nanos INTEGER NOT NULL CHECK (created_subus_nanos BETWEEN 0 AND 999),
    -- Sequence number of the last event in the log (0: none yet). A commit
    -- applies only when this is the value the writer expected.
    last_seq            BIGINT  NOT NULL CHECK (last_seq >= 0),
    task_json           JSON    NOT NULL,
    PRIMARY KEY (tenant, id)
);

-- ListTasks: a tenant's tasks of one owner, newest status first.
CREATE INDEX tasks_list
    ON tasks (tenant, owner, status_micros DESC, id DESC);

-- ListTasks filtered by context.
CREATE INDEX tasks_list_context
    ON tasks (tenant, owner, context_id, status_micros DESC, id DESC);

CREATE TABLE task_events (
    tenant             TEXT COLLATE "C" NOT NULL,
    task_id            TEXT COLLATE "C" NOT NULL,
    seq                BIGINT  NOT NULL CHECK (seq >= 0),
    event_json         JSON    NOT NULL,
    -- Exact status time of Task and StatusUpdate events that carry one.
    status_micros      BIGINT,
    status_subus_nanos INTEGER CHECK (status_subus_nanos BETWEEN 0 AND 999),
    PRIMARY KEY (tenant, task_id, seq),
    FOREIGN KEY (tenant, task_id) REFERENCES tasks (tenant, id) ON DELETE CASCADE
);
