DO $$
DECLARE
    part regclass;
BEGIN
    FOR part IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'log_events'::regclass LOOP
        EXECUTE format('ALTER TABLE %s RESET (autovacuum_vacuum_insert_threshold)', part);
    END LOOP;
END
$$;
