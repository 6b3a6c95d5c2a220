-- Alerts (issue 41): destinations, rules on saved searches, what threshold rules remember, and
-- the outbox of firings and their deliveries, written in the transaction that commits the
-- triggering batches and sent by any instance's delivery worker.

-- Where alerts go. The address (and a generic webhook's signing secret) is sealed under the
-- operator's SECOND_FACTOR_KEY; `url_hint` is what the API shows of it (origin and path start).
CREATE TABLE alert_destinations (
    id          text PRIMARY KEY,
    org_id      text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name        text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('discord', 'webhook')),
    url_hint    text NOT NULL,
    sealed      bytea NOT NULL,
    -- Discord's rate limit on this webhook: nothing is sent to it before this time
    hold_until  timestamptz,
    created_by  text NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
CREATE UNIQUE INDEX alert_destinations_name ON alert_destinations (org_id, lower(name));

CREATE TABLE alert_rules (
    id               text PRIMARY KEY,
    org_id           text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name             text NOT NULL,
    -- a saved search watched by a rule cannot be deleted (the API answers 409 naming the rules)
    saved_search_id  text NOT NULL REFERENCES saved_searches (id) ON DELETE RESTRICT,
    kind             text NOT NULL CHECK (kind IN ('every', 'threshold')),
    threshold        bigint,
    window_minutes   integer,
    cooldown_minutes integer,
    group_by         text CHECK (group_by IN ('resource', 'eventType', 'player')),
    muted_until      timestamptz,
    created_by       text NOT NULL,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    CHECK ((kind = 'threshold') = (threshold IS NOT NULL AND window_minutes IS NOT NULL
                                   AND cooldown_minutes IS NOT NULL))
);
CREATE UNIQUE INDEX alert_rules_name ON alert_rules (org_id, lower(name));
CREATE INDEX alert_rules_saved_search ON alert_rules (saved_search_id);

-- a destination named by a rule cannot be deleted (409 naming the rules)
CREATE TABLE alert_rule_destinations (
    rule_id        text NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
    destination_id text NOT NULL REFERENCES alert_destinations (id) ON DELETE RESTRICT,
    position       integer NOT NULL,
    PRIMARY KEY (rule_id, destination_id)
);
CREATE INDEX alert_rule_destinations_destination ON alert_rule_destinations (destination_id);

-- Threshold rules: matching events per group and minute (of their occurredAt), and whether each
-- group's breach is on. Minutes older than the rule's window are removed by the maintenance.
-- Each database session adds to its own `shard` of a minute's count (its backend pid modulo 16),
-- so concurrent batch commits never wait on each other's count rows; a window's count is the sum.
CREATE TABLE alert_minute_counts (
    rule_id text NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
    grp     text NOT NULL,
    minute  timestamptz NOT NULL,
    shard   smallint NOT NULL,
    n       bigint NOT NULL,
    PRIMARY KEY (rule_id, grp, minute, shard)
);
CREATE TABLE alert_groups (
    rule_id    text NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
    grp        text NOT NULL,
    breached   boolean NOT NULL,
    last_fired timestamptz,
    PRIMARY KEY (rule_id, grp)
);

-- A rule fired: what it says (the matching events, or the threshold's count), written with the
-- batches that made it fire.
CREATE TABLE alert_firings (
    id        text PRIMARY KEY,
    rule_id   text NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
    fired_at  timestamptz NOT NULL,
    body      jsonb NOT NULL
);
CREATE INDEX alert_firings_rule ON alert_firings (rule_id, fired_at);

-- One send of a firing (or of a test message) to one destination. `id` is the webhook-id of
-- every attempt. Sent in `seq` order per rule and destination.
CREATE TABLE alert_deliveries (
    seq             bigserial PRIMARY KEY,
    id              text NOT NULL UNIQUE,
    org_id          text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    destination_id  text NOT NULL REFERENCES alert_destinations (id) ON DELETE CASCADE,
    -- NULL: a test message
    firing_id       text REFERENCES alert_firings (id) ON DELETE CASCADE,
    rule_id         text,
    status          text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    -- an attempt in flight: another worker takes the delivery only after this
    leased_until    timestamptz,
    -- the last retry is made before this (24 h after the firing, or after "send again")
    give_up_at      timestamptz NOT NULL,
    last_code       integer,
    last_error      text,
    created_at      timestamptz NOT NULL,
    delivered_at    timestamptz
);
CREATE INDEX alert_deliveries_due ON alert_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX alert_deliveries_log ON alert_deliveries (org_id, rule_id, seq);
CREATE INDEX alert_deliveries_queue ON alert_deliveries (destination_id, rule_id, seq)
    WHERE status = 'pending';

-- Bumped by every change to rules, their destinations and saved searches (in the change's
-- transaction); a batch commit reads it and reloads the rules when it moved, so a rule applies
-- to every batch committed after the request that made it was answered.
CREATE TABLE alert_rules_version (v bigint NOT NULL);
INSERT INTO alert_rules_version VALUES (0);
