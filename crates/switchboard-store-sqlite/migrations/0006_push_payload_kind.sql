-- switchboard task store, schema version 6: what a webhook receives is a
-- property of its config.
--
-- `push_configs.payload_kind` says what a config's webhook gets for each
-- event: 'event' (the event's StreamResponse JSON) or 'task_snapshot' (the
-- task as of the event, the snapshot the same transaction wrote to `tasks`,
-- as `{"task": ...}`). The binding that creates a config chooses it; the
-- store only keeps it. Each outbox row carries the kind it was queued as.
--
-- `task_events.is_task` is 1 for an event that is itself a whole task, so
-- its own snapshot; the store sets it when it appends the event. The trigger
-- reads these two columns and nothing else: no version strings, no looking
-- at JSON text.
--
-- This replaces `protocol_version` and the trigger of 0005, which gave
-- snapshots to configs whose version matched '0.3' or '0.3.%' and told task
-- events by the first bytes of their JSON. The existing rows are converted
-- once, below, by exactly those rules, then the old column is dropped: every
-- config, pending item and dead letter keeps the payload it had.

DROP TRIGGER push_outbox_fill;

ALTER TABLE push_configs ADD COLUMN payload_kind TEXT NOT NULL DEFAULT 'event'
    CHECK (payload_kind IN ('event', 'task_snapshot'));
ALTER TABLE push_outbox ADD COLUMN payload_kind TEXT NOT NULL DEFAULT 'event'
    CHECK (payload_kind IN ('event', 'task_snapshot'));

UPDATE push_configs SET payload_kind = 'task_snapshot'
    WHERE protocol_version = '0.3' OR protocol_version LIKE '0.3.%';
UPDATE push_outbox SET payload_kind = 'task_snapshot'
    WHERE protocol_version = '0.3' OR protocol_version LIKE '0.3.%';

ALTER TABLE push_configs DROP COLUMN protocol_version;
ALTER TABLE push_outbox DROP COLUMN protocol_version;

ALTER TABLE task_events ADD COLUMN is_task INTEGER NOT NULL DEFAULT 0
    CHECK (is_task IN (0, 1));
-- The events already logged were written compact and externally tagged by
-- serde_json, so a task event starts with `{"task":`.
UPDATE task_events SET is_task = 1 WHERE substr(event_json, 1, 8) = '{"task":';

CREATE TRIGGER push_outbox_fill AFTER INSERT ON task_events
BEGIN
    INSERT INTO push_outbox
        (tenant, task_id, config_id, seq, payload, payload_kind, created_micros)
    SELECT NEW.tenant, NEW.task_id, c.id, NEW.seq,
           CASE
               WHEN c.payload_kind = 'task_snapshot' AND NEW.is_task = 0
               THEN '{"task":' || (SELECT t.task_json FROM tasks AS t
                                   WHERE t.tenant = NEW.tenant AND t.id = NEW.task_id) || '}'
               ELSE NEW.event_json
           END,
           c.payload_kind,
           CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)
    FROM push_configs AS c
    WHERE c.tenant = NEW.tenant AND c.task_id = NEW.task_id
    ORDER BY c.ord;
END;
