DELETE FROM console_sessions WHERE member_id IS NOT NULL;
ALTER TABLE console_sessions
    DROP CONSTRAINT console_sessions_one_subject,
    DROP COLUMN org_id,
    DROP COLUMN member_id,
    ALTER COLUMN key_hash SET NOT NULL,
    ALTER COLUMN key_id SET NOT NULL;
