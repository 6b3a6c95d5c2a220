-- Lifecycle rules (docs/api.md "Lifecycle rules"): per folder, objects older than `days` are
-- deleted by the API host's maintenance; `objects.keep` exempts one object.
ALTER TABLE objects ADD COLUMN keep boolean NOT NULL DEFAULT false;
CREATE TABLE lifecycle_rules (
    org_id     text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    folder     text COLLATE "C" NOT NULL,
    days       integer NOT NULL CHECK (days BETWEEN 1 AND 3650),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (org_id, folder)
);

-- the service's own changes (lifecycle expiry) in the audit log
ALTER TABLE audit_events DROP CONSTRAINT audit_events_actor_kind_check,
    ADD CONSTRAINT audit_events_actor_kind_check
        CHECK (actor_kind IN ('key', 'member', 'operator', 'service'));
ALTER TABLE audit_events DROP CONSTRAINT audit_events_via_check,
    ADD CONSTRAINT audit_events_via_check
        CHECK (via IN ('api', 'console', 'stowctl', 'maintenance'));

-- Usage per top-level folder (GET /v1/objects/usage). Every statement that changes objects
-- appends its net change per folder to object_usage_deltas (an insert: concurrent uploads into
-- one folder never wait on a shared counter row); the maintenance folds the deltas into
-- object_usage; a read adds both.
CREATE FUNCTION object_top_folder(key text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT CASE WHEN strpos(key, '/') > 0 THEN split_part(key, '/', 1) ELSE '' END $$;
CREATE TABLE object_usage (
    org_id  text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    folder  text COLLATE "C" NOT NULL,
    objects bigint NOT NULL,
    bytes   bigint NOT NULL,
    PRIMARY KEY (org_id, folder)
);
-- no foreign key: an organization's deletion cascades to its objects, whose trigger appends
-- deltas for it; the roll-up drops deltas of organizations that are gone
CREATE TABLE object_usage_deltas (
    id      bigserial PRIMARY KEY,
    org_id  text NOT NULL,
    folder  text COLLATE "C" NOT NULL,
    objects bigint NOT NULL,
    bytes   bigint NOT NULL
);
CREATE INDEX object_usage_deltas_org ON object_usage_deltas (org_id);
INSERT INTO object_usage (org_id, folder, objects, bytes)
    SELECT org_id, object_top_folder(key), count(*), sum(size) FROM objects GROUP BY 1, 2;

CREATE FUNCTION objects_usage_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO object_usage_deltas (org_id, folder, objects, bytes)
        SELECT org_id, object_top_folder(key), count(*), sum(size) FROM new_rows GROUP BY 1, 2;
    RETURN NULL;
END
$$;
CREATE FUNCTION objects_usage_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO object_usage_deltas (org_id, folder, objects, bytes)
        SELECT org_id, object_top_folder(key), -count(*), -sum(size) FROM old_rows GROUP BY 1, 2;
    RETURN NULL;
END
$$;
CREATE FUNCTION objects_usage_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO object_usage_deltas (org_id, folder, objects, bytes)
        SELECT org_id, object_top_folder(key), sum(n), sum(size)
          FROM (SELECT org_id, key, size, 1 AS n FROM new_rows
                UNION ALL SELECT org_id, key, -size, -1 FROM old_rows) c
         GROUP BY 1, 2
        HAVING sum(n) <> 0 OR sum(size) <> 0;
    RETURN NULL;
END
$$;
CREATE TRIGGER objects_usage_insert AFTER INSERT ON objects
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION objects_usage_added();
CREATE TRIGGER objects_usage_delete AFTER DELETE ON objects
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION objects_usage_removed();
CREATE TRIGGER objects_usage_update AFTER UPDATE ON objects
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION objects_usage_changed();
