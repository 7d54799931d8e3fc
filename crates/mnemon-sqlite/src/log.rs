//! Operations and messages: append, read most recent first, full-text search.

use mnemon_core::importance::Role;
use mnemon_core::memory::{
    Message, MessageDraft, MessageQuery, Operation, OperationDraft, OperationLog, OperationQuery,
    Phase, StoreError, Timestamp,
};
use rusqlite::types::Value;
use rusqlite::{OptionalExtension, Row, params};

use crate::{SqliteStore, new_id};

pub(crate) const OP_COLUMNS: &str =
    "seq, id, session_id, agent, kind, data, tokens, phase, status, importance, pinned, created_at";
pub(crate) const MSG_COLUMNS: &str =
    "seq, id, session_id, role, agent, content, tokens, importance, pinned, created_at";

pub(crate) fn op_from_row(r: &Row<'_>) -> rusqlite::Result<Operation> {
    let data: String = r.get(5)?;
    let phase: Option<String> = r.get(7)?;
    Ok(Operation {
        seq: r.get(0)?,
        id: r.get(1)?,
        session_id: r.get(2)?,
        agent: r.get(3)?,
        kind: r.get(4)?,
        data: serde_json::from_str(&data).unwrap_or(serde_json::Value::String(data)),
        tokens: r.get::<_, i64>(6)? as u64,
        phase: phase.and_then(|p| p.parse::<Phase>().ok()),
        status: r.get(8)?,
        importance: r.get(9)?,
        pinned: r.get(10)?,
        created_at: Timestamp(r.get(11)?),
    })
}

pub(crate) fn msg_from_row(r: &Row<'_>) -> rusqlite::Result<Message> {
    let role: String = r.get(3)?;
    Ok(Message {
        seq: r.get(0)?,
        id: r.get(1)?,
        session_id: r.get(2)?,
        role: role.parse::<Role>().unwrap_or(Role::System),
        agent: r.get(4)?,
        content: r.get(5)?,
        tokens: r.get::<_, i64>(6)? as u64,
        importance: r.get(7)?,
        pinned: r.get(8)?,
        created_at: Timestamp(r.get(9)?),
    })
}

/// Every word must match; each is quoted, so no input is FTS5 syntax.
pub(crate) fn fts_query(keywords: &str) -> Option<String> {
    let terms: Vec<String> = keywords
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

fn tokens_i64(tokens: u64) -> Result<i64, StoreError> {
    i64::try_from(tokens)
        .map_err(|_| StoreError::Invalid(format!("{tokens} tokens is more than can be stored")))
}

/// Appends an operation inside the caller's transaction.
pub(crate) fn insert_operation(
    tx: &rusqlite::Connection,
    store: &SqliteStore,
    op: &OperationDraft,
) -> Result<Operation, StoreError> {
    let id = new_id();
    let tokens = tokens_i64(op.tokens)?;
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
    Ok(Operation {
        id: id.clone(),
        seq,
        session_id: op.session_id.clone(),
        agent: op.agent.clone(),
        kind: op.kind.clone(),
        data: op.data.clone(),
        tokens: op.tokens,
        phase: op.phase,
        status: op.status.clone(),
        importance: op.importance,
        pinned: op.pinned,
        created_at: op.created_at,
    })
}

/// Appends a message inside the caller's transaction.
fn insert_message(
    tx: &rusqlite::Connection,
    store: &SqliteStore,
    m: &MessageDraft,
    id: &str,
    tokens: i64,
) -> Result<Message, StoreError> {
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
    Ok(Message {
        id: id.to_string(),
        seq,
        session_id: m.session_id.clone(),
        role: m.role,
        agent: m.agent.clone(),
        content: m.content.clone(),
        tokens: m.tokens,
        importance: m.importance,
        pinned: m.pinned,
        created_at: m.created_at,
    })
}

impl OperationLog for SqliteStore {
    fn append_operation(&self, op: &OperationDraft) -> Result<Operation, StoreError> {
        self.write(|tx| insert_operation(tx, self, op))
    }

    fn append_messages(&self, msgs: &[MessageDraft]) -> Result<Vec<Message>, StoreError> {
        let rows = msgs
            .iter()
            .map(|m| Ok((new_id(), tokens_i64(m.tokens)?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        self.write(|tx| {
            let mut out = Vec::with_capacity(msgs.len());
            for (m, (id, tokens)) in msgs.iter().zip(&rows) {
                out.push(insert_message(tx, self, m, id, *tokens)?);
            }
            Ok(out)
        })
    }

    fn operations(&self, q: &OperationQuery) -> Result<Vec<Operation>, StoreError> {
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

    fn count_operations(&self, q: &OperationQuery) -> Result<u64, StoreError> {
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

    fn messages(&self, q: &MessageQuery) -> Result<Vec<Message>, StoreError> {
        let filter = LogFilter {
            table: "messages",
            session_id: q.session_id.as_ref(),
            kind: None,
            keywords: q.keywords.as_ref(),
        };
        let Some((mut sql, mut args)) = self.log_filter(MSG_COLUMNS, filter) else {
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

    fn operation(&self, id: &str) -> Result<Operation, StoreError> {
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

/// The filters both logs' queries share.
struct LogFilter<'q> {
    table: &'static str,
    session_id: Option<&'q String>,
    kind: Option<&'q String>,
    keywords: Option<&'q String>,
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
        self.log_filter(
            columns,
            LogFilter {
                table: "operations",
                session_id: q.session_id.as_ref(),
                kind: q.kind.as_ref(),
                keywords: q.keywords.as_ref(),
            },
        )
    }
}
