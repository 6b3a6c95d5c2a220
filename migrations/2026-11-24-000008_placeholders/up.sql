-- Placeholders: per organization, a key pattern and the object public delivery serves (as a
-- 404 with its bytes) for a missing key the pattern matches. A few per organization at most
-- (cdn_core::placeholder::MAX_PLACEHOLDERS); delivery reads them all at once.
CREATE TABLE placeholders (
    org_id       text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    pattern      text COLLATE "C" NOT NULL,
    fallback_key text NOT NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (org_id, pattern)
);
