-- The optimizer: what each optimized operation now shows in the live
-- context (NULL text: hidden), and the files holding in full what left it.

CREATE TABLE substitutions (
    project_id      TEXT NOT NULL,
    op_seq          INTEGER NOT NULL,
    technique       TEXT NOT NULL,
    kind            TEXT,
    text            TEXT,
    tokens          INTEGER NOT NULL,
    reason          TEXT NOT NULL,
    original_tokens INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (project_id, op_seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE artifacts (
    project_id TEXT NOT NULL,
    path       TEXT NOT NULL,
    technique  TEXT NOT NULL,
    content    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, path)
) STRICT, WITHOUT ROWID;
