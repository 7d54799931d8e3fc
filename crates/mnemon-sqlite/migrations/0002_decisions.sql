-- mnemon schema 2: decision records (ADR). Append-only.

CREATE TABLE decisions (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    id            TEXT NOT NULL UNIQUE CHECK (id GLOB 'DR-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'),
    project_id    TEXT NOT NULL,
    title         TEXT NOT NULL,
    record        TEXT NOT NULL CHECK (json_valid(record)),
    status        TEXT NOT NULL CHECK (status IN ('Proposed', 'Accepted', 'Deprecated', 'Superseded')),
    superseded_by TEXT REFERENCES decisions (id),
    agent         TEXT NOT NULL,
    created_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX decisions_by_project ON decisions (project_id, seq);

CREATE VIRTUAL TABLE decisions_fts USING fts5 (title, record, content = 'decisions', content_rowid = 'seq');
CREATE TRIGGER decisions_fts_insert AFTER INSERT ON decisions BEGIN
    INSERT INTO decisions_fts (rowid, title, record) VALUES (new.seq, new.title, new.record);
END;
CREATE TRIGGER decisions_fts_update AFTER UPDATE ON decisions BEGIN
    INSERT INTO decisions_fts (decisions_fts, rowid, title, record) VALUES ('delete', old.seq, old.title, old.record);
    INSERT INTO decisions_fts (rowid, title, record) VALUES (new.seq, new.title, new.record);
END;
