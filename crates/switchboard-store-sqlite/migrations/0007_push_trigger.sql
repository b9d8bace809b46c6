-- switchboard task store, schema version 7: the push trigger as it stands.
--
-- For each event appended to `task_events`, one outbox row per config of
-- the event's task, in config creation order. What the row carries is the
-- config's `payload_kind`: 'event' queues the event's StreamResponse JSON,
-- 'task_snapshot' the task as of the event (the snapshot the same
-- transaction wrote to `tasks`, as `{"task": ...}`), unless the event is
-- itself a whole task (`is_task`). The trigger reads those two columns and
-- nothing else.
--
-- This is the definition in force; 0005 and 0006 are history. 0006
-- converted the legacy per-config version column into `payload_kind` and
-- dropped it; no table, index or trigger refers to it any more (the push
-- upgrade test checks the schema of a migrated database). Restating the
-- trigger here keeps the one-time conversion rules out of the current
-- schema's definition.

DROP TRIGGER push_outbox_fill;

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
