-- switchboard task store on PostgreSQL, schema version 13: the
-- concurrent-task quota counted across replicas.
--
-- `Quotas::max_active_tasks_per_principal` bounds the tasks one caller has
-- worked on at once. Each replica counts its own runs in memory; with
-- several replicas a caller could have N times the quota, so the replicas
-- also count here (`switchboard_core::cluster`, "Shared quotas"):
--
-- - `run_quota` holds, per caller (`key`: SHA-256 of the engine's quota
--   name, so its length is fixed), the places taken by every replica. A
--   place is taken by `INSERT … ON CONFLICT DO UPDATE … WHERE held < max`:
--   the row is locked and the condition re-read on its latest version, so
--   two replicas never both take the last place.
-- - `run_quota_held` holds the same places per replica, in the same
--   statement, so that the places of a replica that dies are given back
--   when its row in `replicas` expires (the heartbeat that deletes the row
--   subtracts them), and those of one that leaves when it leaves.
--
-- Rows left at zero are deleted by the heartbeats.

CREATE TABLE run_quota (
    key  BYTEA  PRIMARY KEY,
    held BIGINT NOT NULL
);

CREATE TABLE run_quota_held (
    key     BYTEA  NOT NULL,
    replica TEXT   NOT NULL,
    held    BIGINT NOT NULL,
    PRIMARY KEY (replica, key)
);
