-- Idempotency records: responses kept as the bytes sent (jsonb refuses U+0000, so a response
-- that echoed "\u0000" could not be stored and its key stayed in flight), and in-flight claims
-- owned by a live request through a renewed lease instead of a fixed 300 s staleness.
-- Additive, so binaries of the previous release keep working during a rollout: their records
-- (jsonb `response`, no lease) are still read, and their in-flight claims lapse after 300 s.
ALTER TABLE idempotency_records
    ADD COLUMN response_body bytea,
    ADD COLUMN owner text,
    ADD COLUMN lease_expires_at timestamptz;
