-- mnemon schema 1. Migrations are append-only: never edit one that has shipped.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE sessions (
    id              TEXT PRIMARY KEY,
    project_id      TEXT NOT NULL,
    title           TEXT,
    agent           TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('active', 'ended', 'archived')),
    started_at      INTEGER NOT NULL,
    ended_at        INTEGER,
    summary         TEXT,
    operation_count INTEGER NOT NULL DEFAULT 0,
    message_count   INTEGER NOT NULL DEFAULT 0,
    tokens          INTEGER NOT NULL DEFAULT 0,
    last_activity   INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_by_agent ON sessions (project_id, agent, status, started_at);
CREATE INDEX sessions_by_activity ON sessions (project_id, last_activity);

CREATE TABLE operations (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    project_id TEXT NOT NULL,
    session_id TEXT REFERENCES sessions (id),
    agent      TEXT NOT NULL,
    kind       TEXT NOT NULL,
    data       TEXT NOT NULL CHECK (json_valid(data)),
    tokens     INTEGER NOT NULL CHECK (tokens >= 0),
    phase      TEXT CHECK (phase IN ('planning', 'execution', 'validation')),
    status     TEXT,
    importance REAL NOT NULL CHECK (importance BETWEEN 0 AND 1),
    pinned     INTEGER NOT NULL CHECK (pinned IN (0, 1)),
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX operations_by_session ON operations (session_id, seq);
CREATE INDEX operations_by_kind ON operations (project_id, kind, seq);

CREATE TABLE messages (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    project_id TEXT NOT NULL,
    session_id TEXT REFERENCES sessions (id),
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    agent      TEXT NOT NULL,
    content    TEXT NOT NULL,
    tokens     INTEGER NOT NULL CHECK (tokens >= 0),
    importance REAL NOT NULL CHECK (importance BETWEEN 0 AND 1),
    pinned     INTEGER NOT NULL CHECK (pinned IN (0, 1)),
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX messages_by_session ON messages (session_id, seq);

-- Full-text indexes, kept in step by triggers inside the writing transaction.
CREATE VIRTUAL TABLE operations_fts USING fts5 (kind, data, content = 'operations', content_rowid = 'seq');
CREATE TRIGGER operations_fts_insert AFTER INSERT ON operations BEGIN
    INSERT INTO operations_fts (rowid, kind, data) VALUES (new.seq, new.kind, new.data);
END;
CREATE VIRTUAL TABLE messages_fts USING fts5 (content, content = 'messages', content_rowid = 'seq');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.seq, new.content);
END;

CREATE TABLE hot_items (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    project_id TEXT NOT NULL,
    kind       TEXT NOT NULL,
    text       TEXT NOT NULL,
    detail     TEXT,
    parent_id  TEXT REFERENCES hot_items (id),
    priority   TEXT CHECK (priority IN ('high', 'medium', 'low')),
    status     TEXT NOT NULL,
    agent      TEXT NOT NULL,
    version    INTEGER NOT NULL CHECK (version >= 1),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX hot_items_live ON hot_items (project_id, status, seq);

CREATE TABLE hot_versions (
    project_id TEXT PRIMARY KEY,
    version    INTEGER NOT NULL
) STRICT;
