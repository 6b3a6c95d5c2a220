DROP TRIGGER IF EXISTS api_keys_alert_reach_delete ON api_keys;
DROP TRIGGER IF EXISTS api_keys_alert_reach_change ON api_keys;
DROP TRIGGER IF EXISTS memberships_alert_reach ON memberships;
DROP FUNCTION IF EXISTS alert_rules_version_bump();
ALTER TABLE alert_rules DROP COLUMN IF EXISTS maker_id, DROP COLUMN IF EXISTS maker_kind;
