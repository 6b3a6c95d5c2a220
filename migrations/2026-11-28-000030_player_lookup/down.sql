DROP INDEX IF EXISTS log_counts_hourly_type;
DROP INDEX IF EXISTS log_events_org_identity;
DROP FUNCTION IF EXISTS log_org_identity(text, text, text, jsonb, jsonb);
