ALTER TABLE idempotency_records
    DROP COLUMN lease_expires_at,
    DROP COLUMN owner,
    DROP COLUMN response_body;
