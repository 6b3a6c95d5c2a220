DROP INDEX log_events_people;
DROP FUNCTION log_people(text, text, text);
CREATE INDEX log_events_server_player ON log_events (server_id, player_id, occurred_at DESC, id DESC) WHERE player_id IS NOT NULL;
CREATE INDEX log_events_server_target ON log_events (server_id, target_player_id, occurred_at DESC, id DESC) WHERE target_player_id IS NOT NULL;
CREATE INDEX log_events_message_trgm ON log_events USING gin (message gin_trgm_ops);
DROP TABLE log_runs;
DROP FUNCTION log_run_words(text[]);
DROP FUNCTION log_message_words(text);
