-- mnemon schema 14: a record's vectors found by the record. Forgetting
-- deletes a record's vectors (migration 0012's triggers, and core's
-- delete); without this index each of those read the whole table.

CREATE INDEX vectors_by_record ON vectors (source, record);
