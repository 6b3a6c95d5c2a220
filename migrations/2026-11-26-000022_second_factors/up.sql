-- Members' second factors (docs/operations.md "Second factors"): the TOTP secret sealed with the
-- operator's SECOND_FACTOR_KEY (never stored in the clear), and single-use recovery codes stored
-- as SHA-256.
CREATE TABLE member_second_factors (
    member_id     text PRIMARY KEY REFERENCES members (id) ON DELETE CASCADE,
    sealed_secret bytea NOT NULL,
    confirmed_at  timestamptz,
    last_step     bigint CHECK (last_step >= 0)
);
CREATE TABLE recovery_codes (
    member_id text NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    code_hash bytea NOT NULL CHECK (length(code_hash) = 32),
    used_at   timestamptz,
    PRIMARY KEY (member_id, code_hash)
);
