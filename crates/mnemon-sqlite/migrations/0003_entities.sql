-- mnemon schema 3: project entities (tier 4). Append-only.

CREATE TABLE entities (
    project_id  TEXT NOT NULL,
    number      INTEGER NOT NULL CHECK (number >= 1),
    kind        TEXT NOT NULL CHECK (kind IN ('project', 'milestone', 'epic', 'story', 'task')),
    title       TEXT NOT NULL,
    description TEXT,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'blocked', 'completed')),
    priority    INTEGER NOT NULL CHECK (priority BETWEEN 1 AND 5),
    parent      INTEGER,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (project_id, number),
    FOREIGN KEY (project_id, parent) REFERENCES entities (project_id, number)
) STRICT;
CREATE INDEX entities_by_status ON entities (project_id, status, priority, number);
CREATE INDEX entities_by_kind ON entities (project_id, kind, status, priority, number);
CREATE INDEX entities_by_parent ON entities (project_id, parent);
