DROP TRIGGER objects_usage_update ON objects;
DROP TRIGGER objects_usage_delete ON objects;
DROP TRIGGER objects_usage_insert ON objects;
DROP FUNCTION objects_usage_changed();
DROP FUNCTION objects_usage_removed();
DROP FUNCTION objects_usage_added();
DROP TABLE object_usage_deltas;
DROP TABLE object_usage;
DROP FUNCTION object_top_folder(text);
ALTER TABLE audit_events DROP CONSTRAINT audit_events_via_check,
    ADD CONSTRAINT audit_events_via_check CHECK (via IN ('api', 'console', 'stowctl'));
ALTER TABLE audit_events DROP CONSTRAINT audit_events_actor_kind_check,
    ADD CONSTRAINT audit_events_actor_kind_check CHECK (actor_kind IN ('key', 'member', 'operator'));
DROP TABLE lifecycle_rules;
ALTER TABLE objects DROP COLUMN keep;
