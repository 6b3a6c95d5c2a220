-- Limits that hold across instances (issue 38).
--
-- Token buckets (auth_core::rate): the per-key rate limit (`key:<key id>`) and the console's
-- sign-in throttle (`signin:<address>`). Instances borrow a few tokens at a time, so a busy key
-- updates its row about once per 25 requests; fillfactor leaves room for those updates to stay
-- on their page (HOT).
CREATE TABLE rate_buckets (
    bucket     text PRIMARY KEY,
    tokens     double precision NOT NULL,
    granted    integer NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL
) WITH (fillfactor = 70);
CREATE INDEX rate_buckets_updated ON rate_buckets (updated_at);

-- Running log searches (queries, counts, facets), leased like live tails (log_tails), so the
-- plan's concurrent-search limit holds across instances and a crashed instance's leases expire.
CREATE TABLE log_searches (
    id         text PRIMARY KEY,
    org_id     text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL
);
CREATE INDEX log_searches_org ON log_searches (org_id);
