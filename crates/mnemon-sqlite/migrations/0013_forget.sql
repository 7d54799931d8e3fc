-- Forgetting: rows of the log, the hot context and the decision records
-- can now be deleted, and their full-text entries go with them. The audit
-- of what was forgotten keeps ids and counts, never the content.

CREATE TRIGGER operations_fts_delete AFTER DELETE ON operations BEGIN
    INSERT INTO operations_fts (operations_fts, rowid, kind, data) VALUES ('delete', old.seq, old.kind, old.data);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER hot_fts_delete AFTER DELETE ON hot_items BEGIN
    INSERT INTO hot_fts (hot_fts, rowid, text, detail) VALUES ('delete', old.seq, old.text, old.detail);
END;
CREATE TRIGGER decisions_fts_delete AFTER DELETE ON decisions BEGIN
    INSERT INTO decisions_fts (decisions_fts, rowid, title, record) VALUES ('delete', old.seq, old.title, old.record);
END;

-- A deleted row's terms leave the index at once instead of waiting in its
-- segments for a merge: what is forgotten leaves no postings behind.
-- (These indexes then need SQLite 3.42 or later to be read.)
INSERT INTO operations_fts (operations_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO hot_fts (hot_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO decisions_fts (decisions_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO documents_fts (documents_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO entities_fts (entities_fts, rank) VALUES ('secure-delete', 1);

CREATE TABLE forgettings (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id TEXT NOT NULL,
    at         INTEGER NOT NULL,
    agent      TEXT NOT NULL,
    targets    TEXT NOT NULL CHECK (json_valid(targets)),
    operations INTEGER NOT NULL,
    messages   INTEGER NOT NULL,
    hot_items  INTEGER NOT NULL,
    decisions  INTEGER NOT NULL,
    sessions   INTEGER NOT NULL
) STRICT;
CREATE INDEX forgettings_by_project ON forgettings (project_id, seq);
