-- When an object was first stored at its key (a replacement keeps it). Nullable and without a
-- default so that adding it is instant on a large table and instances of the previous release,
-- which do not write it, keep working during a rollout; readers fall back to updated_at.
ALTER TABLE objects ADD COLUMN created_at timestamptz;
