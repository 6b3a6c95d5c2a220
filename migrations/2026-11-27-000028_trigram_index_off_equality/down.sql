DROP INDEX objects_key_trgm;
CREATE INDEX objects_key_trgm ON objects USING gin (key gin_trgm_ops);
