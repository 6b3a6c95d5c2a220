DROP TABLE usage_counters;
DROP TABLE log_events;
DROP SEQUENCE log_events_id_seq;
DROP TABLE log_batches;
