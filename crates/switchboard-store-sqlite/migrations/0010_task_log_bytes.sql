-- switchboard task store, schema version 10: each task carries the size of
-- its event log, so the storage counter moves once per commit.
--
-- Version 9 kept `storage_usage` with a trigger per appended event (a
-- lookup of the event's task for its owner, then an update of the owner's
-- row) and summed a task's log when it was deleted. Now `tasks.log_bytes`
-- holds the `octet_length` of the task's `task_events.event_json` rows: the
-- commit that appends events adds their size to it in the same statement
-- that replaces the snapshot, and the triggers on `tasks` alone keep
-- `storage_usage` — one update per commit, and none per event; a deletion
-- reads the row it deletes and no log.

ALTER TABLE tasks ADD COLUMN log_bytes INTEGER NOT NULL DEFAULT 0;

UPDATE tasks
SET log_bytes = COALESCE((SELECT SUM(octet_length(e.event_json)) FROM task_events AS e
                          WHERE e.tenant = tasks.tenant AND e.task_id = tasks.id), 0);

DROP TRIGGER storage_usage_task_insert;
DROP TRIGGER storage_usage_task_update;
DROP TRIGGER storage_usage_task_delete;
DROP TRIGGER storage_usage_event_insert;

CREATE TRIGGER storage_usage_task_insert AFTER INSERT ON tasks
BEGIN
    INSERT INTO storage_usage (tenant, owner, bytes)
    VALUES (NEW.tenant, NEW.owner, octet_length(NEW.task_json) + NEW.log_bytes)
    ON CONFLICT (tenant, owner) DO UPDATE SET bytes = bytes + excluded.bytes;
END;

CREATE TRIGGER storage_usage_task_update AFTER UPDATE OF task_json, log_bytes ON tasks
BEGIN
    UPDATE storage_usage
    SET bytes = bytes + octet_length(NEW.task_json) + NEW.log_bytes
                - octet_length(OLD.task_json) - OLD.log_bytes
    WHERE tenant = NEW.tenant AND owner = NEW.owner;
END;

CREATE TRIGGER storage_usage_task_delete AFTER DELETE ON tasks
BEGIN
    UPDATE storage_usage
    SET bytes = bytes - octet_length(OLD.task_json) - OLD.log_bytes
    WHERE tenant = OLD.tenant AND owner = OLD.owner;
END;
