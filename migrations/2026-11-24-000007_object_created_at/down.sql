ALTER TABLE objects DROP COLUMN created_at;
