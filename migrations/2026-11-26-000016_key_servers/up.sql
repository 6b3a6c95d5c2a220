-- The servers whose logs a developer key may read and write; NULL means every server of the
-- organization. Ids, not join codes: a renamed or re-registered join code does not move a scope.
ALTER TABLE api_keys ADD COLUMN servers text[]
    CHECK (servers IS NULL OR cardinality(servers) > 0);
