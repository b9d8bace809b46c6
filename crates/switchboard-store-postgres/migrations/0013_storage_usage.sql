-- switchboard task store on PostgreSQL, schema version 13: the bytes each
-- owner holds, for the storage quota (`switchboard_core::store::quota`).
--
-- What an owner (tenant, principal) holds is what the store keeps of its
-- tasks: each snapshot's JSON and each logged event's JSON, in bytes. Each
-- task row now carries its own share: `snapshot_bytes`, the bytes of
-- `task_json`, and `log_bytes`, the bytes of its events in `task_events`.
-- The commit statements set both (the snapshot's size, and the log's plus
-- what the commit appends), so nothing is measured by reading JSON back:
-- `octet_length(task_json::text)` would detoast the stored snapshot at
-- every commit, and a purge would read every event it deletes.
--
-- `storage_usage` holds the sum per owner, kept by statement triggers on
-- `tasks` that read the statement's rows as transition tables, so a group
-- commit of many tasks costs one upsert per owner, not one per task or
-- event, in the commit's own transaction. Deleting a task row (retention's
-- purge, which deletes the task's log in the same statement: the log has
-- no foreign key, see 0008) takes off its snapshot and its log at once.
--
-- Lock order: every commit statement first locks the usage rows of its
-- owners in (tenant, owner) order (creating missing ones), and the
-- triggers upsert in the same order, so two statements never wait for
-- each other's usage rows in a cycle. The commit statements read the
-- locked rows for the quota check (see the crate docs, "Storage quota").
--
-- Filled from the rows already stored, under the table lock ALTER TABLE
-- takes, so no commit is missed between the fill and the triggers (writes
-- wait for this migration's transaction). The fill rewrites `tasks` once.

ALTER TABLE tasks
    ADD COLUMN snapshot_bytes BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN log_bytes      BIGINT NOT NULL DEFAULT 0;

UPDATE tasks AS t SET
    snapshot_bytes = octet_length(t.task_json::text),
    log_bytes = COALESCE((SELECT sum(octet_length(e.event_json::text)) FROM task_events AS e
                          WHERE e.tenant = t.tenant AND e.task_id = t.id), 0);

CREATE TABLE storage_usage (
    tenant TEXT COLLATE "C" NOT NULL,
    owner  TEXT COLLATE "C" NOT NULL,
    bytes  BIGINT NOT NULL,
    PRIMARY KEY (tenant, owner)
);

INSERT INTO storage_usage (tenant, owner, bytes)
SELECT tenant, owner, sum(snapshot_bytes + log_bytes)
FROM tasks
GROUP BY tenant, owner;

-- Adds `bytes` per (tenant, owner) of the rows given, in key order.
CREATE FUNCTION storage_usage_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO storage_usage AS u (tenant, owner, bytes)
    SELECT tenant, owner, sum(snapshot_bytes + log_bytes)
    FROM added
    GROUP BY tenant, owner
    ORDER BY tenant, owner
    ON CONFLICT (tenant, owner) DO UPDATE SET bytes = u.bytes + excluded.bytes;
    RETURN NULL;
END;
$$;

-- An update may change a task's sizes (a commit) or nothing of them (a
-- lease renewal): only owners whose sum changed are written.
CREATE FUNCTION storage_usage_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO storage_usage AS u (tenant, owner, bytes)
    SELECT tenant, owner, sum(bytes)
    FROM (SELECT tenant, owner, snapshot_bytes + log_bytes AS bytes FROM after_rows
          UNION ALL
          SELECT tenant, owner, -(snapshot_bytes + log_bytes) FROM before_rows) AS d
    GROUP BY tenant, owner
    HAVING sum(bytes) <> 0
    ORDER BY tenant, owner
    ON CONFLICT (tenant, owner) DO UPDATE SET bytes = u.bytes + excluded.bytes;
    RETURN NULL;
END;
$$;

CREATE FUNCTION storage_usage_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO storage_usage AS u (tenant, owner, bytes)
    SELECT tenant, owner, -sum(snapshot_bytes + log_bytes)
    FROM removed
    GROUP BY tenant, owner
    ORDER BY tenant, owner
    ON CONFLICT (tenant, owner) DO UPDATE SET bytes = u.bytes + excluded.bytes;
    RETURN NULL;
END;
$$;

CREATE TRIGGER storage_usage_insert AFTER INSERT ON tasks
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION storage_usage_inserted();
CREATE TRIGGER storage_usage_update AFTER UPDATE ON tasks
    REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storage_usage_updated();
CREATE TRIGGER storage_usage_delete AFTER DELETE ON tasks
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION storage_usage_deleted();
