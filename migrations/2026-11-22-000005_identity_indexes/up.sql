-- An identifier search always names one server, but the identifier indexes were keyed by the
-- identifier alone: each daily partition's bitmap returned the player's events on every server
-- (in the benchmark ~400 rows, ~60 on the queried server), and all of them were fetched from the
-- heap before the server filter. Keyed by server and identifiers together (`{"<server_id>":
-- {<identifiers>}}` with `jsonb_path_ops`, which hashes whole paths), the index returns only the
-- queried server's events. Same number of index entries per event as before, so the same ingest
-- cost; rows without identifiers have no entry (the function is strict).
-- `jsonb_build_object` is declared stable only because some argument types print by session
-- settings (timestamptz, say); for text and jsonb its result depends on nothing else, so the
-- wrapper can be declared immutable, which an index expression needs.
CREATE FUNCTION log_identity(server_id text, identifiers jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT jsonb_build_object(server_id, identifiers) $$;

DROP INDEX log_events_player_idents;
DROP INDEX log_events_target_idents;
CREATE INDEX log_events_player_identity ON log_events
    USING gin (log_identity(server_id, player_identifiers) jsonb_path_ops)
    WITH (gin_pending_list_limit = 512);
CREATE INDEX log_events_target_identity ON log_events
    USING gin (log_identity(server_id, target_player_identifiers) jsonb_path_ops)
    WITH (gin_pending_list_limit = 512);
