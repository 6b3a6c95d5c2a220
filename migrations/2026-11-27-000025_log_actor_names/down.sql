DROP INDEX IF EXISTS log_events_actor_name;
DROP FUNCTION IF EXISTS log_actor_name(jsonb);
