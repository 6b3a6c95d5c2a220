-- Counts over time with no filter but levels (the explorer's unfiltered counts of a day or a
-- week): events per server, 15-minute slot (UTC, aligned to the Unix epoch) and level, kept by
-- ingestion in the batch's own transaction beside log_counts_hourly (so always exact). A day is
-- at most 96 x 5 rows here, where log_counts_hourly holds a row per level, event type and
-- resource of each hour, and the events a row each.
CREATE TABLE log_level_counts_15m (
    server_id text NOT NULL,
    slot      timestamptz NOT NULL,
    level     text NOT NULL,
    n         bigint NOT NULL,
    PRIMARY KEY (server_id, slot, level)
);

-- the events stored before this migration
INSERT INTO log_level_counts_15m (server_id, slot, level, n)
SELECT server_id, date_bin(interval '15 minutes', occurred_at, timestamptz '1970-01-01 00:00:00+00'),
       level, count(*)
FROM log_events
GROUP BY 1, 2, 3;
