-- The secrets continuation tokens and query cursors are signed with, shared by every instance and
-- kept across restarts: one current secret (accepted_until IS NULL) and those rotated out, each
-- accepted until accepted_until (`stowctl signing-secret rotate`). The first one is made here:
-- 32 bytes from two random UUIDs (gen_random_uuid draws from the server's strong random source;
-- 244 random bits).
CREATE TABLE signing_secrets (
    id             bigserial PRIMARY KEY,
    secret         bytea NOT NULL CHECK (length(secret) >= 16),
    created_at     timestamptz NOT NULL,
    accepted_until timestamptz
);
CREATE UNIQUE INDEX signing_secrets_one_current ON signing_secrets ((true)) WHERE accepted_until IS NULL;
INSERT INTO signing_secrets (secret, created_at)
VALUES (uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()), now());
