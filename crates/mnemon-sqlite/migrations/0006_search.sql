-- Full-text search over every tier: hot context, entities and documents
-- join the operation, message and decision indexes of earlier schemas.

CREATE VIRTUAL TABLE hot_fts USING fts5 (text, detail, content = 'hot_items', content_rowid = 'seq');
CREATE TRIGGER hot_fts_insert AFTER INSERT ON hot_items BEGIN
    INSERT INTO hot_fts (rowid, text, detail) VALUES (new.seq, new.text, new.detail);
END;
CREATE TRIGGER hot_fts_update AFTER UPDATE ON hot_items BEGIN
    INSERT INTO hot_fts (hot_fts, rowid, text, detail) VALUES ('delete', old.seq, old.text, old.detail);
    INSERT INTO hot_fts (rowid, text, detail) VALUES (new.seq, new.text, new.detail);
END;
INSERT INTO hot_fts (hot_fts) VALUES ('rebuild');

CREATE VIRTUAL TABLE entities_fts USING fts5 (title, description, content = 'entities', content_rowid = 'rowid');
CREATE TRIGGER entities_fts_insert AFTER INSERT ON entities BEGIN
    INSERT INTO entities_fts (rowid, title, description) VALUES (new.rowid, new.title, new.description);
END;
CREATE TRIGGER entities_fts_update AFTER UPDATE ON entities BEGIN
    INSERT INTO entities_fts (entities_fts, rowid, title, description) VALUES ('delete', old.rowid, old.title, old.description);
    INSERT INTO entities_fts (rowid, title, description) VALUES (new.rowid, new.title, new.description);
END;
INSERT INTO entities_fts (entities_fts) VALUES ('rebuild');

CREATE VIRTUAL TABLE documents_fts USING fts5 (content, content = 'documents', content_rowid = 'rowid');
CREATE TRIGGER documents_fts_insert AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts (rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER documents_fts_delete AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
INSERT INTO documents_fts (documents_fts) VALUES ('rebuild');
