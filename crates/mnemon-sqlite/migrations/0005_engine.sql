-- The engine: window accounting per agent, calibration per model,
-- checkpoints, compaction audits, and hot-item history for resume.

CREATE TABLE engine_state (
    project_id TEXT NOT NULL,
    agent      TEXT NOT NULL,
    version    INTEGER NOT NULL,
    state      TEXT NOT NULL,
    PRIMARY KEY (project_id, agent)
) STRICT;

CREATE TABLE calibration (
    project_id TEXT NOT NULL,
    model      TEXT NOT NULL,
    factor_ppm INTEGER NOT NULL CHECK (factor_ppm > 0),
    samples    INTEGER NOT NULL,
    PRIMARY KEY (project_id, model)
) STRICT;

CREATE TABLE checkpoints (
    id         TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    agent      TEXT NOT NULL,
    session_id TEXT,
    trigger    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    json       TEXT NOT NULL
) STRICT;
CREATE INDEX checkpoints_by_time ON checkpoints (project_id, created_at);

CREATE TABLE compactions (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id    TEXT NOT NULL,
    session_id    TEXT,
    kind          TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    audit         TEXT NOT NULL,
    summary       TEXT NOT NULL,
    through_op_seq  INTEGER NOT NULL,
    through_msg_seq INTEGER NOT NULL
) STRICT;
CREATE INDEX compactions_by_project ON compactions (project_id, seq);
CREATE INDEX compactions_by_session ON compactions (session_id, kind, seq);

-- Every version of every hot-context item, so a checkpoint can reference
-- versions instead of copying content.
CREATE TABLE hot_history (
    item_id    TEXT NOT NULL,
    version    INTEGER NOT NULL,
    text       TEXT NOT NULL,
    detail     TEXT,
    priority   TEXT,
    status     TEXT NOT NULL,
    agent      TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (item_id, version)
) STRICT, WITHOUT ROWID;
INSERT INTO hot_history SELECT id, version, text, detail, priority, status, agent, updated_at FROM hot_items;
CREATE TRIGGER hot_history_insert AFTER INSERT ON hot_items BEGIN
    INSERT OR REPLACE INTO hot_history VALUES (new.id, new.version, new.text, new.detail, new.priority, new.status, new.agent, new.updated_at);
END;
CREATE TRIGGER hot_history_update AFTER UPDATE ON hot_items BEGIN
    INSERT OR REPLACE INTO hot_history VALUES (new.id, new.version, new.text, new.detail, new.priority, new.status, new.agent, new.updated_at);
END;

-- The engine sums an epoch's tokens per session from a position on.
CREATE INDEX operations_live ON operations (session_id, seq, kind, tokens);
CREATE INDEX messages_live ON messages (session_id, seq, tokens);
