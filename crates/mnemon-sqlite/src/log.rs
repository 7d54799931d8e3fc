//! Operations and messages: append, read most recent first, full-text search.

use mnemon_core::memory::{
    Message, MessageDraft, MessageQuery, Operation, OperationDraft, OperationLog, OperationQuery,
    Phase, StoreError, StoreResult,
};
use mnemon_core::store::sql::{LogFilter, stored_tokens};
use rusqlite::types::Value;
use rusqlite::{OptionalExtension, params};

pub(crate) use crate::row::{msg_from_row, op_from_row};
pub(crate) use mnemon_core::store::sql::{
    MESSAGE_COLUMNS as MSG_COLUMNS, OPERATION_COLUMNS as OP_COLUMNS,
};

use crate::{SqliteStore, new_id};

/// Every word must match; each is quoted, so no input is FTS5 syntax.
pub(crate) fn fts_query(keywords: &str) -> Option<String> {
    let terms: Vec<String> = keywords
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

/// Appends an operation inside the caller's transaction.
pub(crate) fn insert_operation(
    tx: &rusqlite::Connection,
    store: &SqliteStore,
    op: &OperationDraft,
) -> StoreResult<Operation> {
    let id = new_id();
    let tokens = stored_tokens(op.tokens)?;
    let data = serde_json::to_string(&op.data).map_err(|e| StoreError::Invalid(e.to_string()))?;
    let mut ins = tx
                .prepare_cached(
                    "INSERT INTO operations (id, project_id, session_id, agent, kind, data, tokens, phase, status, importance, pinned, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                )
                .map_err(|e| store.err(e))?;
    ins.execute(params![
        id,
        store.project_id,
        op.session_id,
        op.agent,
        op.kind,
        data,
        tokens,
        op.phase.map(Phase::name),
        op.status,
        op.importance,
        op.pinned,
        op.created_at.0
    ])
    .map_err(|e| store.err(e))?;
    let seq = tx.last_insert_rowid();
    if let Some(session) = &op.session_id {
        tx.prepare_cached(
                    "UPDATE sessions SET operation_count = operation_count + 1, tokens = tokens + ?2, last_activity = max(last_activity, ?3) WHERE id = ?1",
                )
                .and_then(|mut s| s.execute(params![session, tokens, op.created_at.0]))
                .map_err(|e| store.err(e))?;
    }
    Ok(op.stored(id, seq))
}

/// Appends a message inside the caller's transaction.
fn insert_message(
    tx: &rusqlite::Connection,
    store: &SqliteStore,
    m: &MessageDraft,
    id: &str,
    tokens: i64,
) -> StoreResult<Message> {
    tx.prepare_cached(
        "INSERT INTO messages (id, project_id, session_id, role, agent, content, tokens, importance, pinned, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )
    .and_then(|mut s| {
        s.execute(params![
            id,
            store.project_id,
            m.session_id,
            m.role.name(),
            m.agent,
            m.content,
            tokens,
            m.importance,
            m.pinned,
            m.created_at.0
        ])
    })
    .map_err(|e| store.err(e))?;
    let seq = tx.last_insert_rowid();
    if let Some(session) = &m.session_id {
        tx.prepare_cached(
            "UPDATE sessions SET message_count = message_count + 1, tokens = tokens + ?2, last_activity = max(last_activity, ?3) WHERE id = ?1",
        )
        .and_then(|mut s| s.execute(params![session, tokens, m.created_at.0]))
        .map_err(|e| store.err(e))?;
    }
    Ok(m.stored(id.to_string(), seq))
}

impl OperationLog for SqliteStore {
    fn append_operation(&self, op: &OperationDraft) -> StoreResult<Operation> {
        self.write(|tx| insert_operation(tx, self, op))
    }

    fn append_messages(&self, msgs: &[MessageDraft]) -> StoreResult<Vec<Message>> {
        let rows = msgs
            .iter()
            .map(|m| Ok((new_id(), stored_tokens(m.tokens)?)))
            .collect::<StoreResult<Vec<_>>>()?;
        self.write(|tx| {
            let mut out = Vec::with_capacity(msgs.len());
            for (m, (id, tokens)) in msgs.iter().zip(&rows) {
                out.push(insert_message(tx, self, m, id, *tokens)?);
            }
            Ok(out)
        })
    }

    fn operations(&self, q: &OperationQuery) -> StoreResult<Vec<Operation>> {
        let Some((mut sql, mut args)) = self.operation_filter(OP_COLUMNS, q) else {
            return Ok(Vec::new());
        };
        sql.push_str(" ORDER BY seq DESC LIMIT ?");
        args.push(Value::Integer(q.limit.map_or(-1, |l| l as i64)));
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        stmt.query_map(rusqlite::params_from_iter(args), op_from_row)
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    fn count_operations(&self, q: &OperationQuery) -> StoreResult<u64> {
        let Some((sql, args)) = self.operation_filter("count(*)", q) else {
            return Ok(0);
        };
        let n: i64 = self
            .conn()
            .prepare_cached(&sql)
            .and_then(|mut s| s.query_row(rusqlite::params_from_iter(args), |r| r.get(0)))
            .map_err(|e| self.err(e))?;
        let n = n as u64;
        Ok(q.limit.map_or(n, |l| n.min(l as u64)))
    }

    fn messages(&self, q: &MessageQuery) -> StoreResult<Vec<Message>> {
        let Some((mut sql, mut args)) = self.log_filter(MSG_COLUMNS, LogFilter::messages(q)) else {
            return Ok(Vec::new());
        };
        sql.push_str(" ORDER BY seq DESC LIMIT ?");
        args.push(Value::Integer(q.limit.map_or(-1, |l| l as i64)));
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        stmt.query_map(rusqlite::params_from_iter(args), msg_from_row)
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    fn operation(&self, id: &str) -> StoreResult<Operation> {
        let conn = self.conn();
        let full = crate::resolve_id(
            &conn,
            &self.path,
            "operations",
            "operation",
            &self.project_id,
            id,
        )?;
        conn.query_row(
            &format!("SELECT {OP_COLUMNS} FROM operations WHERE id = ?1"),
            [full],
            op_from_row,
        )
        .optional()
        .map_err(|e| self.err(e))?
        .ok_or_else(|| StoreError::NotFound {
            what: "operation",
            id: id.to_string(),
        })
    }
}

impl SqliteStore {
    /// `SELECT columns FROM table WHERE ...` for a query's filters, and its
    /// arguments; `None` when the keywords hold nothing searchable.
    fn log_filter(&self, columns: &str, f: LogFilter<'_>) -> Option<(String, Vec<Value>)> {
        let table = f.table;
        // With a session named, its index leads: a session's rows are a
        // handful among the project's. Left to itself SQLite walked the
        // project's index (it also orders by seq) and read every row of
        // the project to keep a session's: at 12,000 operations, most of a
        // CLI `record`. The unary `+` keeps the project out of index choice.
        let project = if f.session_id.is_some() {
            "+project_id"
        } else {
            "project_id"
        };
        let mut sql = format!("SELECT {columns} FROM {table} WHERE {project} = ?");
        let mut args: Vec<Value> = vec![Value::Text(self.project_id.clone())];
        if let Some(s) = f.session_id {
            sql.push_str(" AND session_id = ?");
            args.push(Value::Text(s.clone()));
        }
        if let Some(k) = f.kind {
            sql.push_str(" AND kind = ?");
            args.push(Value::Text(k.clone()));
        }
        if let Some(words) = f.keywords {
            sql.push_str(&format!(
                " AND seq IN (SELECT rowid FROM {table}_fts WHERE {table}_fts MATCH ?)"
            ));
            args.push(Value::Text(fts_query(words)?));
        }
        Some((sql, args))
    }

    fn operation_filter(&self, columns: &str, q: &OperationQuery) -> Option<(String, Vec<Value>)> {
        self.log_filter(columns, LogFilter::operations(q))
    }
}
