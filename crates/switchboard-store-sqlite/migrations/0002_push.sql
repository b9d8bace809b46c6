-- switchboard task store, schema version 2: push notifications.
--
-- `push_configs` holds the webhooks registered per task. `push_outbox` holds
-- one row per (event, config) still to be delivered, or given up on
-- (state 1, a dead letter). Rows are written by the trigger below, inside
-- the same transaction that appends the event to `task_events`, so an event
-- is durable together with its notifications or not at all, whichever
-- write path (single commit or group commit) appended it.
--
-- Times are microseconds since the Unix epoch. A `next_attempt_micros` of 0
-- means "due now"; `lease_until_micros` is when a claimed row may be claimed
-- again by another worker (a worker that died mid-delivery).

CREATE TABLE push_configs (
    -- Creation order, also the ListTaskPushNotificationConfigs cursor.
    ord               INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant            TEXT    NOT NULL,
    task_id           TEXT    NOT NULL,
    id                TEXT    NOT NULL,
    url               TEXT    NOT NULL,
    token             TEXT,
    auth_scheme       TEXT,
    auth_credentials  TEXT,
    -- Which payload the receiver gets: "1.0" = the StreamResponse JSON.
    protocol_version  TEXT    NOT NULL DEFAULT '1.0',
    created_micros    INTEGER NOT NULL,
    UNIQUE (tenant, task_id, id)
);

CREATE TABLE push_outbox (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant              TEXT    NOT NULL,
    task_id             TEXT    NOT NULL,
    config_id           TEXT    NOT NULL,
    seq                 INTEGER NOT NULL,
    payload             TEXT    NOT NULL,
    protocol_version    TEXT    NOT NULL,
    -- 0 pending, 1 dead letter.
    state               INTEGER NOT NULL DEFAULT 0,
    attempts            INTEGER NOT NULL DEFAULT 0,
    next_attempt_micros INTEGER NOT NULL DEFAULT 0,
    lease_until_micros  INTEGER NOT NULL DEFAULT 0,
    last_error          TEXT,
    created_micros      INTEGER NOT NULL,
    -- Also serves the "no earlier pending item of this config" check.
    UNIQUE (tenant, task_id, config_id, seq)
);

-- Finding due rows.
CREATE INDEX push_outbox_due ON push_outbox (state, next_attempt_micros);

CREATE TRIGGER push_outbox_fill AFTER INSERT ON task_events
BEGIN
    INSERT INTO push_outbox
        (tenant, task_id, config_id, seq, payload, protocol_version, created_micros)
    SELECT NEW.tenant, NEW.task_id, c.id, NEW.seq, NEW.event_json, c.protocol_version,
           CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)
    FROM push_configs AS c
    WHERE c.tenant = NEW.tenant AND c.task_id = NEW.task_id
    ORDER BY c.ord;
END;
