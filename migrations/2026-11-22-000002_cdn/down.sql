DROP TABLE upload_urls;
DROP TABLE idempotency_records;
DROP TABLE objects;
