-- Saved log searches of an organization (issue 41): a name, the servers (NULL: every server the
-- reader may read, when opened) and the filters as sent (the query's filter fields).
CREATE TABLE saved_searches (
    id         text PRIMARY KEY,
    org_id     text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name       text NOT NULL,
    server_ids text[],
    search     jsonb NOT NULL,
    created_by text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
-- one name per organization in either case; also the organization's rows in one index range
CREATE UNIQUE INDEX saved_searches_name ON saved_searches (org_id, lower(name));
