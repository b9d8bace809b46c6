-- switchboard task store, schema version 5: push payloads for 0.3 configs.
--
-- A config made over A2A 0.3 (`protocol_version` '0.3') is notified with the
-- whole task as of the event, not the event. The trigger queues, for such a
-- config and an event that is not itself a task, the snapshot the same
-- transaction wrote to `tasks` (it is written before the event is appended),
-- wrapped as a 1.0 StreamResponse `{"task": ...}`; the delivery worker turns
-- it into the 0.3 Task JSON. 1.0 configs keep getting the event.

DROP TRIGGER push_outbox_fill;

CREATE TRIGGER push_outbox_fill AFTER INSERT ON task_events
BEGIN
    INSERT INTO push_outbox
        (tenant, task_id, config_id, seq, payload, protocol_version, created_micros)
    SELECT NEW.tenant, NEW.task_id, c.id, NEW.seq,
           CASE
               WHEN (c.protocol_version = '0.3' OR c.protocol_version LIKE '0.3.%')
                    AND substr(NEW.event_json, 1, 8) <> '{"task":'
               THEN '{"task":' || (SELECT t.task_json FROM tasks AS t
                                   WHERE t.tenant = NEW.tenant AND t.id = NEW.task_id) || '}'
               ELSE NEW.event_json
           END,
           c.protocol_version,
           CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)
    FROM push_configs AS c
    WHERE c.tenant = NEW.tenant AND c.task_id = NEW.task_id
    ORDER BY c.ord;
END;
