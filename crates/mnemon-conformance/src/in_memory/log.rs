//! Operations and messages: an append-only log, read most recent first.

use std::sync::Arc;

use mnemon_core::memory::{
    Message, MessageDraft, MessageQuery, Operation, OperationDraft, OperationLog, OperationQuery,
    StoreError, StoreResult, Timestamp,
};
use mnemon_core::store::sql::stored_tokens;

use super::{Ids, InMemoryStore, Tables, new_id, words};

impl Tables {
    /// Counts a new row into its session, which must exist: the SQL
    /// backends refuse such a row by a foreign key.
    fn count_into(
        &mut self,
        session: Option<&String>,
        tokens: u64,
        at: Timestamp,
        operation: bool,
    ) -> StoreResult<()> {
        let Some(id) = session else {
            return Ok(());
        };
        let s = self
            .sessions
            .iter_mut()
            .find(|s| &s.id == id)
            .ok_or_else(|| {
                StoreError::Invalid(format!(
                    "no session `{id}` in this project: start it before writing into it"
                ))
            })?;
        let s = Arc::make_mut(s);
        if operation {
            s.operation_count += 1;
        } else {
            s.message_count += 1;
        }
        s.tokens += tokens;
        s.last_activity = s.last_activity.max(at);
        Ok(())
    }

    /// Appends an operation inside the caller's change.
    pub(super) fn insert_operation(&mut self, op: &OperationDraft) -> StoreResult<Operation> {
        stored_tokens(op.tokens)?;
        self.count_into(op.session_id.as_ref(), op.tokens, op.created_at, true)?;
        self.last_operation += 1;
        let stored = op.stored(new_id(), self.last_operation);
        self.operations.push(Arc::new(stored.clone()));
        Ok(stored)
    }

    fn insert_message(&mut self, m: &MessageDraft) -> StoreResult<Message> {
        stored_tokens(m.tokens)?;
        self.count_into(m.session_id.as_ref(), m.tokens, m.created_at, false)?;
        self.last_message += 1;
        let stored = m.stored(new_id(), self.last_message);
        self.messages.push(Arc::new(stored.clone()));
        Ok(stored)
    }

    /// The operations `q` selects, most recent first, before its limit.
    fn selected_operations<'t>(
        &'t self,
        q: &'t OperationQuery,
    ) -> Option<impl Iterator<Item = &'t Arc<Operation>> + 't> {
        let words = match &q.keywords {
            Some(k) => Some(words::query(k)?),
            None => None,
        };
        Some(self.operations.iter().rev().filter(move |o| {
            q.session_id
                .as_ref()
                .is_none_or(|s| o.session_id.as_ref() == Some(s))
                && q.kind.as_ref().is_none_or(|k| &o.kind == k)
                && words
                    .as_ref()
                    .is_none_or(|w| words::matches(w, &format!("{} {}", o.kind, o.data)))
        }))
    }
}

impl OperationLog for InMemoryStore {
    fn append_operation(&self, op: &OperationDraft) -> StoreResult<Operation> {
        self.write(|t| t.insert_operation(op))
    }

    fn append_messages(&self, msgs: &[MessageDraft]) -> StoreResult<Vec<Message>> {
        self.write(|t| msgs.iter().map(|m| t.insert_message(m)).collect())
    }

    fn operations(&self, q: &OperationQuery) -> StoreResult<Vec<Operation>> {
        self.read(|t| {
            let Some(rows) = t.selected_operations(q) else {
                return Ok(Vec::new());
            };
            Ok(rows
                .take(q.limit.unwrap_or(usize::MAX))
                .map(|o| Operation::clone(o))
                .collect())
        })
    }

    fn count_operations(&self, q: &OperationQuery) -> StoreResult<u64> {
        self.read(|t| {
            let Some(rows) = t.selected_operations(q) else {
                return Ok(0);
            };
            Ok(rows.take(q.limit.unwrap_or(usize::MAX)).count() as u64)
        })
    }

    fn messages(&self, q: &MessageQuery) -> StoreResult<Vec<Message>> {
        let words = match &q.keywords {
            Some(k) => match words::query(k) {
                Some(w) => Some(w),
                None => return Ok(Vec::new()),
            },
            None => None,
        };
        self.read(|t| {
            Ok(t.messages
                .iter()
                .rev()
                .filter(|m| {
                    q.session_id
                        .as_ref()
                        .is_none_or(|s| m.session_id.as_ref() == Some(s))
                        && words.as_ref().is_none_or(|w| words::matches(w, &m.content))
                })
                .take(q.limit.unwrap_or(usize::MAX))
                .map(|m| Message::clone(m))
                .collect())
        })
    }

    fn operation(&self, id: &str) -> StoreResult<Operation> {
        self.read(|t| {
            let full = Ids::of(t.operations.iter().map(|o| (o.seq, o.id.as_str()))).resolve(
                "operations",
                "operation",
                id,
            )?;
            t.operations
                .iter()
                .find(|o| o.id == full)
                .map(|o| Operation::clone(o))
                .ok_or_else(|| StoreError::NotFound {
                    what: "operation",
                    id: id.to_string(),
                })
        })
    }
}
