-- CDN objects: rows are the source of truth for listing; bytes live in the object store at storage_path.
CREATE TABLE objects (
    org_id       text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    key          text COLLATE "C" NOT NULL,
    size         bigint NOT NULL,
    content_type text,
    etag         text NOT NULL,
    metadata     jsonb NOT NULL DEFAULT '{}',
    storage_path text NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, key)
);
CREATE INDEX objects_storage_path ON objects (storage_path);

-- Idempotency records, scoped by credential (key id or upload-token hash), method and route.
CREATE TABLE idempotency_records (
    scope        text NOT NULL,
    method       text NOT NULL,
    route        text NOT NULL,
    idem_key     text NOT NULL,
    fingerprint  bytea,
    state        text NOT NULL CHECK (state IN ('in_flight', 'done')),
    status       integer,
    response     jsonb,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, method, route, idem_key)
);
CREATE INDEX idempotency_created ON idempotency_records (created_at);

-- Scoped upload URLs. Only a hash of the token is stored.
CREATE TABLE upload_urls (
    token_hash            bytea PRIMARY KEY,
    org_id                text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    key_id                text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    path                  text NOT NULL,
    max_files             integer NOT NULL CHECK (max_files > 0),
    files_used            integer NOT NULL DEFAULT 0 CHECK (files_used >= 0 AND files_used <= max_files),
    max_file_size         bigint NOT NULL,
    allowed_mime          text[],
    allow_custom_metadata boolean NOT NULL DEFAULT false,
    randomize_name        boolean NOT NULL DEFAULT false,
    expires_at            timestamptz NOT NULL,
    created_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX upload_urls_expires ON upload_urls (expires_at);
