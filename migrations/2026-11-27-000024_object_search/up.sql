-- Object search (POST /v1/objects/search): a text anywhere in the path, metadata values, and
-- pages sorted by last modified or size (ties by path) that an index walks in order.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX objects_key_trgm ON objects USING gin (key gin_trgm_ops);
CREATE INDEX objects_org_updated ON objects (org_id, updated_at, key);
CREATE INDEX objects_org_size ON objects (org_id, size, key);
-- the values of an object's metadata (a map of strings), for "any value equals one of these"
CREATE FUNCTION object_metadata_values(m jsonb) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT coalesce(array_agg(value), '{}') FROM jsonb_each_text(m) $$;
CREATE INDEX objects_metadata_values ON objects USING gin (object_metadata_values(metadata));
