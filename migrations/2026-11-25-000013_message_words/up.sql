-- Issue 25: the per-event indexes that cost ingestion the most are replaced by cheaper ones
-- that serve the same searches (docs/benchmarks.md, "Trigrams per batch").
--
-- Message search. The trigram index on every event's message made ~37 index entries per event.
-- Instead, each run of up to 50 events of a batch (in time order, within one UTC day) stores the
-- distinct words of its messages (cut at ASCII characters other than letters and digits), each
-- between spaces, and its time span; a trigram index over the words, keyed by server,
-- tells a search which spans of the server's events can hold a match. The events of those spans
-- are still checked against the whole term, so what a search matches is unchanged
-- (logs_core::words explains why no match is lost). Runs are written by ingestion in the batch's
-- transaction, like its events. The trigram GIN is keyed by server (through btree_gin) and not by
-- time: a time range in a GIN gathers every run of every server in it before the words narrow
-- anything (13 ms for a day of the benchmark's set, against 4 ms without); a btree by server and
-- start serves the time bound, and reads a frequent term's runs in order.
CREATE EXTENSION IF NOT EXISTS btree_gin;

CREATE TABLE log_runs (
    server_id     text NOT NULL,
    occurred_from timestamptz NOT NULL,
    occurred_to   timestamptz NOT NULL,
    words         text NOT NULL
);
CREATE INDEX log_runs_words ON log_runs USING gin (server_id, words gin_trgm_ops);
CREATE INDEX log_runs_server_time ON log_runs (server_id, occurred_from);

-- the words of one message, by the rule of logs_core::words (this SQL is used only for the
-- events stored before this migration, and by the benchmark's bulk load: log_run_words below)
CREATE FUNCTION log_message_words(message text) RETURNS SETOF text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT w FROM regexp_split_to_table(message, '[\u0001-\u002f\u003a-\u0040\u005b-\u0060\u007b-\u007f]+') AS w WHERE w <> '' $$;

-- the words text of a run of these messages: its distinct words, each between spaces
CREATE FUNCTION log_run_words(messages text[]) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT ' ' || coalesce((SELECT string_agg(DISTINCT w, ' ') || ' '
                                  FROM unnest(messages) AS m, log_message_words(m) AS w), '') $$;

-- the events stored before this migration, in the runs ingestion would have made of their batches
INSERT INTO log_runs (server_id, occurred_from, occurred_to, words)
SELECT server_id, min(occurred_at), max(occurred_at), log_run_words(array_agg(message))
FROM (SELECT server_id, batch_id, occurred_at, message,
             date_trunc('day', occurred_at AT TIME ZONE 'UTC') AS day,
             (row_number() OVER (PARTITION BY server_id, batch_id, date_trunc('day', occurred_at AT TIME ZONE 'UTC')
                                 ORDER BY occurred_at, id) - 1) / 50 AS run
      FROM log_events) e
GROUP BY server_id, batch_id, day, run;

DROP INDEX log_events_message_trgm;

-- Player filter (`playerId`: the event's player or its target). Two btrees of (server, player,
-- time) made two entries per event with a player; one GIN of server-scoped tokens
-- (`p:<server>:<player>`, `t:<server>:<target>`) serves the same filter for about the cost of one.
-- A player's events are few, so they are fetched as a bitmap and sorted rather than read in order.
CREATE FUNCTION log_people(server_id text, player_id text, target_player_id text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT array_remove(ARRAY['p:' || server_id || ':' || player_id,
                                    't:' || server_id || ':' || target_player_id], NULL) $$;

DROP INDEX log_events_server_player;
DROP INDEX log_events_server_target;
CREATE INDEX log_events_people ON log_events USING gin (log_people(server_id, player_id, target_player_id))
    WITH (gin_pending_list_limit = 512);
