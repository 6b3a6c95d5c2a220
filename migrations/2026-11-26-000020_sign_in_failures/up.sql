-- Failed password sign-ins per sign-in name (docs/operations.md "Members"): growing waits after
-- the first few; a success deletes the row. Names nobody has are counted the same way.
CREATE TABLE sign_in_failures (
    subject       text PRIMARY KEY,
    count         integer NOT NULL CHECK (count >= 0),
    last_at       timestamptz NOT NULL,
    blocked_until timestamptz NOT NULL
);
CREATE INDEX sign_in_failures_last ON sign_in_failures (last_at);
