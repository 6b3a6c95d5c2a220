-- Live tail (GET /v1/logs/tail).
--
-- commit_xid: the id of the transaction that inserted the batch (xid8, as bigint). A reader that
-- takes only batches below its snapshot's xmin (every transaction older than that has ended)
-- never sees a batch turn up later below what it has read, whichever instance ingested it: a
-- gap-free order that a cursor (the SSE event id) can resume from. occurred_from/occurred_to
-- bound the batch's events in time, so they are found through the (server_id, occurred_at)
-- index; rows from before this migration have none (the tail falls back to the ingestion window).
ALTER TABLE log_batches
    ADD COLUMN commit_xid bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
    ADD COLUMN occurred_from timestamptz,
    ADD COLUMN occurred_to timestamptz;
CREATE INDEX log_batches_server_xid ON log_batches (server_id, commit_xid);

-- Open tails, leased: a row per open tail, renewed while it runs, so the per-organization limit
-- holds across instances and a crashed instance's tails expire.
CREATE TABLE log_tails (
    id         text PRIMARY KEY,
    org_id     text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL
);
CREATE INDEX log_tails_org ON log_tails (org_id);
