//! Operations and messages: append, read most recent first, keyword search.

use mnemon_core::memory::{
    Message, MessageDraft, MessageQuery, Operation, OperationDraft, OperationLog, OperationQuery,
    Phase, StoreError, StoreResult,
};
use mnemon_core::store::sql::{LogFilter, stored_tokens};
use tokio_postgres::types::ToSql;

pub(crate) use crate::row::{msg_from_row, op_from_row};
pub(crate) use mnemon_core::store::sql::{
    MESSAGE_COLUMNS as MSG_COLUMNS, OPERATION_COLUMNS as OP_COLUMNS,
};

use crate::client::Db;
use crate::text::{every_word, words};
use crate::{PgStore, limit, new_id};

/// PostgreSQL's text cannot hold a NUL character; SQLite's can.
fn no_nul(what: &str, s: &str) -> StoreResult<()> {
    if s.contains('\0') {
        return Err(StoreError::Invalid(format!(
            "the {what} holds a NUL character, which PostgreSQL cannot store; remove it"
        )));
    }
    Ok(())
}

/// Appends an operation inside the caller's transaction.
pub(crate) fn insert_operation(
    db: &Db,
    store: &PgStore,
    op: &OperationDraft,
) -> StoreResult<Operation> {
    let id = new_id();
    let tokens = stored_tokens(op.tokens)?;
    let data = serde_json::to_string(&op.data).map_err(|e| StoreError::Invalid(e.to_string()))?;
    no_nul("operation's data", &data)?;
    let indexed = words(&format!("{} {}", op.kind, data));
    let row = db.one(
        "INSERT INTO operations (id, project_id, session_id, agent, kind, data, tokens, phase, status, importance, pinned, created_at, tsv)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, strip(to_tsvector('simple', $13))) RETURNING seq",
        &[
            &id,
            &store.project(),
            &op.session_id,
            &op.agent,
            &op.kind,
            &data,
            &tokens,
            &op.phase.map(Phase::name),
            &op.status,
            &op.importance,
            &op.pinned,
            &op.created_at.0,
            &indexed,
        ],
    )?;
    let seq: i64 = row.get(0);
    if let Some(session) = &op.session_id {
        db.exec(
            "UPDATE sessions SET operation_count = operation_count + 1, tokens = tokens + $2, last_activity = greatest(last_activity, $3) WHERE id = $1",
            &[session, &tokens, &op.created_at.0],
        )?;
    }
    Ok(op.stored(id, seq))
}

/// `SELECT columns FROM table WHERE ...` and its arguments; `None` when the
/// keywords hold nothing searchable.
fn log_filter(
    store: &PgStore,
    columns: &str,
    f: LogFilter<'_>,
) -> Option<(String, Vec<Box<dyn ToSql + Sync + Send>>)> {
    let table = f.table;
    let mut sql = format!("SELECT {columns} FROM {table} WHERE project_id = $1");
    let mut args: Vec<Box<dyn ToSql + Sync + Send>> = vec![Box::new(store.project().to_string())];
    if let Some(s) = f.session_id {
        args.push(Box::new(s.clone()));
        sql.push_str(&format!(" AND session_id = ${}", args.len()));
    }
    if let Some(k) = f.kind {
        args.push(Box::new(k.clone()));
        sql.push_str(&format!(" AND kind = ${}", args.len()));
    }
    if let Some(w) = f.keywords {
        args.push(Box::new(every_word(w)?));
        sql.push_str(&format!(
            " AND tsv @@ to_tsquery('simple', ${})",
            args.len()
        ));
    }
    Some((sql, args))
}

fn refs(args: &[Box<dyn ToSql + Sync + Send>]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter()
        .map(|a| a.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

fn op_filter(
    store: &PgStore,
    columns: &str,
    q: &OperationQuery,
) -> Option<(String, Vec<Box<dyn ToSql + Sync + Send>>)> {
    log_filter(store, columns, LogFilter::operations(q))
}

/// Appends a message inside the caller's transaction.
fn insert_message(
    db: &Db,
    store: &PgStore,
    m: &MessageDraft,
    id: &str,
    tokens: i64,
    indexed: &str,
) -> StoreResult<Message> {
    let row = db.one(
        "INSERT INTO messages (id, project_id, session_id, role, agent, content, tokens, importance, pinned, created_at, tsv)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, strip(to_tsvector('simple', $11))) RETURNING seq",
        &[
            &id,
            &store.project(),
            &m.session_id,
            &m.role.name(),
            &m.agent,
            &m.content,
            &tokens,
            &m.importance,
            &m.pinned,
            &m.created_at.0,
            &indexed,
        ],
    )?;
    let seq: i64 = row.get(0);
    if let Some(session) = &m.session_id {
        db.exec(
            "UPDATE sessions SET message_count = message_count + 1, tokens = tokens + $2, last_activity = greatest(last_activity, $3) WHERE id = $1",
            &[session, &tokens, &m.created_at.0],
        )?;
    }
    Ok(m.stored(id.to_string(), seq))
}

impl OperationLog for PgStore {
    fn append_operation(&self, op: &OperationDraft) -> StoreResult<Operation> {
        self.write(|db| insert_operation(db, self, op))
    }

    fn append_messages(&self, msgs: &[MessageDraft]) -> StoreResult<Vec<Message>> {
        for m in msgs {
            no_nul("message", &m.content)?;
        }
        let rows = msgs
            .iter()
            .map(|m| Ok((new_id(), stored_tokens(m.tokens)?, words(&m.content))))
            .collect::<StoreResult<Vec<_>>>()?;
        self.write(|db| {
            let mut out = Vec::with_capacity(msgs.len());
            for (m, (id, tokens, indexed)) in msgs.iter().zip(&rows) {
                out.push(insert_message(db, self, m, id, *tokens, indexed)?);
            }
            Ok(out)
        })
    }

    fn operations(&self, q: &OperationQuery) -> StoreResult<Vec<Operation>> {
        let Some((mut sql, mut args)) = op_filter(self, OP_COLUMNS, q) else {
            return Ok(Vec::new());
        };
        args.push(Box::new(limit(q.limit)));
        sql.push_str(&format!(" ORDER BY seq DESC LIMIT ${}", args.len()));
        let rows = self.db()?.query(&sql, &refs(&args))?;
        Ok(rows.iter().map(op_from_row).collect())
    }

    fn count_operations(&self, q: &OperationQuery) -> StoreResult<u64> {
        let Some((sql, args)) = op_filter(self, "count(*)", q) else {
            return Ok(0);
        };
        let n: i64 = self.db()?.one(&sql, &refs(&args))?.get(0);
        let n = n as u64;
        Ok(q.limit.map_or(n, |l| n.min(l as u64)))
    }

    fn messages(&self, q: &MessageQuery) -> StoreResult<Vec<Message>> {
        let Some((mut sql, mut args)) = log_filter(self, MSG_COLUMNS, LogFilter::messages(q))
        else {
            return Ok(Vec::new());
        };
        args.push(Box::new(limit(q.limit)));
        sql.push_str(&format!(" ORDER BY seq DESC LIMIT ${}", args.len()));
        let rows = self.db()?.query(&sql, &refs(&args))?;
        Ok(rows.iter().map(msg_from_row).collect())
    }

    fn operation(&self, id: &str) -> StoreResult<Operation> {
        let db = self.db()?;
        let full = crate::resolve_id(&db, "operations", "operation", self.project(), id)?;
        db.opt(
            &format!("SELECT {OP_COLUMNS} FROM operations WHERE id = $1"),
            &[&full],
        )?
        .map(|r| op_from_row(&r))
        .ok_or_else(|| StoreError::NotFound {
            what: "operation",
            id: id.to_string(),
        })
    }
}
