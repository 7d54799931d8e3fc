-- mnemon schema 4: versioned episodic documents. Append-only.

CREATE TABLE documents (
    project_id TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('project_state', 'work_plan', 'decision_log')),
    version    INTEGER NOT NULL CHECK (version >= 1),
    content    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, kind, version)
) STRICT;
