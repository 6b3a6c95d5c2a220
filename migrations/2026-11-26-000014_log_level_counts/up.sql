-- Counts over time of long windows with no filter but levels (the explorer's unfiltered week):
-- events per server, UTC hour and level, kept by ingestion in the batch's own transaction beside
-- log_counts_hourly (so always exact). A week is at most 168 x 5 rows here, where
-- log_counts_hourly holds a row per level, event type and resource of each hour.
CREATE TABLE log_level_counts_hourly (
    server_id text NOT NULL,
    hour      timestamptz NOT NULL,
    level     text NOT NULL,
    n         bigint NOT NULL,
    PRIMARY KEY (server_id, hour, level)
);

-- the events counted before this migration
INSERT INTO log_level_counts_hourly (server_id, hour, level, n)
SELECT server_id, hour, level, sum(n)
FROM log_counts_hourly
GROUP BY 1, 2, 3;
