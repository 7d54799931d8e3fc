-- mnemon on PostgreSQL, schema 1: the tables of the SQLite store's schema
-- 13, in PostgreSQL's types. Migrations are append-only: never edit one
-- that has shipped.
--
-- Full-text search: each searchable table has a `tsv` column that mnemon
-- fills when it writes the row, from the text split into words the way
-- retrieval splits a question (any run of letters and digits, lower-cased),
-- with positions stripped; GIN indexes answer a word's postings. They are
-- built without GIN's pending list (`fastupdate = off`): every search would
-- otherwise read the whole list of recent, unmerged entries, which on a
-- log written all day cost milliseconds per word.
--
-- Foreign keys are DEFERRABLE so `mnemon migrate --to` can copy rows in
-- their stored order and have them checked at commit.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE sessions (
    id              TEXT PRIMARY KEY,
    project_id      TEXT NOT NULL,
    title           TEXT,
    agent           TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('active', 'ended', 'archived')),
    started_at      BIGINT NOT NULL,
    ended_at        BIGINT,
    summary         TEXT,
    operation_count BIGINT NOT NULL DEFAULT 0,
    message_count   BIGINT NOT NULL DEFAULT 0,
    tokens          BIGINT NOT NULL DEFAULT 0,
    last_activity   BIGINT NOT NULL,
    row_id          BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE
);
CREATE INDEX sessions_by_agent ON sessions (project_id, agent, status, started_at);
CREATE INDEX sessions_by_activity ON sessions (project_id, last_activity);

CREATE TABLE operations (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    project_id TEXT NOT NULL,
    session_id TEXT REFERENCES sessions (id) DEFERRABLE,
    agent      TEXT NOT NULL,
    kind       TEXT NOT NULL,
    data       TEXT NOT NULL,
    tokens     BIGINT NOT NULL CHECK (tokens >= 0),
    phase      TEXT CHECK (phase IN ('planning', 'execution', 'validation')),
    status     TEXT,
    importance DOUBLE PRECISION NOT NULL CHECK (importance BETWEEN 0 AND 1),
    pinned     BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL,
    tsv        TSVECTOR NOT NULL
);
CREATE INDEX operations_by_session ON operations (session_id, seq);
CREATE INDEX operations_by_kind ON operations (project_id, kind, seq);
CREATE INDEX operations_by_project ON operations (project_id, seq);
-- A session's newest records: with only the two above, the planner walked
-- the project's whole log backwards filtering for the session.
CREATE INDEX operations_by_project_session ON operations (project_id, session_id, seq);
CREATE INDEX operations_live ON operations (session_id, seq, kind, tokens);
CREATE INDEX operations_fts ON operations USING GIN (tsv) WITH (fastupdate = off);

CREATE TABLE messages (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    project_id TEXT NOT NULL,
    session_id TEXT REFERENCES sessions (id) DEFERRABLE,
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    agent      TEXT NOT NULL,
    content    TEXT NOT NULL,
    tokens     BIGINT NOT NULL CHECK (tokens >= 0),
    importance DOUBLE PRECISION NOT NULL CHECK (importance BETWEEN 0 AND 1),
    pinned     BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL,
    tsv        TSVECTOR NOT NULL
);
CREATE INDEX messages_by_session ON messages (session_id, seq);
CREATE INDEX messages_by_project ON messages (project_id, seq);
CREATE INDEX messages_by_project_session ON messages (project_id, session_id, seq);
CREATE INDEX messages_live ON messages (session_id, seq, tokens);
CREATE INDEX messages_fts ON messages USING GIN (tsv) WITH (fastupdate = off);

CREATE TABLE hot_items (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    project_id TEXT NOT NULL,
    kind       TEXT NOT NULL,
    text       TEXT NOT NULL,
    detail     TEXT,
    parent_id  TEXT REFERENCES hot_items (id) DEFERRABLE,
    priority   TEXT CHECK (priority IN ('high', 'medium', 'low')),
    status     TEXT NOT NULL,
    agent      TEXT NOT NULL,
    version    BIGINT NOT NULL CHECK (version >= 1),
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    tsv        TSVECTOR NOT NULL
);
CREATE INDEX hot_items_live ON hot_items (project_id, status, seq);
CREATE INDEX hot_items_fts ON hot_items USING GIN (tsv) WITH (fastupdate = off);

CREATE TABLE hot_versions (
    project_id TEXT PRIMARY KEY,
    version    BIGINT NOT NULL
);

-- Every version of every hot-context item, so a checkpoint can reference
-- versions instead of copying content.
CREATE TABLE hot_history (
    item_id    TEXT NOT NULL,
    version    BIGINT NOT NULL,
    text       TEXT NOT NULL,
    detail     TEXT,
    priority   TEXT,
    status     TEXT NOT NULL,
    agent      TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (item_id, version)
);
CREATE FUNCTION mnemon_keep_hot_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO hot_history (item_id, version, text, detail, priority, status, agent, updated_at)
    VALUES (NEW.id, NEW.version, NEW.text, NEW.detail, NEW.priority, NEW.status, NEW.agent, NEW.updated_at)
    ON CONFLICT (item_id, version) DO UPDATE SET text = EXCLUDED.text, detail = EXCLUDED.detail,
        priority = EXCLUDED.priority, status = EXCLUDED.status, agent = EXCLUDED.agent,
        updated_at = EXCLUDED.updated_at;
    RETURN NULL;
END $$;
CREATE TRIGGER hot_history_keep AFTER INSERT OR UPDATE OF text, detail, priority, status, agent, version, updated_at
    ON hot_items FOR EACH ROW EXECUTE FUNCTION mnemon_keep_hot_history();

CREATE TABLE decisions (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE CHECK (id ~ '^DR-[0-9a-f]{8}$'),
    project_id    TEXT NOT NULL,
    title         TEXT NOT NULL,
    record        TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('Proposed', 'Accepted', 'Deprecated', 'Superseded')),
    superseded_by TEXT REFERENCES decisions (id) DEFERRABLE,
    agent         TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    tsv           TSVECTOR NOT NULL
);
CREATE INDEX decisions_by_project ON decisions (project_id, seq);
CREATE INDEX decisions_fts ON decisions USING GIN (tsv) WITH (fastupdate = off);

CREATE TABLE entities (
    project_id  TEXT NOT NULL,
    number      BIGINT NOT NULL CHECK (number >= 1),
    kind        TEXT NOT NULL CHECK (kind IN ('project', 'milestone', 'epic', 'story', 'task')),
    title       TEXT NOT NULL,
    description TEXT,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'blocked', 'completed')),
    priority    BIGINT NOT NULL CHECK (priority BETWEEN 1 AND 5),
    parent      BIGINT,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    deleted_at  BIGINT,
    row_id      BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    tsv         TSVECTOR NOT NULL,
    PRIMARY KEY (project_id, number),
    FOREIGN KEY (project_id, parent) REFERENCES entities (project_id, number) DEFERRABLE
);
CREATE INDEX entities_by_status ON entities (project_id, status, priority, number);
CREATE INDEX entities_by_kind ON entities (project_id, kind, status, priority, number);
CREATE INDEX entities_by_parent ON entities (project_id, parent);
CREATE INDEX entities_fts ON entities USING GIN (tsv) WITH (fastupdate = off);

CREATE TABLE documents (
    project_id TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('project_state', 'work_plan', 'decision_log')),
    version    BIGINT NOT NULL CHECK (version >= 1),
    content    TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    row_id     BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    tsv        TSVECTOR NOT NULL,
    PRIMARY KEY (project_id, kind, version)
);
CREATE INDEX documents_fts ON documents USING GIN (tsv) WITH (fastupdate = off);

CREATE TABLE engine_state (
    project_id TEXT NOT NULL,
    agent      TEXT NOT NULL,
    version    BIGINT NOT NULL,
    state      TEXT NOT NULL,
    PRIMARY KEY (project_id, agent)
);

CREATE TABLE calibration (
    project_id TEXT NOT NULL,
    model      TEXT NOT NULL,
    factor_ppm BIGINT NOT NULL CHECK (factor_ppm > 0),
    samples    BIGINT NOT NULL,
    PRIMARY KEY (project_id, model)
);

CREATE TABLE checkpoints (
    id         TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    agent      TEXT NOT NULL,
    session_id TEXT,
    trigger    TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    json       TEXT NOT NULL,
    row_id     BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE
);
CREATE INDEX checkpoints_by_time ON checkpoints (project_id, created_at);

CREATE TABLE compactions (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id      TEXT NOT NULL,
    session_id      TEXT,
    kind            TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    input_tokens    BIGINT NOT NULL,
    output_tokens   BIGINT NOT NULL,
    audit           TEXT NOT NULL,
    summary         TEXT NOT NULL,
    through_op_seq  BIGINT NOT NULL,
    through_msg_seq BIGINT NOT NULL
);
CREATE INDEX compactions_by_project ON compactions (project_id, seq);
CREATE INDEX compactions_by_session ON compactions (session_id, kind, seq);

CREATE TABLE substitutions (
    project_id      TEXT NOT NULL,
    op_seq          BIGINT NOT NULL,
    technique       TEXT NOT NULL,
    kind            TEXT,
    text            TEXT,
    tokens          BIGINT NOT NULL,
    reason          TEXT NOT NULL,
    original_tokens BIGINT NOT NULL,
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (project_id, op_seq)
);

CREATE TABLE artifacts (
    project_id TEXT NOT NULL,
    path       TEXT NOT NULL,
    technique  TEXT NOT NULL,
    content    TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (project_id, path)
);

-- `seq` only grows, so a reader that has loaded up to some `seq` reads only
-- what is new; a replaced vector is deleted and inserted again.
CREATE TABLE vectors (
    seq    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    model  TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('operation', 'message')),
    record BIGINT NOT NULL,
    chunk  BIGINT NOT NULL,
    scale  DOUBLE PRECISION NOT NULL,
    vector BYTEA NOT NULL,
    UNIQUE (model, source, record, chunk)
);
CREATE INDEX vectors_by_record ON vectors (source, record);

CREATE TABLE forgettings (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id TEXT NOT NULL,
    at         BIGINT NOT NULL,
    agent      TEXT NOT NULL,
    targets    TEXT NOT NULL,
    operations BIGINT NOT NULL,
    messages   BIGINT NOT NULL,
    hot_items  BIGINT NOT NULL,
    decisions  BIGINT NOT NULL,
    sessions   BIGINT NOT NULL
);
CREATE INDEX forgettings_by_project ON forgettings (project_id, seq);
