-- Counts over time (POST /v1/logs/counts) for long windows: events per server, UTC hour, level,
-- event type and resource ('' for none), kept by ingestion in the batch's own transaction (so
-- always exact) and read for the whole hours of a window whose buckets are whole hours.
CREATE TABLE log_counts_hourly (
    server_id  text NOT NULL,
    hour       timestamptz NOT NULL,
    level      text NOT NULL,
    event_type text NOT NULL,
    resource   text NOT NULL,
    n          bigint NOT NULL,
    PRIMARY KEY (server_id, hour, level, event_type, resource)
);

-- the events stored before this migration
INSERT INTO log_counts_hourly (server_id, hour, level, event_type, resource, n)
SELECT server_id, date_trunc('hour', occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', level,
       event_type, coalesce(resource, ''), count(*)
FROM log_events
GROUP BY 1, 2, 3, 4, 5;
