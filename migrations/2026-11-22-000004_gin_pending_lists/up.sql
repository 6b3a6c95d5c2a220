-- GIN indexes buffer new entries in a "pending list" (fastupdate) that every search of the index
-- reads in full. With the default 4 MB limit, a search of today's partition read up to ~500
-- pending pages per index (the identifier benchmark case: 57 ms p95). A 512 kB limit bounds
-- that work; inserting backends merge the list into the index more often, in small batches.
-- Partition indexes inherit these options from the partitioned index when partitions are made.
-- (A partitioned index's options cannot be ALTERed, so the indexes are rebuilt.)
DROP INDEX log_events_player_idents;
DROP INDEX log_events_target_idents;
DROP INDEX log_events_message_trgm;
CREATE INDEX log_events_player_idents ON log_events USING gin (player_identifiers jsonb_path_ops)
    WITH (gin_pending_list_limit = 512);
CREATE INDEX log_events_target_idents ON log_events USING gin (target_player_identifiers jsonb_path_ops)
    WITH (gin_pending_list_limit = 512);
CREATE INDEX log_events_message_trgm ON log_events USING gin (message gin_trgm_ops)
    WITH (gin_pending_list_limit = 512);
