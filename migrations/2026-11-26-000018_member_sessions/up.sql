-- A console session acts as a key (key_id, key_hash) or as a member in one organization
-- (member_id, org_id), never both. Removing the member or the organization ends its sessions.
ALTER TABLE console_sessions
    ALTER COLUMN key_id DROP NOT NULL,
    ALTER COLUMN key_hash DROP NOT NULL,
    ADD COLUMN member_id text REFERENCES members (id) ON DELETE CASCADE,
    ADD COLUMN org_id text REFERENCES organizations (id) ON DELETE CASCADE,
    ADD CONSTRAINT console_sessions_one_subject CHECK (
        (key_id IS NOT NULL AND key_hash IS NOT NULL AND member_id IS NULL AND org_id IS NULL)
        OR (key_id IS NULL AND key_hash IS NULL AND member_id IS NOT NULL AND org_id IS NOT NULL)
    );
CREATE INDEX console_sessions_member ON console_sessions (member_id) WHERE member_id IS NOT NULL;
