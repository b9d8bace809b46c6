-- switchboard task store, schema version 1.
--
-- One row per task holding its latest snapshot, plus one row per event of
-- the task's log. Timestamps are microseconds since the Unix epoch, the unit
-- ListTasks cursors use; `status_subus_nanos` keeps the sub-microsecond rest
-- of the status time so `statusTimestampAfter` filters are exact.
--
-- The JSON columns hold the A2A wire form, whose timestamps have millisecond
-- precision. The exact status timestamp is kept beside it (the two status
-- columns of `tasks`, `status_at` of `task_events`) and put back on load, so
-- what is read equals what was committed.

CREATE TABLE tasks (
    tenant             TEXT    NOT NULL,
    id                 TEXT    NOT NULL,
    context_id         TEXT    NOT NULL,
    owner              TEXT    NOT NULL,
    state              TEXT    NOT NULL,
    status_micros      INTEGER NOT NULL,
    status_subus_nanos INTEGER NOT NULL,
    created_micros     INTEGER NOT NULL,
    created_at         TEXT    NOT NULL,
    last_seq           INTEGER NOT NULL,
    task_json          TEXT    NOT NULL,
    PRIMARY KEY (tenant, id)
);

-- ListTasks: a tenant's tasks of one owner, newest status first.
CREATE INDEX tasks_list
    ON tasks (tenant, owner, status_micros DESC, id DESC);

-- ListTasks filtered by context.
CREATE INDEX tasks_list_context
    ON tasks (tenant, owner, context_id, status_micros DESC, id DESC);

CREATE TABLE task_events (
    tenant     TEXT    NOT NULL,
    task_id    TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    event_json TEXT    NOT NULL,
    -- Exact status timestamp (RFC 3339) of Task and StatusUpdate events.
    status_at  TEXT,
    PRIMARY KEY (tenant, task_id, seq),
    FOREIGN KEY (tenant, task_id) REFERENCES tasks (tenant, id) ON DELETE CASCADE
);
