DROP INDEX log_events_player_identity;
DROP INDEX log_events_target_identity;
CREATE INDEX log_events_player_idents ON log_events USING gin (player_identifiers jsonb_path_ops)
    WITH (gin_pending_list_limit = 512);
CREATE INDEX log_events_target_idents ON log_events USING gin (target_player_identifiers jsonb_path_ops)
    WITH (gin_pending_list_limit = 512);
DROP FUNCTION log_identity(text, jsonb);
