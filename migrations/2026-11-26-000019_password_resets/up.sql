-- Password resets an owner or admin made (docs/api.md "Members"): the token only as its SHA-256,
-- used once, before it expires; a newer reset of the same member closes the older one.
CREATE TABLE password_resets (
    token_hash bytea PRIMARY KEY,
    member_id  text NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    made_by    text REFERENCES members (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX password_resets_member ON password_resets (member_id) WHERE used_at IS NULL;
