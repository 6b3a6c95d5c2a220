ALTER TABLE idempotency_records DROP CONSTRAINT idempotency_in_flight_has_lease;
DELETE FROM idempotency_records
 WHERE response IS NOT NULL AND position('\x5c7530303030'::bytea IN response) > 0;
ALTER TABLE idempotency_records
    DROP COLUMN lease_expires_at,
    DROP COLUMN owner,
    ALTER COLUMN response TYPE jsonb USING convert_from(response, 'UTF8')::jsonb;
