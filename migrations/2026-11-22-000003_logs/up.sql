CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- One row per accepted batch; (server_id, batch_id) is the idempotency key of ingestion.
CREATE TABLE log_batches (
    server_id       text NOT NULL REFERENCES servers (id) ON DELETE CASCADE,
    batch_id        text NOT NULL,
    org_id          text NOT NULL,
    digest          bytea NOT NULL,
    accepted_events integer NOT NULL,
    ingested_at     timestamptz NOT NULL,
    PRIMARY KEY (server_id, batch_id)
);
CREATE INDEX log_batches_ingested ON log_batches (ingested_at);

CREATE SEQUENCE log_events_id_seq AS bigint;

-- Events, range-partitioned by occurred_at (daily partitions made ahead by `stowctl logs maintain`).
CREATE TABLE log_events (
    id                        bigint NOT NULL DEFAULT nextval('log_events_id_seq'),
    org_id                    text NOT NULL,
    server_id                 text NOT NULL,
    cfx_id                    text NOT NULL,
    batch_id                  text NOT NULL,
    event_id                  text NOT NULL,
    level                     text NOT NULL,
    event_type                text NOT NULL,
    occurred_at               timestamptz NOT NULL,
    ingested_at               timestamptz NOT NULL,
    player_id                 text,
    target_player_id          text,
    player_identifiers        jsonb,
    target_player_identifiers jsonb,
    resource                  text,
    trace_id                  text,
    environment               text,
    message                   text NOT NULL,
    data                      jsonb
) PARTITION BY RANGE (occurred_at);

-- Safety net: an event whose day has no partition yet still lands.
CREATE TABLE log_events_default PARTITION OF log_events DEFAULT;

-- Index set chosen with the query targets (see docs/benchmarks.md for the ingest cost of each).
CREATE INDEX log_events_server_time ON log_events (server_id, occurred_at DESC, id DESC);
CREATE INDEX log_events_server_level ON log_events (server_id, level, occurred_at DESC, id DESC);
CREATE INDEX log_events_server_type ON log_events (server_id, event_type, occurred_at DESC, id DESC);
CREATE INDEX log_events_server_resource ON log_events (server_id, resource, occurred_at DESC, id DESC) WHERE resource IS NOT NULL;
CREATE INDEX log_events_server_player ON log_events (server_id, player_id, occurred_at DESC, id DESC) WHERE player_id IS NOT NULL;
CREATE INDEX log_events_server_target ON log_events (server_id, target_player_id, occurred_at DESC, id DESC) WHERE target_player_id IS NOT NULL;
CREATE INDEX log_events_player_idents ON log_events USING gin (player_identifiers jsonb_path_ops);
CREATE INDEX log_events_target_idents ON log_events USING gin (target_player_identifiers jsonb_path_ops);
CREATE INDEX log_events_message_trgm ON log_events USING gin (message gin_trgm_ops);

-- Monthly usage per organization (accepted events only).
CREATE TABLE usage_counters (
    org_id     text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    month      date NOT NULL,
    log_events bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (org_id, month)
);
