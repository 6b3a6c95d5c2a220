DROP TABLE log_counts_hourly;
