-- The audit log (docs/api.md "Audit log"): who changed what, written in the transaction of the
-- change. Append-only: rows are never updated; they are deleted only past the retention
-- (`stowctl logs maintain`, the logs service's maintenance).
CREATE TABLE audit_events (
    id          bigserial PRIMARY KEY,
    org_id      text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    at          timestamptz NOT NULL DEFAULT now(),
    actor_kind  text NOT NULL CHECK (actor_kind IN ('key', 'member', 'operator')),
    actor_id    text NOT NULL,
    actor_label text NOT NULL,
    via         text NOT NULL CHECK (via IN ('api', 'console', 'stowctl')),
    address     text,
    request_id  text,
    action      text NOT NULL,
    target      text NOT NULL,
    details     jsonb NOT NULL DEFAULT '{}',
    refused     text
);
CREATE INDEX audit_events_org ON audit_events (org_id, id DESC);
CREATE INDEX audit_events_org_actor ON audit_events (org_id, actor_id, id DESC);
CREATE INDEX audit_events_org_action ON audit_events (org_id, action, id DESC);
CREATE INDEX audit_events_at ON audit_events (at);

CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_events is append-only';
END
$$;
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
