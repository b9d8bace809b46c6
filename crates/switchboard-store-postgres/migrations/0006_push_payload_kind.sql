-- switchboard task store on PostgreSQL, schema version 6: what a webhook
-- receives is a property of its config.
--
-- `push_configs.payload_kind` says what a config's webhook gets for each
-- event: 'event' (the event's StreamResponse JSON) or 'task_snapshot' (the
-- task as of the event, the snapshot the same statement wrote to `tasks`,
-- as `{"task": ...}`). The binding that creates a config chooses it; the
-- store only keeps it. Each outbox row carries the kind it was queued as.
--
-- `task_events.is_task` is true for an event that is itself a whole task,
-- so its own snapshot; the commit statement sets it when it appends the
-- event. The trigger reads these two columns and nothing else: no version
-- strings, no looking at JSON text.
--
-- This replaces `protocol_version` and the trigger function of 0005, which
-- gave snapshots to configs whose version matched '0.3' or '0.3.%' and told
-- task events by the first bytes of their JSON. The existing rows are
-- converted once, below, by exactly those rules, then the old column is
-- dropped: every config, pending item and dead letter keeps the payload it
-- had.

CREATE OR REPLACE FUNCTION push_outbox_fill() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    queued BIGINT;
BEGIN
    INSERT INTO push_outbox
        (tenant, task_id, config_id, seq, payload, payload_kind, created_micros)
    SELECT NEW.tenant, NEW.task_id, c.id, NEW.seq,
           CASE
               WHEN c.payload_kind = 'task_snapshot' AND NOT NEW.is_task
               THEN '{"task":' || (SELECT t.task_json::text FROM tasks AS t
                                   WHERE t.tenant = NEW.tenant AND t.id = NEW.task_id) || '}'
               ELSE NEW.event_json::text
           END,
           c.payload_kind,
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

ALTER TABLE push_configs ADD COLUMN payload_kind TEXT COLLATE "C" NOT NULL DEFAULT 'event'
    CHECK (payload_kind IN ('event', 'task_snapshot'));
ALTER TABLE push_outbox ADD COLUMN payload_kind TEXT COLLATE "C" NOT NULL DEFAULT 'event'
    CHECK (payload_kind IN ('event', 'task_snapshot'));

UPDATE push_configs SET payload_kind = 'task_snapshot'
    WHERE protocol_version = '0.3' OR protocol_version LIKE '0.3.%';
UPDATE push_outbox SET payload_kind = 'task_snapshot'
    WHERE protocol_version = '0.3' OR protocol_version LIKE '0.3.%';

ALTER TABLE push_configs DROP COLUMN protocol_version;
ALTER TABLE push_outbox DROP COLUMN protocol_version;

ALTER TABLE task_events ADD COLUMN is_task BOOLEAN NOT NULL DEFAULT false;
-- The events already logged were written compact and externally tagged by
-- serde_json, so a task event starts with `{"task":`.
UPDATE task_events SET is_task = true WHERE left(event_json::text, 8) = '{"task":';
