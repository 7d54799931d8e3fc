-- Retrieval counts a word's records from its capped postings: the term
-- statistics tables read a word's whole posting list on every question and
-- are no longer asked.
DROP TABLE operations_vocab;
DROP TABLE messages_vocab;
