//! The rows forgetting reads and writes: what a backend supplies, as SQL
//! ([`ForgetSql`]) or otherwise. Which rows follow which, and what is
//! rewritten, is decided once, by the walk beside it (`walk.rs`).

use crate::memory::{StoreError, StoreResult};
use crate::store::sql::Columns;

use super::ForgetAudit;

/// Everything whose text holds a phrase (`ForgetTarget::Matching`): any
/// string in an operation's data, a message, any version of a hot item, a
/// decision's title or record. Letters are compared without case (ASCII
/// letters at least).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matched {
    pub operations: Vec<i64>,
    pub messages: Vec<i64>,
    pub hot_items: Vec<String>,
    pub decisions: Vec<String>,
}

/// The tables that hold text copied from records, without their ids as
/// rows: each of their rows is read, and rewritten or removed when it held
/// what is forgotten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldKind {
    Compactions,
    SessionSummaries,
    Checkpoints,
    EngineStates,
    Substitutions,
    Artifacts,
    Documents,
}

impl HeldKind {
    /// The query that reads every row of this kind, placeholder 1 the
    /// project; a backend may append an order.
    pub fn select_statement(self, mark: fn(usize) -> String) -> String {
        let (columns, table, only) = match self {
            HeldKind::Compactions => ("seq, session_id, summary, audit", "compactions", ""),
            HeldKind::SessionSummaries => ("id, summary", "sessions", " AND summary IS NOT NULL"),
            HeldKind::Checkpoints => ("id, session_id, json", "checkpoints", ""),
            HeldKind::EngineStates => ("agent, state", "engine_state", ""),
            HeldKind::Substitutions => ("op_seq, text", "substitutions", " AND text IS NOT NULL"),
            HeldKind::Artifacts => ("path, content", "artifacts", ""),
            HeldKind::Documents => ("kind, version, content", "documents", ""),
        };
        format!(
            "SELECT {columns} FROM {table} WHERE project_id = {}{only}",
            mark(1)
        )
    }

    /// A row of [`HeldKind::select_statement`].
    pub fn read<C: Columns + ?Sized>(self, r: &C) -> Result<Held, C::Error> {
        Ok(match self {
            HeldKind::Compactions => Held::Compaction {
                seq: r.int(0)?,
                session: r.maybe_text(1)?,
                summary: r.text(2)?,
                audit: r.text(3)?,
            },
            HeldKind::SessionSummaries => Held::SessionSummary {
                id: r.text(0)?,
                summary: r.text(1)?,
            },
            HeldKind::Checkpoints => Held::Checkpoint {
                id: r.text(0)?,
                session: r.maybe_text(1)?,
                json: r.text(2)?,
            },
            HeldKind::EngineStates => Held::EngineState {
                agent: r.text(0)?,
                state: r.text(1)?,
            },
            HeldKind::Substitutions => Held::Substitution {
                op_seq: r.int(0)?,
                text: r.text(1)?,
            },
            HeldKind::Artifacts => Held::Artifact {
                path: r.text(0)?,
                content: r.text(1)?,
            },
            HeldKind::Documents => Held::Document {
                kind: r.text(0)?,
                version: r.int(1)?,
                content: r.text(2)?,
            },
        })
    }
}

/// One row that holds copied text, keyed as its table keys it.
#[derive(Debug, Clone, PartialEq)]
pub enum Held {
    /// A compaction's summary and its audit (JSON).
    Compaction {
        seq: i64,
        session: Option<String>,
        summary: String,
        audit: String,
    },
    /// A session's summary (sessions without one are not read).
    SessionSummary { id: String, summary: String },
    /// A checkpoint, as its JSON.
    Checkpoint {
        id: String,
        session: Option<String>,
        json: String,
    },
    /// An agent's engine state, as its JSON. Rewriting it moves its
    /// version on, so an engine holding the old state reads it again.
    EngineState { agent: String, state: String },
    /// The optimizer's stand-in text for an operation (rows with text only).
    Substitution { op_seq: i64, text: String },
    /// A file the optimizer archived, as its JSON.
    Artifact { path: String, content: String },
    /// One version of an episodic document.
    Document {
        kind: String,
        version: i64,
        content: String,
    },
}

/// A value forgetting writes into a row or keys it by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    Int(i64),
    Text(&'a str),
}

impl Held {
    /// The table the row is in (every one has a `project_id` column).
    pub fn table(&self) -> &'static str {
        match self {
            Held::Compaction { .. } => "compactions",
            Held::SessionSummary { .. } => "sessions",
            Held::Checkpoint { .. } => "checkpoints",
            Held::EngineState { .. } => "engine_state",
            Held::Substitution { .. } => "substitutions",
            Held::Artifact { .. } => "artifacts",
            Held::Document { .. } => "documents",
        }
    }

    /// The columns that key the row within its project, with its values.
    pub fn key(&self) -> Vec<(&'static str, Cell<'_>)> {
        match self {
            Held::Compaction { seq, .. } => vec![("seq", Cell::Int(*seq))],
            Held::SessionSummary { id, .. } | Held::Checkpoint { id, .. } => {
                vec![("id", Cell::Text(id))]
            }
            Held::EngineState { agent, .. } => vec![("agent", Cell::Text(agent))],
            Held::Substitution { op_seq, .. } => vec![("op_seq", Cell::Int(*op_seq))],
            Held::Artifact { path, .. } => vec![("path", Cell::Text(path))],
            Held::Document { kind, version, .. } => {
                vec![("kind", Cell::Text(kind)), ("version", Cell::Int(*version))]
            }
        }
    }

    /// The columns a rewrite writes, with the row's new text.
    pub fn text(&self) -> Vec<(&'static str, Cell<'_>)> {
        match self {
            Held::Compaction { summary, audit, .. } => {
                vec![
                    ("summary", Cell::Text(summary)),
                    ("audit", Cell::Text(audit)),
                ]
            }
            Held::SessionSummary { summary, .. } => vec![("summary", Cell::Text(summary))],
            Held::Checkpoint { json, .. } => vec![("json", Cell::Text(json))],
            Held::EngineState { state, .. } => vec![("state", Cell::Text(state))],
            Held::Substitution { text, .. } => vec![("text", Cell::Text(text))],
            Held::Artifact { content, .. } | Held::Document { content, .. } => {
                vec![("content", Cell::Text(content))]
            }
        }
    }

    /// Whether a rewrite also moves the row's `version` on: an engine
    /// holding an old engine state reads it again.
    pub fn versioned(&self) -> bool {
        matches!(self, Held::EngineState { .. })
    }

    /// The SQL that writes the row's text columns over the stored row of
    /// its key, and the values of its placeholders from the second on (the
    /// first is the project). `mark(n)` writes placeholder `n` as the
    /// backend's driver does (`?2`, `$2`). Both backends name their tables
    /// and columns alike, so the statement is written once, here.
    pub fn update_statement(&self, mark: fn(usize) -> String) -> (String, Vec<Cell<'_>>) {
        let text = self.text();
        let key = self.key();
        let mut set: Vec<String> = text
            .iter()
            .enumerate()
            .map(|(i, (c, _))| format!("{c} = {}", mark(i + 2)))
            .collect();
        if self.versioned() {
            set.push("version = version + 1".into());
        }
        let sql = format!(
            "UPDATE {} SET {} WHERE project_id = {} AND {}",
            self.table(),
            set.join(", "),
            mark(1),
            key_filter(&key, text.len() + 2, mark)
        );
        (sql, text.iter().chain(&key).map(|(_, v)| *v).collect())
    }

    /// The SQL that removes the stored row of this row's key, as
    /// [`Held::update_statement`] writes its.
    pub fn delete_statement(&self, mark: fn(usize) -> String) -> (String, Vec<Cell<'_>>) {
        let key = self.key();
        let sql = format!(
            "DELETE FROM {} WHERE project_id = {} AND {}",
            self.table(),
            mark(1),
            key_filter(&key, 2, mark)
        );
        (sql, key.iter().map(|(_, v)| *v).collect())
    }
}

/// `k1 = <first> AND k2 = <first + 1> …` for a row's key columns.
fn key_filter(key: &[(&str, Cell<'_>)], first: usize, mark: fn(usize) -> String) -> String {
    key.iter()
        .enumerate()
        .map(|(i, (c, _))| format!("{c} = {}", mark(first + i)))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// `{n}` in `sql` written as the backend's placeholder `n`.
fn marked(sql: &str, mark: fn(usize) -> String) -> String {
    let mut out = sql.to_string();
    for n in (1..=9).rev() {
        out = out.replace(&format!("{{{n}}}"), &mark(n));
    }
    out
}

/// [`ForgetSql::execute`] of statements written with `{n}` marks.
fn run<R: ForgetSql + ?Sized>(rows: &R, statements: &[&str], args: &[Cell<'_>]) -> StoreResult<()> {
    let mark = rows.mark();
    let sql: Vec<String> = statements.iter().map(|s| marked(s, mark)).collect();
    rows.execute(&sql, args)
}

/// The rows forgetting reads from a backend, each scoped to the store's
/// project: what the backend's own query language finds (a phrase, a JSON
/// field, an id's prefix). They run inside the unit of work forgetting
/// opens ([`crate::memory::Store::unit_of_work`]): a failure anywhere
/// leaves every row as it was.
pub trait ForgetRows: ForgetWrites {
    /// The position of the message whose id is `id` or starts with it.
    /// `NotFound` when none is, `Ambiguous` when several are.
    fn message_seq(&self, id: &str) -> StoreResult<i64>;

    /// Everything whose text holds `phrase`.
    fn matching(&self, phrase: &str) -> StoreResult<Matched>;

    /// The hot items that carry the decision `id` as a key decision (their
    /// text ends `(id)`).
    fn decision_hot_items(&self, id: &str) -> StoreResult<Vec<String>>;

    /// The text and detail of every version of the hot item `id`.
    fn hot_texts(&self, id: &str) -> StoreResult<Vec<String>>;

    /// The operations whose data names `id` as its `id`: the log lines that
    /// recorded a hot item or a decision.
    fn operations_logging(&self, id: &str) -> StoreResult<Vec<i64>>;

    /// Every row of `kind` ([`HeldKind::select_statement`] and
    /// [`HeldKind::read`] for a SQL backend).
    fn held(&self, kind: HeldKind) -> StoreResult<Vec<Held>>;

    /// Called once a forgetting (not a dry run) has committed: a backend
    /// frees the space the rows held, best effort (a forgetting that
    /// committed is never reported as failed).
    fn after_forgetting(&self, _forgotten: &super::Forgotten) {}
}

/// The rows forgetting removes and rewrites. What follows what (a hot
/// item's history, a decision's supersession, an operation's stand-in) is
/// in each method's contract. A SQL backend gets them all from
/// [`ForgetSql`]; a store that keeps rows another way writes them.
pub trait ForgetWrites {
    /// The positions of a session's operations and of its messages.
    fn session_logs(&self, id: &str) -> StoreResult<(Vec<i64>, Vec<i64>)>;

    /// Removes the operation at `seq`, the optimizer's stand-in for it and
    /// its vectors.
    fn delete_operation(&self, seq: i64) -> StoreResult<()>;

    /// Removes the message at `seq` and its vectors.
    fn delete_message(&self, seq: i64) -> StoreResult<()>;

    /// Removes a hot item with its history; items under it lose their
    /// parent, and the hot context's version moves on so readers that
    /// cached it see that it changed.
    fn delete_hot_item(&self, id: &str) -> StoreResult<()>;

    /// Removes a decision; one it superseded is no longer marked so.
    fn delete_decision(&self, id: &str) -> StoreResult<()>;

    fn delete_session(&self, id: &str) -> StoreResult<()>;

    /// Writes `row`'s text columns ([`Held::text`]) over the stored row of
    /// its table and key ([`Held::key`]), moving its version on when
    /// [`Held::versioned`].
    fn rewrite_held(&self, row: &Held) -> StoreResult<()>;

    /// Removes the stored row of `row`'s table and key. Forgetting removes
    /// compactions and checkpoints of forgotten sessions, archives and
    /// document versions; the other rows it only rewrites.
    fn remove_held(&self, row: &Held) -> StoreResult<()>;

    /// Appends `audit` to the audit of forgetting.
    fn record_forgetting(&self, audit: &ForgetAudit) -> StoreResult<()>;
}

/// What a SQL backend gives forgetting: its placeholders, and running its
/// statements. [`ForgetWrites`] is then written once, here, as statements
/// both SQL backends word alike (their tables and columns are named
/// alike). The vectors table has no project column: a record's vectors are
/// found through the record, which has one.
pub trait ForgetSql {
    /// How the backend's driver writes placeholder `n` (`?2`, `$2`).
    fn mark(&self) -> fn(usize) -> String;

    /// Runs each statement in order, placeholder 1 the project and 2, 3 …
    /// `args`, inside the unit of work.
    fn execute(&self, statements: &[String], args: &[Cell<'_>]) -> StoreResult<()>;

    /// The first column, an integer, of every row of `sql`, placeholder 1
    /// the project and 2 `arg`.
    fn positions(&self, sql: &str, arg: Cell<'_>) -> StoreResult<Vec<i64>>;
}

impl<S: ForgetSql + ?Sized> ForgetWrites for S {
    fn session_logs(&self, id: &str) -> StoreResult<(Vec<i64>, Vec<i64>)> {
        let of = |table: &str| {
            let sql =
                format!("SELECT seq FROM {table} WHERE project_id = {{1}} AND session_id = {{2}}");
            self.positions(&marked(&sql, self.mark()), Cell::Text(id))
        };
        Ok((of("operations")?, of("messages")?))
    }

    fn delete_operation(&self, seq: i64) -> StoreResult<()> {
        run(
            self,
            &[
                "DELETE FROM vectors WHERE source = 'operation' AND record = {2} AND EXISTS (SELECT 1 FROM operations WHERE project_id = {1} AND seq = {2})",
                "DELETE FROM substitutions WHERE project_id = {1} AND op_seq = {2}",
                "DELETE FROM operations WHERE project_id = {1} AND seq = {2}",
            ],
            &[Cell::Int(seq)],
        )
    }

    fn delete_message(&self, seq: i64) -> StoreResult<()> {
        run(
            self,
            &[
                "DELETE FROM vectors WHERE source = 'message' AND record = {2} AND EXISTS (SELECT 1 FROM messages WHERE project_id = {1} AND seq = {2})",
                "DELETE FROM messages WHERE project_id = {1} AND seq = {2}",
            ],
            &[Cell::Int(seq)],
        )
    }

    fn delete_hot_item(&self, id: &str) -> StoreResult<()> {
        run(
            self,
            &[
                "UPDATE hot_items SET parent_id = NULL WHERE project_id = {1} AND parent_id = {2}",
                "DELETE FROM hot_history WHERE item_id = {2} AND item_id IN (SELECT id FROM hot_items WHERE project_id = {1})",
                "DELETE FROM hot_items WHERE project_id = {1} AND id = {2}",
            ],
            &[Cell::Text(id)],
        )?;
        run(
            self,
            &["UPDATE hot_versions SET version = version + 1 WHERE project_id = {1}"],
            &[],
        )
    }

    fn delete_decision(&self, id: &str) -> StoreResult<()> {
        run(
            self,
            &[
                "UPDATE decisions SET superseded_by = NULL WHERE project_id = {1} AND superseded_by = {2}",
                "DELETE FROM decisions WHERE project_id = {1} AND id = {2}",
            ],
            &[Cell::Text(id)],
        )
    }

    fn delete_session(&self, id: &str) -> StoreResult<()> {
        run(
            self,
            &["DELETE FROM sessions WHERE project_id = {1} AND id = {2}"],
            &[Cell::Text(id)],
        )
    }

    fn rewrite_held(&self, row: &Held) -> StoreResult<()> {
        let (sql, values) = row.update_statement(self.mark());
        self.execute(&[sql], &values)
    }

    fn remove_held(&self, row: &Held) -> StoreResult<()> {
        let (sql, values) = row.delete_statement(self.mark());
        self.execute(&[sql], &values)
    }

    fn record_forgetting(&self, audit: &ForgetAudit) -> StoreResult<()> {
        let targets = serde_json::to_string(&audit.targets)
            .map_err(|e| StoreError::Invalid(format!("cannot encode the audit: {e}")))?;
        let count = |n: u64| Cell::Int(i64::try_from(n).unwrap_or(i64::MAX));
        run(
            self,
            &["INSERT INTO forgettings (project_id, at, agent, targets, operations, messages, hot_items, decisions, sessions)
               VALUES ({1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9})"],
            &[
                Cell::Int(audit.at.0),
                Cell::Text(&audit.agent),
                Cell::Text(&targets),
                count(audit.operations),
                count(audit.messages),
                count(audit.hot_items),
                count(audit.decisions),
                count(audit.sessions),
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_row_is_rewritten_and_removed_by_its_table_and_key() {
        let doc = Held::Document {
            kind: "work_plan".into(),
            version: 3,
            content: "text".into(),
        };
        let (sql, values) = doc.delete_statement(|n| format!("${n}"));
        assert_eq!(
            sql,
            "DELETE FROM documents WHERE project_id = $1 AND kind = $2 AND version = $3"
        );
        assert_eq!(values, [Cell::Text("work_plan"), Cell::Int(3)]);
        let state = Held::EngineState {
            agent: "a".into(),
            state: "{}".into(),
        };
        let (sql, values) = state.update_statement(|n| format!("?{n}"));
        assert_eq!(
            sql,
            "UPDATE engine_state SET state = ?2, version = version + 1 WHERE project_id = ?1 AND agent = ?3"
        );
        assert_eq!(values, [Cell::Text("{}"), Cell::Text("a")]);
        let compaction = Held::Compaction {
            seq: 7,
            session: None,
            summary: "s".into(),
            audit: "[]".into(),
        };
        let (sql, values) = compaction.update_statement(|n| format!("?{n}"));
        assert_eq!(
            sql,
            "UPDATE compactions SET summary = ?2, audit = ?3 WHERE project_id = ?1 AND seq = ?4"
        );
        assert_eq!(values, [Cell::Text("s"), Cell::Text("[]"), Cell::Int(7)]);
    }
}
