-- switchboard task store on PostgreSQL, schema version 9: the status-time
-- indexes in ascending order.
--
-- `tasks_list`, `tasks_list_context` (0001) and `tasks_finished` (0004) were
-- declared `status_micros DESC, id DESC`, the order ListTasks returns. But a
-- task's status time is (nearly) the time of its commit, so new entries have
-- the largest key: in a descending index that is the *leftmost* leaf page.
-- A B-tree packs a full page before splitting only when the page is the
-- rightmost one (it then keeps the left half 90 % full); any other page
-- splits in two halves, and as the inserts keep going to the left half, the
-- right half stays half empty for good. So these three indexes grew at about
-- twice the size their entries need, and every task wrote (and a checkpoint
-- or eviction flushed) twice as many of their pages.
--
-- In ascending order the same entries go to the rightmost page, which
-- splits 90/10. A B-tree is read backward as cheaply as forward, so the
-- same indexes still serve `ORDER BY status_micros DESC, id DESC` (ListTasks,
-- its keyset cursor `(status_micros, id) < (…)`) and the purge's ascending
-- scans. Same names, same columns, same predicate: only the direction.

DROP INDEX tasks_list;
CREATE INDEX tasks_list
    ON tasks (tenant, owner, status_micros, id);

DROP INDEX tasks_list_context;
CREATE INDEX tasks_list_context
    ON tasks (tenant, owner, context_id, status_micros, id);

DROP INDEX tasks_finished;
CREATE INDEX tasks_finished
    ON tasks (status_micros, id)
    WHERE state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED',
                    'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED');
