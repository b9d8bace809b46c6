-- switchboard task store, schema version 8: the write probe.
--
-- One row, rewritten when the store checks that writes work: at open, and
-- while the last write failed (a full disk, a read-only file), until one
-- succeeds again. Readiness (`/readyz`) reports the outcome.

CREATE TABLE write_probe (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    probed_micros INTEGER NOT NULL
);
