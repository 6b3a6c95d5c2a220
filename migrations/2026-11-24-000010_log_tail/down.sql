DROP TABLE log_tails;
DROP INDEX log_batches_server_xid;
ALTER TABLE log_batches DROP COLUMN commit_xid, DROP COLUMN occurred_from, DROP COLUMN occurred_to;
