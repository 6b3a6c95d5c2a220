-- Plans, organizations, registered servers (with their Logs source state) and API keys.
CREATE TABLE plans (
    name                  text PRIMARY KEY,
    logs_enabled          boolean NOT NULL DEFAULT false,
    retention_days        integer NOT NULL DEFAULT 0 CHECK (retention_days >= 0),
    max_file_size         bigint  NOT NULL DEFAULT 104857600 CHECK (max_file_size > 0),
    max_url_lifetime_secs integer NOT NULL DEFAULT 3600 CHECK (max_url_lifetime_secs > 0),
    concurrent_searches   integer NOT NULL DEFAULT 4 CHECK (concurrent_searches > 0),
    created_at            timestamptz NOT NULL DEFAULT now()
);

INSERT INTO plans (name, logs_enabled, retention_days) VALUES
    ('free', false, 0),
    ('growth', true, 30),
    ('pro', true, 90);

CREATE TABLE organizations (
    id         text PRIMARY KEY,
    name       text NOT NULL,
    slug       text NOT NULL UNIQUE,
    plan       text NOT NULL REFERENCES plans (name),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE servers (
    id          text PRIMARY KEY,
    org_id      text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    cfx_id      text NOT NULL,
    name        text,
    logs_active boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now()
);
-- Join codes are unique and compared case-insensitively.
CREATE UNIQUE INDEX servers_cfx_id_lower ON servers (lower(cfx_id));
CREATE INDEX servers_org ON servers (org_id);

CREATE TABLE api_keys (
    id               text PRIMARY KEY,
    org_id           text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    server_id        text REFERENCES servers (id) ON DELETE CASCADE,
    credential_type  text NOT NULL CHECK (credential_type IN ('server', 'developer')),
    name             text,
    secret_hash      bytea NOT NULL UNIQUE,
    secret_hint      text NOT NULL,
    permissions      text[] NOT NULL,
    allowed_prefixes text[] NOT NULL DEFAULT '{}',
    denied_prefixes  text[] NOT NULL DEFAULT '{}',
    allowed_mime     text[],
    created_at       timestamptz NOT NULL DEFAULT now(),
    expires_at       timestamptz,
    disabled_at      timestamptz,
    last_used_at     timestamptz,
    CHECK (credential_type = 'developer' OR server_id IS NOT NULL)
);
CREATE INDEX api_keys_org ON api_keys (org_id);
