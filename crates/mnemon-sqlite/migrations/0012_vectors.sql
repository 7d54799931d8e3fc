-- Sentence-embedding vectors of the log's records, for retrieval by
-- meaning: one per chunk of a record's text, per model (vectors of two
-- models cannot be compared). int8 values with their scale.
-- `seq` only grows (AUTOINCREMENT never reuses a number), so a reader that
-- has loaded up to some `seq` reads only what is new, replacements included.
CREATE TABLE vectors (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    model TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('operation', 'message')),
    record INTEGER NOT NULL,
    chunk INTEGER NOT NULL,
    scale REAL NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (model, source, record, chunk)
) STRICT;

-- A record that goes takes its vectors with it.
CREATE TRIGGER operations_vectors_delete AFTER DELETE ON operations BEGIN
    DELETE FROM vectors WHERE source = 'operation' AND record = old.seq;
END;
CREATE TRIGGER messages_vectors_delete AFTER DELETE ON messages BEGIN
    DELETE FROM vectors WHERE source = 'message' AND record = old.seq;
END;
