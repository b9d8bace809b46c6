-- switchboard task store, schema version 10: the storage counter moves
-- once per commit statement, not once per written row.
--
-- Version 9 kept `storage_usage` with triggers: one per snapshot write and
-- one per appended event (a lookup of the event's task for its owner, then
-- an update of the owner's row), and a deletion summed the task's log. Now:
--
-- - `tasks.log_bytes` holds the `octet_length` of the task's
--   `task_events.event_json` rows, added to by the statement that writes
--   the snapshot, so a deletion reads the row it deletes and no log;
-- - the commit itself adds what it grew its owner by to `storage_usage`:
--   a group commit with one statement for all the owners it wrote (the
--   writer knows each snapshot it replaced), a lone commit from
--   `tasks.grew`, which its snapshot write sets to the new sizes less the
--   old ones;
-- - only deletions (retention) keep a trigger.

ALTER TABLE tasks ADD COLUMN log_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN grew INTEGER NOT NULL DEFAULT 0;

UPDATE tasks
SET log_bytes = COALESCE((SELECT SUM(octet_length(e.event_json)) FROM task_events AS e
                          WHERE e.tenant = tasks.tenant AND e.task_id = tasks.id), 0);

DROP TRIGGER storage_usage_task_insert;
DROP TRIGGER storage_usage_task_update;
DROP TRIGGER storage_usage_task_delete;
DROP TRIGGER storage_usage_event_insert;

CREATE TRIGGER storage_usage_task_delete AFTER DELETE ON tasks
BEGIN
    UPDATE storage_usage
    SET bytes = bytes - octet_length(OLD.task_json) - OLD.log_bytes
    WHERE tenant = OLD.tenant AND owner = OLD.owner;
END;
