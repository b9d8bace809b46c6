-- switchboard task store on PostgreSQL, schema version 8: the event log
-- without a foreign key to its task.
--
-- The foreign key from `task_events` to `tasks` ran a referential check per
-- appended event: a query, and a FOR KEY SHARE lock on the task row, which
-- PostgreSQL writes to the WAL. Measured with bench/pg.sh (PROFILE=1):
-- 3 such checks per task, 3 of its 14 WAL records, and the check the most
-- expensive statement PostgreSQL ran per task.
--
-- It guarded nothing the store does not already ensure: events are only
-- appended by the commit statement that wrote their task's row in the same
-- statement (see the crate docs, "How a commit works"), and the one delete
-- of tasks, retention's purge, now deletes their events in the same
-- statement (it relied on ON DELETE CASCADE before). The (tenant, task_id,
-- seq) primary key, which keeps a log from holding one sequence twice,
-- stays.

ALTER TABLE task_events DROP CONSTRAINT IF EXISTS task_events_tenant_task_id_fkey;
