-- GIN indexes buffer new entries in a "pending list" (fastupdate) that every search of the index
-- reads in full. With the default 4 MB limit an identifier search read up to ~500 pending pages
-- per partition. A 512 kB limit bounds that for the identifier indexes at no measurable ingest
-- cost (COPY of 500k events: within noise). The trigram index on `message` keeps the default:
-- merging its pending list 8x as often made ingestion ~45% slower, and a message search reads
-- only today's partition's list (closed partitions are vacuumed by the maintenance task).
-- Partition indexes inherit these options from the partitioned index when partitions are made;
-- a partitioned index's options cannot be ALTERed, so the two indexes are rebuilt.
DROP INDEX log_events_player_idents;
DROP INDEX log_events_target_idents;
CREATE INDEX log_events_player_idents ON log_events USING gin (player_identifiers jsonb_path_ops)
    WITH (gin_pending_list_limit = 512);
CREATE INDEX log_events_target_idents ON log_events USING gin (target_player_identifiers jsonb_path_ops)
    WITH (gin_pending_list_limit = 512);
