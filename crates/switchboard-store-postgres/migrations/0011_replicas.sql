-- switchboard task store on PostgreSQL, schema version 11: the live
-- replicas.
--
-- Every replica store keeps a row here while it runs: its heartbeat renews
-- `alive_until` (the database clock in µs, like the task leases) and counts
-- the rows still alive, so the replicas can share the group-commit budget
-- (`PgOptions::commit_writers`) instead of each running its own: the
-- database then runs as many commit statements at once, with batches as
-- big, whatever the number of replicas. A replica that stops deletes its
-- row; one that dies leaves a row that expires with its leases and is
-- deleted by the next heartbeat of another.

CREATE TABLE replicas (
    id          TEXT   PRIMARY KEY,
    alive_until BIGINT NOT NULL
);
