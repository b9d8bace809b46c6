-- switchboard task store, schema version 9: bytes held per owner.
--
-- `storage_usage` holds, per (tenant, owner), the bytes of its tasks'
-- snapshots and event logs: `octet_length` of `tasks.task_json` and of
-- `task_events.event_json`, the JSON as stored. The triggers keep it in
-- the transaction of every write and deletion, so the storage quota is a
-- lookup at commit (`switchboard_core::store::quota`), never a scan, and
-- retention gives the space back by itself.
--
-- A task's owner never changes. Event rows leave only with their task
-- (ON DELETE CASCADE), so the task's BEFORE DELETE trigger counts its log
-- off while the rows are still there.

CREATE TABLE storage_usage (
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    PRIMARY KEY (tenant, owner)
) WITHOUT ROWID;

INSERT INTO storage_usage (tenant, owner, bytes)
SELECT t.tenant, t.owner,
       SUM(octet_length(t.task_json)
           + COALESCE((SELECT SUM(octet_length(e.event_json)) FROM task_events AS e
                       WHERE e.tenant = t.tenant AND e.task_id = t.id), 0))
FROM tasks AS t
GROUP BY t.tenant, t.owner;

CREATE TRIGGER storage_usage_task_insert AFTER INSERT ON tasks
BEGIN
    INSERT INTO storage_usage (tenant, owner, bytes)
    VALUES (NEW.tenant, NEW.owner, octet_length(NEW.task_json))
    ON CONFLICT (tenant, owner) DO UPDATE SET bytes = bytes + excluded.bytes;
END;

CREATE TRIGGER storage_usage_task_update AFTER UPDATE OF task_json ON tasks
BEGIN
    UPDATE storage_usage
    SET bytes = bytes + octet_length(NEW.task_json) - octet_length(OLD.task_json)
    WHERE tenant = NEW.tenant AND owner = NEW.owner;
END;

CREATE TRIGGER storage_usage_task_delete BEFORE DELETE ON tasks
BEGIN
    UPDATE storage_usage
    SET bytes = bytes - octet_length(OLD.task_json)
        - COALESCE((SELECT SUM(octet_length(e.event_json)) FROM task_events AS e
                    WHERE e.tenant = OLD.tenant AND e.task_id = OLD.id), 0)
    WHERE tenant = OLD.tenant AND owner = OLD.owner;
END;

CREATE TRIGGER storage_usage_event_insert AFTER INSERT ON task_events
BEGIN
    UPDATE storage_usage
    SET bytes = bytes + octet_length(NEW.event_json)
    WHERE (tenant, owner) =
          (SELECT tenant, owner FROM tasks WHERE tenant = NEW.tenant AND id = NEW.task_id);
END;
