-- A player looked up on every server of an organization (POST /v1/logs/player) by an identifier.
-- The identity indexes of migration 5 are keyed by server, so a lookup over 100 servers asked each
-- daily partition for a JSON path of 200 terms, and every row it found was rechecked against all
-- of them. This index is keyed by organization:
--   {"<org_id>": [<player_identifiers>, <target_player_identifiers>, {"": <player_id>}, {"": <target_player_id>}]}
-- where a side without identifiers adds an empty element and a player id only when it holds a
-- colon (the lookup of `kind:value` also matches a player id that is that whole text, and such a
-- text always holds one; other ids add nothing). `jsonb_path_ops` hashes the keys of a path, not
-- array positions, so `$."<org>"[*]."license" == "…"` finds either side with one key, and the
-- empty key is no identifier kind (ingestion refuses empty kinds). Only immutable functions are
-- used (`jsonb_set`, `||`, `jsonb_object`), so the function is inlined wherever it is evaluated.
-- Building it on a large existing `log_events` reads every partition (docs/operations.md).
CREATE FUNCTION log_org_identity(org_id text, player_id text, target_player_id text,
                                 player_identifiers jsonb, target_player_identifiers jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT jsonb_set('{}', ARRAY[org_id], '[]'::jsonb
        || coalesce(player_identifiers, '[]') || coalesce(target_player_identifiers, '[]')
        || CASE WHEN strpos(player_id, ':') > 0 THEN jsonb_object(ARRAY['', player_id]) ELSE '[]' END
        || CASE WHEN strpos(target_player_id, ':') > 0 THEN jsonb_object(ARRAY['', target_player_id]) ELSE '[]' END) $$;
CREATE INDEX log_events_org_identity ON log_events
    USING gin (log_org_identity(org_id, player_id, target_player_id, player_identifiers, target_player_identifiers) jsonb_path_ops)
    WITH (gin_pending_list_limit = 512);

-- Counts of one event type over weeks read the kept hourly rows of that type only: the primary
-- key leads with (server, hour), so a type's 30 days read every (level, type, resource) row of
-- the server. Ingestion mostly adds to existing rows, and an update that changes no indexed column
-- and stays on its page (HOT) adds no index entry: this index takes an entry per new row, and per
-- update that has to move to another page.
CREATE INDEX log_counts_hourly_type ON log_counts_hourly (server_id, event_type, hour);
