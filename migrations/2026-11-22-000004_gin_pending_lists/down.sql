DROP INDEX log_events_player_idents;
DROP INDEX log_events_target_idents;
CREATE INDEX log_events_player_idents ON log_events USING gin (player_identifiers jsonb_path_ops);
CREATE INDEX log_events_target_idents ON log_events USING gin (target_player_identifiers jsonb_path_ops);
