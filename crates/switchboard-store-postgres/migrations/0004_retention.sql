-- switchboard task store, schema version 4: retention.
--
-- Finished tasks by status time, for TaskStore::purge.
CREATE INDEX tasks_finished
    ON tasks (status_micros DESC, id DESC)
    WHERE state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED',
                    'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED');
