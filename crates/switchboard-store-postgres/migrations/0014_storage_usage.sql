-- switchboard task store on PostgreSQL, schema version 14: the bytes each
-- owner holds, for the storage quota (`switchboard_core::store::quota`).
--
-- A task row carries its own sizes: `snapshot_bytes`, the length of its
-- `task_json`, and `log_bytes`, the lengths of its `task_events.event_json`
-- added up, as the JSON text the store wrote. A commit sets them in the
-- statement that writes the snapshot (it knows what it writes), and `grew`,
-- what that commit added to its owner: the new sizes less the old ones,
-- which the same UPDATE still sees. The commit statement then adds its rows'
-- `grew`, summed per owner, to `storage_usage`; a purge takes off what the
-- rows it deletes carry. No trigger and no per-event work.
--
-- `storage_usage` holds each (tenant, owner)'s count in several `shard`
-- rows, one per group-commit writer (a writer adds to its own), so that the
-- writers of one or several replicas never wait for each other's lock on an
-- owner's count; what an owner holds is the sum of its rows.

ALTER TABLE tasks
    ADD COLUMN snapshot_bytes BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN log_bytes BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN grew BIGINT NOT NULL DEFAULT 0;

UPDATE tasks AS t
SET snapshot_bytes = octet_length(t.task_json::text),
    log_bytes = COALESCE((SELECT sum(octet_length(e.event_json::text)) FROM task_events AS e
                          WHERE e.tenant = t.tenant AND e.task_id = t.id), 0);

CREATE TABLE storage_usage (
    tenant TEXT COLLATE "C" NOT NULL,
    owner  TEXT COLLATE "C" NOT NULL,
    shard  SMALLINT NOT NULL,
    bytes  BIGINT NOT NULL,
    PRIMARY KEY (tenant, owner, shard)
);

INSERT INTO storage_usage (tenant, owner, shard, bytes)
SELECT tenant, owner, 0, sum(snapshot_bytes + log_bytes)
FROM tasks
GROUP BY tenant, owner;
