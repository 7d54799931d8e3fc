//! Short handles: `o12` an operation, `m7` a message, `h3` a hot-context
//! item. A handle is the row's position in the store, so it is unique by
//! construction, unlike a prefix of a time-ordered UUID (two operations
//! recorded in the same millisecond share their first 13 characters).
//! Every surface prints handles and accepts them wherever it accepts an id;
//! long ids and unique prefixes stay accepted.

use super::{HotItem, Message, Operation, StoreError, StoreResult};

/// What a handle's letter names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandleKind {
    Operation,
    Message,
    Hot,
}

impl HandleKind {
    pub fn letter(self) -> char {
        match self {
            HandleKind::Operation => 'o',
            HandleKind::Message => 'm',
            HandleKind::Hot => 'h',
        }
    }

    /// The kind whose rows a backend keeps in `table` (both backends name
    /// their tables alike), so one id resolver serves every table.
    pub fn of_table(table: &str) -> Option<HandleKind> {
        match table {
            "operations" => Some(HandleKind::Operation),
            "messages" => Some(HandleKind::Message),
            "hot_items" => Some(HandleKind::Hot),
            _ => None,
        }
    }

    /// `o12` for position 12.
    pub fn handle(self, seq: i64) -> String {
        format!("{}{seq}", self.letter())
    }

    /// The position `text` names when it is this kind's handle (`h3` -> 3).
    /// A UUID never parses: it has a hyphen and more than one letter.
    pub fn position(self, text: &str) -> Option<i64> {
        let rest = text.trim().strip_prefix(self.letter())?;
        if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        rest.parse::<i64>().ok().filter(|n| *n > 0)
    }
}

/// The queries an id resolution needs from a backend, for one table of
/// the project.
pub trait IdLookup {
    /// The id of the row at position `seq`, if there is one.
    fn at_position(&self, seq: i64) -> StoreResult<Option<String>>;
    /// At most two ids that start with `prefix`.
    fn two_starting_with(&self, prefix: &str) -> StoreResult<Vec<String>>;
    /// How many ids start with `prefix`.
    fn count_starting_with(&self, prefix: &str) -> StoreResult<usize>;
}

/// The row of `table` that `id` names: a handle (`o12`, `m7`, `h3`) by its
/// position, else a full id, else a unique prefix. An id that is also the
/// prefix of longer ones names itself. `what` names the row in errors.
pub fn resolve_id(
    table: &str,
    what: &'static str,
    id: &str,
    lookup: &dyn IdLookup,
) -> StoreResult<String> {
    let id = id.trim();
    if id.is_empty() {
        return Err(StoreError::Invalid(format!("an empty {what} id")));
    }
    let not_found = || StoreError::NotFound {
        what,
        id: id.to_string(),
    };
    if let Some(seq) = HandleKind::of_table(table).and_then(|k| k.position(id)) {
        return lookup.at_position(seq)?.ok_or_else(not_found);
    }
    let ids = lookup.two_starting_with(id)?;
    match ids.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(not_found()),
        _ if ids.iter().any(|x| x == id) => Ok(id.to_string()),
        _ => Err(StoreError::Ambiguous {
            what,
            prefix: id.to_string(),
            count: lookup.count_starting_with(id)?,
        }),
    }
}

/// `prefix` as the pattern of SQL's `LIKE` (escaped with a backslash, the
/// default of PostgreSQL and SQLite's `ESCAPE '\\'`): its `\\`, `%` and `_`
/// match themselves, and anything may follow. For a backend whose
/// [`IdLookup`] matches prefixes with `LIKE`.
pub fn like_prefix(prefix: &str) -> String {
    let escaped = prefix
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("{escaped}%")
}

impl Operation {
    pub fn handle(&self) -> String {
        HandleKind::Operation.handle(self.seq)
    }
}

impl Message {
    pub fn handle(&self) -> String {
        HandleKind::Message.handle(self.seq)
    }
}

impl HotItem {
    pub fn handle(&self) -> String {
        HandleKind::Hot.handle(self.seq as i64)
    }
}

/// Every field as derived, plus `handle`: JSON readers (the API, MCP,
/// `--json`) see the handle the CLI prints. Destructuring each struct
/// whole makes a new field a compile error here until it is serialized.
mod wire {
    use serde::{Serialize, Serializer};

    use super::super::{HotItem, Message, Operation, Phase, Timestamp};
    use super::super::{HotKind, HotStatus, Priority};
    use crate::importance::Role;

    #[derive(Serialize)]
    struct OperationWire<'a> {
        id: &'a str,
        seq: i64,
        handle: String,
        session_id: &'a Option<String>,
        agent: &'a str,
        kind: &'a str,
        data: &'a serde_json::Value,
        tokens: u64,
        phase: &'a Option<Phase>,
        status: &'a Option<String>,
        importance: f64,
        pinned: bool,
        created_at: Timestamp,
    }

    impl Serialize for Operation {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let Operation {
                id,
                seq,
                session_id,
                agent,
                kind,
                data,
                tokens,
                phase,
                status,
                importance,
                pinned,
                created_at,
            } = self;
            OperationWire {
                id,
                seq: *seq,
                handle: self.handle(),
                session_id,
                agent,
                kind,
                data,
                tokens: *tokens,
                phase,
                status,
                importance: *importance,
                pinned: *pinned,
                created_at: *created_at,
            }
            .serialize(s)
        }
    }

    #[derive(Serialize)]
    struct MessageWire<'a> {
        id: &'a str,
        seq: i64,
        handle: String,
        session_id: &'a Option<String>,
        role: Role,
        agent: &'a str,
        content: &'a str,
        tokens: u64,
        importance: f64,
        pinned: bool,
        created_at: Timestamp,
    }

    impl Serialize for Message {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let Message {
                id,
                seq,
                session_id,
                role,
                agent,
                content,
                tokens,
                importance,
                pinned,
                created_at,
            } = self;
            MessageWire {
                id,
                seq: *seq,
                handle: self.handle(),
                session_id,
                role: *role,
                agent,
                content,
                tokens: *tokens,
                importance: *importance,
                pinned: *pinned,
                created_at: *created_at,
            }
            .serialize(s)
        }
    }

    #[derive(Serialize)]
    struct HotItemWire<'a> {
        id: &'a str,
        seq: u64,
        handle: String,
        kind: HotKind,
        text: &'a str,
        detail: &'a Option<String>,
        parent_id: &'a Option<String>,
        priority: &'a Option<Priority>,
        status: HotStatus,
        agent: &'a str,
        version: u64,
        created_at: Timestamp,
        updated_at: Timestamp,
    }

    impl Serialize for HotItem {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let HotItem {
                id,
                seq,
                kind,
                text,
                detail,
                parent_id,
                priority,
                status,
                agent,
                version,
                created_at,
                updated_at,
            } = self;
            HotItemWire {
                id,
                seq: *seq,
                handle: self.handle(),
                kind: *kind,
                text,
                detail,
                parent_id,
                priority,
                status: *status,
                agent,
                version: *version,
                created_at: *created_at,
                updated_at: *updated_at,
            }
            .serialize(s)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Ids of one table in memory, matched as the SQL backends match them.
    struct Ids(Vec<(i64, &'static str)>);

    impl IdLookup for Ids {
        fn at_position(&self, seq: i64) -> StoreResult<Option<String>> {
            Ok(self.0.iter().find(|r| r.0 == seq).map(|r| r.1.to_string()))
        }
        fn two_starting_with(&self, prefix: &str) -> StoreResult<Vec<String>> {
            Ok(self
                .0
                .iter()
                .filter(|r| r.1.starts_with(prefix))
                .take(2)
                .map(|r| r.1.to_string())
                .collect())
        }
        fn count_starting_with(&self, prefix: &str) -> StoreResult<usize> {
            Ok(self.0.iter().filter(|r| r.1.starts_with(prefix)).count())
        }
    }

    #[test]
    fn an_id_resolves_by_handle_full_id_or_unique_prefix() {
        let ids = Ids(vec![
            (1, "abc-1"),
            (2, "abc-12"),
            (3, "abd-7"),
            (4, "abc-13"),
        ]);
        let r = |id: &str| resolve_id("operations", "operation", id, &ids);
        assert_eq!(r("o3").unwrap(), "abd-7", "a handle is a position");
        assert_eq!(r(" abd ").unwrap(), "abd-7", "a unique prefix, trimmed");
        assert_eq!(
            r("abc-1").unwrap(),
            "abc-1",
            "a full id that prefixes others"
        );
        assert!(matches!(
            r("abc"),
            Err(StoreError::Ambiguous { count: 3, .. })
        ));
        assert!(matches!(r("o9"), Err(StoreError::NotFound { .. })));
        assert!(matches!(r("zzz"), Err(StoreError::NotFound { .. })));
        assert!(matches!(r("  "), Err(StoreError::Invalid(_))));
        // Only the log tables have handles: elsewhere `o3` is a prefix.
        let decisions = resolve_id("decisions", "decision", "o3", &ids);
        assert!(matches!(decisions, Err(StoreError::NotFound { .. })));
    }

    #[test]
    fn a_like_prefix_matches_its_wildcards_literally() {
        assert_eq!(like_prefix("ab"), "ab%");
        assert_eq!(like_prefix("a_b%c\\"), "a\\_b\\%c\\\\%");
    }

    #[test]
    fn handles_parse_back_and_ids_never_do() {
        assert_eq!(HandleKind::Hot.position("h3"), Some(3));
        assert_eq!(HandleKind::Operation.position(" o12 "), Some(12));
        assert_eq!(HandleKind::Operation.position("m12"), None);
        assert_eq!(HandleKind::Operation.position("o0"), None);
        assert_eq!(HandleKind::Operation.position("o+1"), None);
        assert_eq!(HandleKind::Hot.position("h"), None);
        // A hex prefix of a UUIDv7 that happens to start with a letter.
        assert_eq!(HandleKind::Hot.position("019a2b3c-4d5e"), None);
    }

    #[test]
    fn json_carries_the_handle_and_reads_back_the_same() {
        let op = Operation {
            id: "01a2191f-e41a-7060-9fa0-ca0653f589f7".into(),
            seq: 12,
            session_id: Some("s".into()),
            agent: "orchestrator".into(),
            kind: "note".into(),
            data: serde_json::json!({"text": "x"}),
            tokens: 3,
            phase: None,
            status: Some("ok".into()),
            importance: 0.4,
            pinned: false,
            created_at: crate::memory::Timestamp(5),
        };
        let v = serde_json::to_value(&op).unwrap_or_default();
        assert_eq!(v["handle"], "o12");
        assert_eq!(v["seq"], 12);
        let back: Operation = serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, op);
        // Fields as the derive named them, plus the handle.
        let keys: Vec<String> = serde_json::to_value(&op)
            .ok()
            .and_then(|v| v.as_object().map(|o| o.keys().cloned().collect()))
            .unwrap_or_default();
        assert_eq!(keys.len(), 13, "{keys:?}");

        let m = Message {
            id: "m-id".into(),
            seq: 7,
            session_id: None,
            role: crate::importance::Role::User,
            agent: "a".into(),
            content: "hi".into(),
            tokens: 1,
            importance: 0.7,
            pinned: false,
            created_at: crate::memory::Timestamp(9),
        };
        let v = serde_json::to_value(&m).unwrap_or_default();
        assert_eq!(v["handle"], "m7");
        assert_eq!(v["role"], "user");
        let back: Message = serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, m);
    }

    proptest! {
        #[test]
        fn every_handle_names_its_position(seq in 1i64..i64::MAX) {
            for k in [HandleKind::Operation, HandleKind::Message, HandleKind::Hot] {
                prop_assert_eq!(k.position(&k.handle(seq)), Some(seq));
            }
        }
    }
}
