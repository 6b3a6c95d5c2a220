-- Least-privilege database access for Stowage (docs/operations.md, "Database roles").
--
-- Run once per database, connected to it as its owner (the role `stowctl migrate` and
-- `stowctl logs maintain` run as), after the first `stowctl migrate`:
--   psql "postgres://stowage_owner@db/stowage" -f scripts/db-roles.sql
-- Create the services' login role before (as a superuser or a role with CREATEROLE):
--   CREATE ROLE stowage_app LOGIN PASSWORD '…';
-- The services then connect as stowage_app: they read and write rows, and cannot create, alter,
-- drop or truncate anything. Tables and partitions the owner creates later get the same grants.
GRANT USAGE ON SCHEMA public TO stowage_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO stowage_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO stowage_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO stowage_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO stowage_app;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
