-- switchboard task store, schema version 3: replica leases.
--
-- A commit that leaves a task submitted or working records the committing
-- replica (`lease_owner`) and when its lease runs out (`lease_until`,
-- microseconds since the epoch by the database's clock). The holder renews
-- its leases while it lives; a lease that runs out means the replica died,
-- and a survivor fails the task. Other states hold no lease (NULLs).

ALTER TABLE tasks ADD COLUMN lease_owner TEXT;
ALTER TABLE tasks ADD COLUMN lease_until BIGINT;

-- Orphan sweeps: expired leases, oldest first.
CREATE INDEX tasks_lease_until ON tasks (lease_until) WHERE lease_owner IS NOT NULL;

-- Heartbeats: one replica's leases.
CREATE INDEX tasks_lease_owner ON tasks (lease_owner) WHERE lease_owner IS NOT NULL;
