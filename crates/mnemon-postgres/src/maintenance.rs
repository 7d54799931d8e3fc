//! `mnemon doctor` on PostgreSQL: the schema's version, search entries
//! that do not match their rows, and rows pointing at rows that are gone.
//! Page-level integrity is PostgreSQL's own (data checksums, `amcheck`).

use mnemon_core::memory::{Health, StoreError, StoreResult};

use crate::PgStore;

const TABLES: [&str; 14] = [
    "sessions",
    "operations",
    "messages",
    "hot_items",
    "hot_history",
    "decisions",
    "entities",
    "documents",
    "engine_state",
    "checkpoints",
    "compactions",
    "substitutions",
    "artifacts",
    "vectors",
];

/// Rows whose text has a word but whose search entry is empty.
const UNINDEXED: [(&str, &str); 4] = [
    ("operations", "data"),
    ("messages", "content"),
    ("hot_items", "text"),
    ("decisions", "title"),
];

const ORPHANS: [(&str, &str); 4] = [
    (
        "hot-item versions without their item",
        "SELECT count(*) FROM hot_history h WHERE NOT EXISTS (SELECT 1 FROM hot_items i WHERE i.id = h.item_id)",
    ),
    (
        "vectors of operations that are gone",
        "SELECT count(*) FROM vectors v WHERE v.source = 'operation' AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.seq = v.record)",
    ),
    (
        "vectors of messages that are gone",
        "SELECT count(*) FROM vectors v WHERE v.source = 'message' AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.seq = v.record)",
    ),
    (
        "optimizer substitutions of operations that are gone",
        "SELECT count(*) FROM substitutions s WHERE NOT EXISTS (SELECT 1 FROM operations o WHERE o.seq = s.op_seq)",
    ),
];

impl PgStore {
    pub fn check(&self) -> StoreResult<Health> {
        self.snapshot(|db| {
            let mut h = Health {
                latest_schema: crate::LATEST_SCHEMA,
                schema_version: db
                    .one("SELECT coalesce(max(version), 0) FROM schema_migrations", &[])?
                    .get(0),
                ..Health::default()
            };
            for t in TABLES {
                let n: i64 = db.one(&format!("SELECT count(*) FROM {t}"), &[])?.get(0);
                h.rows.push((t.to_string(), n.max(0) as u64));
            }
            for (table, column) in UNINDEXED {
                let n: i64 = db
                    .one(
                        &format!(
                            "SELECT count(*) FROM {table} WHERE tsv = ''::tsvector AND {column} ~ '[0-9A-Za-z]'"
                        ),
                        &[],
                    )?
                    .get(0);
                if n > 0 {
                    h.search_index
                        .push(format!("{n} rows of {table} have no search entry"));
                }
            }
            for (what, sql) in ORPHANS {
                let n: i64 = db.one(sql, &[])?.get(0);
                if n > 0 {
                    h.orphans.push(format!("{n} {what}"));
                }
            }
            Ok(h)
        })
    }
}

impl mnemon_core::store::Backend for PgStore {
    fn shown(&self) -> String {
        PgStore::shown(self).to_string()
    }

    fn check(&self) -> StoreResult<Health> {
        PgStore::check(self)
    }

    fn backup_to(&self, _dest: &std::path::Path) -> StoreResult<()> {
        Err(StoreError::Invalid(format!(
            "this project lives in PostgreSQL ({}); back it up with pg_dump (`pg_dump -Fc -n SCHEMA DATABASE`), which takes a consistent snapshot while servers write",
            PgStore::shown(self)
        )))
    }
}
