-- Deleting an entity: the row stays (its number is never given out again,
-- so "#12" keeps naming one thing in the log) but leaves every listing and
-- the search index.

ALTER TABLE entities ADD COLUMN deleted_at INTEGER;

DROP TRIGGER entities_fts_update;
CREATE TRIGGER entities_fts_update AFTER UPDATE ON entities BEGIN
    INSERT INTO entities_fts (entities_fts, rowid, title, description)
        SELECT 'delete', old.rowid, old.title, old.description WHERE old.deleted_at IS NULL;
    INSERT INTO entities_fts (rowid, title, description)
        SELECT new.rowid, new.title, new.description WHERE new.deleted_at IS NULL;
END;
