-- Idempotency records: responses kept as the bytes sent (jsonb refuses U+0000, so a response
-- that echoed "\u0000" could not be stored and its key stayed in flight), and in-flight claims
-- owned by a live request through a renewed lease instead of a fixed 300 s staleness.
ALTER TABLE idempotency_records
    ALTER COLUMN response TYPE bytea USING convert_to(response::text, 'UTF8'),
    ADD COLUMN owner text,
    ADD COLUMN lease_expires_at timestamptz;
UPDATE idempotency_records
   SET lease_expires_at = created_at + interval '300 seconds'
 WHERE state = 'in_flight';
ALTER TABLE idempotency_records
    ADD CONSTRAINT idempotency_in_flight_has_lease
    CHECK (state <> 'in_flight' OR lease_expires_at IS NOT NULL);
