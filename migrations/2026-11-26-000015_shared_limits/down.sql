DROP TABLE log_searches;
DROP TABLE rate_buckets;
