-- Issue 58: a rule sends only what its maker may read. A rule acts as the member or key that last
-- saved it (`maker_kind`, `maker_id`); the commit path reads that maker's servers (a membership's,
-- a key's, with the key's expiry) with the rules, and a rule whose maker is gone watches nothing.
ALTER TABLE alert_rules
    ADD COLUMN maker_kind text CHECK (maker_kind IN ('member', 'key')),
    ADD COLUMN maker_id text;

-- Rules made before this migration: their maker is the actor of their last audited save.
UPDATE alert_rules r SET maker_kind = a.actor_kind, maker_id = a.actor_id
FROM (
    SELECT DISTINCT ON (target) target, actor_kind, actor_id
    FROM audit_events
    WHERE action IN ('alert_rule.create', 'alert_rule.change') AND refused IS NULL
      AND actor_kind IN ('member', 'key')
    ORDER BY target, id DESC
) a
WHERE a.target = r.id;

-- What a maker may read changes with their membership or key: the commit path reloads the
-- rules (and their makers' servers) when the version moves, so these changes move it too.
CREATE FUNCTION alert_rules_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE alert_rules_version SET v = v + 1;
    RETURN NULL;
END
$$;
CREATE TRIGGER memberships_alert_reach AFTER UPDATE OR DELETE ON memberships
    FOR EACH STATEMENT EXECUTE FUNCTION alert_rules_version_bump();
CREATE TRIGGER api_keys_alert_reach_change AFTER UPDATE ON api_keys
    FOR EACH ROW
    WHEN (OLD.servers IS DISTINCT FROM NEW.servers OR OLD.server_id IS DISTINCT FROM NEW.server_id
          OR OLD.permissions IS DISTINCT FROM NEW.permissions
          OR OLD.disabled_at IS DISTINCT FROM NEW.disabled_at
          OR OLD.expires_at IS DISTINCT FROM NEW.expires_at)
    EXECUTE FUNCTION alert_rules_version_bump();
CREATE TRIGGER api_keys_alert_reach_delete AFTER DELETE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION alert_rules_version_bump();
