-- The trigram index of object search (migration 24) was on `key` itself, and pg_trgm's operator
-- class also answers `=`: with some statistics the planner chose it for `key = ANY($keys)` (the
-- deletes of bulk-delete, delete-folder and lifecycle, the folder view's lookups) and one
-- 1,000-key delete took seconds instead of milliseconds (a bitmap of every trigram of every key).
-- On an expression equality never matches it; search asks `(key || '') ILIKE …` (the same text,
-- the same collation).
DROP INDEX objects_key_trgm;
CREATE INDEX objects_key_trgm ON objects USING gin ((key || '') gin_trgm_ops);
