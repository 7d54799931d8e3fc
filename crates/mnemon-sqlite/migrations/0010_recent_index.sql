-- The newest operations of a project, whatever their session or type
-- (`mnemon recent`, the chat's reference resolution): without this index
-- SQLite sorted the project's whole log for every such read.

CREATE INDEX operations_by_project ON operations (project_id, seq);
