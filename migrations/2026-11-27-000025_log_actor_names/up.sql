-- Players looked up by name (POST /v1/logs/players): the name of an event's player is the first
-- of data.playerName, data.player_name and data.name that is present (logs_core::players::
-- actor_name), lowercased; only events that carry one are in the index.
CREATE FUNCTION log_actor_name(d jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT lower(coalesce(d -> 'playerName', d -> 'player_name', d -> 'name') #>> '{}') $$;
CREATE INDEX log_events_actor_name ON log_events (server_id, log_actor_name(data), occurred_at DESC, id DESC)
    WHERE log_actor_name(data) IS NOT NULL;
