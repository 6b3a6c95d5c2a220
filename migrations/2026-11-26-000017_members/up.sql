-- Members (docs/api.md "Members"): people with their own sign-in, their place in organizations,
-- and the invitations that bring them in. Passwords only as Argon2id PHC strings; invitation
-- tokens only as their SHA-256.
CREATE TABLE members (
    id            text PRIMARY KEY,
    login         text NOT NULL UNIQUE CHECK (login = lower(login)),
    display_name  text,
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
    org_id           text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    member_id        text NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    role             text NOT NULL CHECK (role IN ('owner', 'admin', 'moderator', 'viewer')),
    -- NULL: every server of the organization
    servers          text[] CHECK (servers IS NULL OR cardinality(servers) > 0),
    allowed_prefixes text[] NOT NULL DEFAULT '{}',
    denied_prefixes  text[] NOT NULL DEFAULT '{}',
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    PRIMARY KEY (org_id, member_id)
);
CREATE INDEX memberships_member ON memberships (member_id);

CREATE TABLE invitations (
    id               text PRIMARY KEY,
    org_id           text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    role             text NOT NULL CHECK (role IN ('owner', 'admin', 'moderator', 'viewer')),
    servers          text[] CHECK (servers IS NULL OR cardinality(servers) > 0),
    allowed_prefixes text[] NOT NULL DEFAULT '{}',
    denied_prefixes  text[] NOT NULL DEFAULT '{}',
    invited_by       text REFERENCES members (id) ON DELETE SET NULL,
    token_hash       bytea NOT NULL UNIQUE,
    note             text,
    created_at       timestamptz NOT NULL,
    expires_at       timestamptz NOT NULL,
    accepted_at      timestamptz
);
CREATE INDEX invitations_pending ON invitations (org_id) WHERE accepted_at IS NULL;
