DROP TABLE log_level_counts_15m;
