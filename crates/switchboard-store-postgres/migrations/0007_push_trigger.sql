-- switchboard task store on PostgreSQL, schema version 7: the push trigger
-- function as it stands.
--
-- For each event appended to `task_events`, one outbox row per config of
-- the event's task, in config creation order, and a NOTIFY to the delivery
-- workers of every replica (sent only if the transaction commits). What the
-- row carries is the config's `payload_kind`: 'event' queues the event's
-- StreamResponse JSON, 'task_snapshot' the task as of the event (the
-- snapshot the same statement wrote to `tasks`, as `{"task": ...}`), unless
-- the event is itself a whole task (`is_task`). The function reads those
-- two columns and nothing else.
--
-- This is the definition in force; 0005 and 0006 are history. 0006
-- converted the legacy per-config version column into `payload_kind` and
-- dropped it; no table, index or function refers to it any more (the push
-- upgrade test checks the catalog of a migrated database). Restating the
-- function here keeps the one-time conversion rules out of the current
-- schema's definition.

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
