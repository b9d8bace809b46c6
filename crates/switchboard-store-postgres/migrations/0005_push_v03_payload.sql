-- Push payloads for 0.3 configs.
--
-- A config made over A2A 0.3 (`protocol_version` '0.3') is notified with the
-- whole task as of the event, not the event. For such a config and an event
-- that is not itself a task, the trigger queues the snapshot the same
-- statement wrote to `tasks` (an AFTER ROW trigger runs at the end of the
-- statement and sees its changes), wrapped as a 1.0 StreamResponse
-- `{"task": ...}`; the delivery worker turns it into the 0.3 Task JSON.
-- 1.0 configs keep getting the event.
--
-- "Is the event a task" is read from the text, not by parsing it: the events
-- are written by serde_json, compact and externally tagged, so a task event
-- starts with `{"task":`; and parsing would refuse content the column
-- otherwise keeps (PostgreSQL's json operators reject a \u0000 escape).

CREATE OR REPLACE FUNCTION push_outbox_fill() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    queued BIGINT;
BEGIN
    INSERT INTO push_outbox
        (tenant, task_id, config_id, seq, payload, protocol_version, created_micros)
    SELECT NEW.tenant, NEW.task_id, c.id, NEW.seq,
           CASE
               WHEN (c.protocol_version = '0.3' OR c.protocol_version LIKE '0.3.%')
                    AND left(NEW.event_json::text, 8) <> '{"task":'
               THEN '{"task":' || (SELECT t.task_json::text FROM tasks AS t
                                   WHERE t.tenant = NEW.tenant AND t.id = NEW.task_id) || '}'
               ELSE NEW.event_json::text
           END,
           c.protocol_version,
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
