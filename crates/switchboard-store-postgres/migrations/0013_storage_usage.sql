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
-- The quota is decided by the commit statements (see the crate docs,
-- "Storage quota"). A one-commit statement locks its owner's row first and
-- decides against it. A group statement decides against the counts as its
-- snapshot saw them and names, in the transaction-local setting
-- `switchboard.storage_owners`, its owners (a JSON array of [tenant, owner,
-- ceiling]: the highest count at which its decisions for that owner still
-- hold, or null). The first of the statement's triggers then locks those
-- owners' rows in (tenant, owner) order, creating missing ones, and raises
-- SQLSTATE SBQ01 if a count moved past its ceiling meanwhile (another
-- transaction's commit): the whole statement is undone, and the store
-- writes its commits one at a time. Every row a statement updates is thus
-- locked in key order before any other (the one-commit statements lock
-- one), so two statements never wait for each other's rows in a cycle.
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

-- Locks the counts of the owners a group commit named and checks their
-- ceilings (see above), once per statement: the setting is cleared.
CREATE FUNCTION storage_usage_verify() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    named TEXT := current_setting('switchboard.storage_owners', true);
    moved RECORD;
BEGIN
    IF named IS NULL OR named = '' THEN
        RETURN;
    END IF;
    PERFORM set_config('switchboard.storage_owners', '', true);
    WITH o AS (
        SELECT e ->> 0 AS tenant, e ->> 1 AS owner, (e ->> 2)::BIGINT AS ceiling
        FROM json_array_elements(named::json) AS e
    ), locked AS (
        INSERT INTO storage_usage AS u (tenant, owner, bytes)
        SELECT tenant, owner, 0 FROM o ORDER BY tenant COLLATE "C", owner COLLATE "C"
        ON CONFLICT (tenant, owner) DO UPDATE SET bytes = u.bytes
        RETURNING u.tenant, u.owner, u.bytes
    )
    SELECT l.owner, l.bytes, o.ceiling INTO moved
    FROM locked AS l JOIN o ON o.tenant = l.tenant AND o.owner = l.owner
    WHERE l.bytes > o.ceiling
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'the storage count of % moved to % bytes, past % during the commit',
            moved.owner, moved.bytes, moved.ceiling
            USING ERRCODE = 'SBQ01';
    END IF;
END;
$$;

-- Adds `bytes` per (tenant, owner) of the rows given, in key order.
CREATE FUNCTION storage_usage_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM storage_usage_verify();
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
    PERFORM storage_usage_verify();
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
    PERFORM storage_usage_verify();
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
