-- switchboard task store on PostgreSQL, schema version 10: autovacuum keeps
-- up with retention.
--
-- Retention deletes finished tasks in bulk, with their event logs and push
-- rows: at a few thousand tasks a second that is tens of thousands of dead
-- rows a second in `tasks` and `task_events`. Autovacuum's default cost
-- limits (autovacuum_vacuum_cost_delay 2 ms per 200 cost units) hold one
-- worker to a trickle of pages, so a worker started on `task_events` was
-- still on its first pass minutes later while the dead rows piled up:
-- measured (bench/million.sh, STORE=postgres, 7,000 tasks/s, 50,000 kept),
-- after 1M tasks 2.8 M dead events and no completed vacuum of the table,
-- both tables many times their live size and still growing, and
-- PostgreSQL's CPU per task nearly doubled (throughput 0.76 of the first
-- 100k). Unthrottled, the vacuums complete and the tables stay bounded.
--
-- So the tables that retention (and push delivery, for the outbox) churn
-- vacuum without the cost delay. The other autovacuum settings, and every
-- cluster-wide one, stay the DBA's; a DBA who wants these throttled again
-- can `ALTER TABLE … RESET (autovacuum_vacuum_cost_delay)`: no later
-- migration sets it back.

ALTER TABLE tasks SET (autovacuum_vacuum_cost_delay = 0);
ALTER TABLE task_events SET (autovacuum_vacuum_cost_delay = 0);
ALTER TABLE push_outbox SET (autovacuum_vacuum_cost_delay = 0);
