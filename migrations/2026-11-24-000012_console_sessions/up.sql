-- Console sign-ins (docs/console.md): the cookie's token is kept only as its SHA-256, the key
-- only as the hash api_keys already holds. Deleting the key deletes its sessions.
CREATE TABLE console_sessions (
    id_hash      bytea PRIMARY KEY,
    key_id       text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    key_hash     bytea NOT NULL,
    csrf_token   text NOT NULL,
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
);
CREATE INDEX console_sessions_key ON console_sessions (key_id);
