-- Day partitions of log_events are not vacuumed by autovacuum for their inserts (issue 42).
-- An insert-triggered vacuum of the open day partition (after every 20% of growth) rewrites each
-- new heap page to set hint and visibility bits and reads every page of its GIN indexes, on the
-- cores ingestion uses (a few percent of the rate while one ran, in the soak benchmark's A/B).
-- The maintenance task vacuums each closed day once (VACUUM (ANALYZE)), which is what such a
-- vacuum is for on an insert-only table. Autovacuum still runs for dead rows, analyze and
-- wraparound. New partitions get the same setting when the maintenance creates them
-- (stow_db::logs::partitions::PARTITION_SETTINGS).
DO $$
DECLARE
    part regclass;
BEGIN
    FOR part IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'log_events'::regclass LOOP
        EXECUTE format('ALTER TABLE %s SET (autovacuum_vacuum_insert_threshold = -1)', part);
    END LOOP;
END
$$;
