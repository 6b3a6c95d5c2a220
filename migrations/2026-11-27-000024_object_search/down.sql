DROP INDEX IF EXISTS objects_metadata_values;
DROP FUNCTION IF EXISTS object_metadata_values(jsonb);
DROP INDEX IF EXISTS objects_org_size;
DROP INDEX IF EXISTS objects_org_updated;
DROP INDEX IF EXISTS objects_key_trgm;
