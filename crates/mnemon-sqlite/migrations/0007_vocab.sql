-- Term statistics of the operation and message indexes, so retrieval can
-- leave out words that match nearly everything.
CREATE VIRTUAL TABLE operations_vocab USING fts5vocab (operations_fts, 'row');
CREATE VIRTUAL TABLE messages_vocab USING fts5vocab (messages_fts, 'row');
