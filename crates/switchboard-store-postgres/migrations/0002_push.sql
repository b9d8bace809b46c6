-- switchboard task store on PostgreSQL, schema version 2: push notifications.
--
-- `push_configs` holds the webhooks registered per task. `push_outbox` holds
-- one row per (event, config) still to be delivered, or given up on
-- (state 1, a dead letter). Rows are written by the trigger below, inside
-- the same transaction (the same statement, even) that appends the event to
-- `task_events`: an event is durable together with its notifications or not
-- at all, and the commit statement itself needs to know nothing about push.
--
-- Several replicas share these tables. Delivery workers claim rows with
-- `SELECT … FOR UPDATE SKIP LOCKED` and a lease (`lease_until_micros`), so
-- two replicas never hold the same row, and a replica that dies mid-delivery
-- only delays its rows until the lease runs out.
--
-- Times are microseconds since the Unix epoch. A `next_attempt_micros` of 0
-- means "due now".

CREATE TABLE push_configs (
    -- Creation order, also the ListTaskPushNotificationConfigs cursor.
    ord                  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant               TEXT COLLATE "C" NOT NULL,
    task_id              TEXT COLLATE "C" NOT NULL,
    id                   TEXT COLLATE "C" NOT NULL,
    url                  TEXT    NOT NULL,
    token                TEXT,
    auth_scheme          TEXT,
    auth_credentials     TEXT,
    -- Which payload the receiver gets: "1.0" = the StreamResponse JSON.
    protocol_version     TEXT    NOT NULL DEFAULT '1.0',
    -- Metadata keys of extensions the config's creator did not activate
    -- (removed from every notification): a JSON array of strings.
    hidden_metadata_keys TEXT    NOT NULL DEFAULT '[]',
    created_micros       BIGINT  NOT NULL,
    UNIQUE (tenant, task_id, id)
);

CREATE TABLE push_outbox (
    id                  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant              TEXT COLLATE "C" NOT NULL,
    task_id             TEXT COLLATE "C" NOT NULL,
    config_id           TEXT COLLATE "C" NOT NULL,
    seq                 BIGINT  NOT NULL,
    payload             TEXT    NOT NULL,
    protocol_version    TEXT    NOT NULL,
    -- 0 pending, 1 dead letter.
    state               SMALLINT NOT NULL DEFAULT 0 CHECK (state IN (0, 1)),
    attempts            INTEGER NOT NULL DEFAULT 0,
    next_attempt_micros BIGINT  NOT NULL DEFAULT 0,
    lease_until_micros  BIGINT  NOT NULL DEFAULT 0,
    last_error          TEXT,
    created_micros      BIGINT  NOT NULL,
    -- Also serves the "no earlier pending item of this config" check.
    UNIQUE (tenant, task_id, config_id, seq)
);

-- Finding due rows without scanning dead letters.
CREATE INDEX push_outbox_due ON push_outbox (next_attempt_micros, id) WHERE state = 0;
-- Listing dead letters.
CREATE INDEX push_outbox_dead ON push_outbox (tenant, id) WHERE state = 1;

-- Queues one notification per config of the event's task, in config
-- creation order, and tells listening delivery workers (on any replica)
-- that there is work; NOTIFY is sent only if the transaction commits.
CREATE FUNCTION push_outbox_fill() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    queued BIGINT;
BEGIN
    INSERT INTO push_outbox
        (tenant, task_id, config_id, seq, payload, protocol_version, created_micros)
    SELECT NEW.tenant, NEW.task_id, c.id, NEW.seq, NEW.event_json::text, c.protocol_version,
           (extract(epoch FROM clock_timestamp()) * 1000000)::BIGINT
    FROM push_configs AS c
    WHERE c.tenant = NEW.tenant AND c.task_id = NEW.task_id
    ORDER BY c.ord;
    GET DIAGNOSTICS queued = ROW_COUNT;
    IF queued > 0 THEN
        PERFORM pg_notify('switchboard_push', '');
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER push_outbox_fill AFTER INSERT ON task_events
    FOR EACH ROW EXECUTE FUNCTION push_outbox_fill();

-- The push signing key set shared by every replica (unless a replica is
-- configured with its own key file): one row, the key file's JSON document,
-- and a version bumped at every change so replicas notice rotations.
CREATE TABLE push_signing_keys (
    id       SMALLINT PRIMARY KEY CHECK (id = 1),
    document TEXT   NOT NULL,
    version  BIGINT NOT NULL
);
