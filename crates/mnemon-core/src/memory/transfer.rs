//! A project's tables in a form every backend reads and writes, for moving
//! a project from one backend to another (`mnemon migrate --to`) and
//! proving nothing changed on the way: the same rows, counted and hashed
//! the same on both sides.
//!
//! Positions (`seq`) are copied as they are: summaries, checkpoints, engine
//! states and the optimizer name records by them.

use sha2::{Digest, Sha256};

/// How a column's values are compared across backends (SQLite's 0/1 and
/// PostgreSQL's booleans are one value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Real,
    Text,
    Bool,
    Blob,
}

/// One value.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// One table of a project.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [(&'static str, Kind)],
    /// The columns (by position in `columns`) that identify a row.
    pub key: &'static [usize],
    /// Whether the table has a `project_id` column to select by.
    pub per_project: bool,
    /// The identity column the target must continue after, if any.
    pub identity: Option<&'static str>,
    /// The text the target's full-text entry is made of (column positions,
    /// joined by spaces), if the table is searched.
    pub indexed: &'static [usize],
}

use Kind::{Blob, Bool, Int, Real, Text};

/// Every table of a project, parents before the rows that point at them.
pub const TABLES: &[Table] = &[
    Table {
        name: "sessions",
        columns: &[
            ("id", Text),
            ("project_id", Text),
            ("title", Text),
            ("agent", Text),
            ("status", Text),
            ("started_at", Int),
            ("ended_at", Int),
            ("summary", Text),
            ("operation_count", Int),
            ("message_count", Int),
            ("tokens", Int),
            ("last_activity", Int),
        ],
        key: &[0],
        per_project: true,
        identity: None,
        indexed: &[],
    },
    Table {
        name: "operations",
        columns: &[
            ("seq", Int),
            ("id", Text),
            ("project_id", Text),
            ("session_id", Text),
            ("agent", Text),
            ("kind", Text),
            ("data", Text),
            ("tokens", Int),
            ("phase", Text),
            ("status", Text),
            ("importance", Real),
            ("pinned", Bool),
            ("created_at", Int),
        ],
        key: &[0],
        per_project: true,
        identity: Some("seq"),
        indexed: &[5, 6],
    },
    Table {
        name: "messages",
        columns: &[
            ("seq", Int),
            ("id", Text),
            ("project_id", Text),
            ("session_id", Text),
            ("role", Text),
            ("agent", Text),
            ("content", Text),
            ("tokens", Int),
            ("importance", Real),
            ("pinned", Bool),
            ("created_at", Int),
        ],
        key: &[0],
        per_project: true,
        identity: Some("seq"),
        indexed: &[6],
    },
    Table {
        name: "hot_items",
        columns: &[
            ("seq", Int),
            ("id", Text),
            ("project_id", Text),
            ("kind", Text),
            ("text", Text),
            ("detail", Text),
            ("parent_id", Text),
            ("priority", Text),
            ("status", Text),
            ("agent", Text),
            ("version", Int),
            ("created_at", Int),
            ("updated_at", Int),
        ],
        key: &[0],
        per_project: true,
        identity: Some("seq"),
        indexed: &[4, 5],
    },
    Table {
        name: "hot_versions",
        columns: &[("project_id", Text), ("version", Int)],
        key: &[0],
        per_project: true,
        identity: None,
        indexed: &[],
    },
    Table {
        name: "hot_history",
        columns: &[
            ("item_id", Text),
            ("version", Int),
            ("text", Text),
            ("detail", Text),
            ("priority", Text),
            ("status", Text),
            ("agent", Text),
            ("updated_at", Int),
        ],
        key: &[0, 1],
        per_project: false,
        identity: None,
        indexed: &[],
    },
    Table {
        name: "decisions",
        columns: &[
            ("seq", Int),
            ("id", Text),
            ("project_id", Text),
            ("title", Text),
            ("record", Text),
            ("status", Text),
            ("superseded_by", Text),
            ("agent", Text),
            ("created_at", Int),
        ],
        key: &[0],
        per_project: true,
        identity: Some("seq"),
        indexed: &[3, 4],
    },
    Table {
        name: "entities",
        columns: &[
            ("project_id", Text),
            ("number", Int),
            ("kind", Text),
            ("title", Text),
            ("description", Text),
            ("status", Text),
            ("priority", Int),
            ("parent", Int),
            ("created_at", Int),
            ("updated_at", Int),
            ("deleted_at", Int),
        ],
        key: &[1],
        per_project: true,
        identity: None,
        indexed: &[3, 4],
    },
    Table {
        name: "documents",
        columns: &[
            ("project_id", Text),
            ("kind", Text),
            ("version", Int),
            ("content", Text),
            ("created_at", Int),
        ],
        key: &[1, 2],
        per_project: true,
        identity: None,
        indexed: &[3],
    },
    Table {
        name: "engine_state",
        columns: &[
            ("project_id", Text),
            ("agent", Text),
            ("version", Int),
            ("state", Text),
        ],
        key: &[1],
        per_project: true,
        identity: None,
        indexed: &[],
    },
    Table {
        name: "calibration",
        columns: &[
            ("project_id", Text),
            ("model", Text),
            ("factor_ppm", Int),
            ("samples", Int),
        ],
        key: &[1],
        per_project: true,
        identity: None,
        indexed: &[],
    },
    Table {
        name: "checkpoints",
        columns: &[
            ("id", Text),
            ("project_id", Text),
            ("agent", Text),
            ("session_id", Text),
            ("trigger", Text),
            ("created_at", Int),
            ("json", Text),
        ],
        key: &[0],
        per_project: true,
        identity: None,
        indexed: &[],
    },
    Table {
        name: "compactions",
        columns: &[
            ("seq", Int),
            ("project_id", Text),
            ("session_id", Text),
            ("kind", Text),
            ("created_at", Int),
            ("input_tokens", Int),
            ("output_tokens", Int),
            ("audit", Text),
            ("summary", Text),
            ("through_op_seq", Int),
            ("through_msg_seq", Int),
        ],
        key: &[0],
        per_project: true,
        identity: Some("seq"),
        indexed: &[],
    },
    Table {
        name: "substitutions",
        columns: &[
            ("project_id", Text),
            ("op_seq", Int),
            ("technique", Text),
            ("kind", Text),
            ("text", Text),
            ("tokens", Int),
            ("reason", Text),
            ("original_tokens", Int),
            ("created_at", Int),
        ],
        key: &[1],
        per_project: true,
        identity: None,
        indexed: &[],
    },
    Table {
        name: "artifacts",
        columns: &[
            ("project_id", Text),
            ("path", Text),
            ("technique", Text),
            ("content", Text),
            ("created_at", Int),
        ],
        key: &[1],
        per_project: true,
        identity: None,
        indexed: &[],
    },
    Table {
        name: "vectors",
        columns: &[
            ("seq", Int),
            ("model", Text),
            ("source", Text),
            ("record", Int),
            ("chunk", Int),
            ("scale", Real),
            ("vector", Blob),
        ],
        key: &[0],
        per_project: false,
        identity: Some("seq"),
        indexed: &[],
    },
    Table {
        name: "forgettings",
        columns: &[
            ("seq", Int),
            ("project_id", Text),
            ("at", Int),
            ("agent", Text),
            ("targets", Text),
            ("operations", Int),
            ("messages", Int),
            ("hot_items", Int),
            ("decisions", Int),
            ("sessions", Int),
        ],
        key: &[0],
        per_project: true,
        identity: Some("seq"),
        indexed: &[],
    },
];

/// What one table held, as counted and hashed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TableSum {
    pub table: String,
    pub rows: u64,
    /// SHA-256 of the rows in key order, each value tagged with its kind.
    pub sha256: String,
}

impl Table {
    /// The count and hash of `rows`, whatever order they came in.
    pub fn sum(&self, rows: &[Vec<Cell>]) -> TableSum {
        let mut sorted: Vec<&Vec<Cell>> = rows.iter().collect();
        sorted.sort_by(|a, b| {
            for &k in self.key {
                let o = cmp(&a[k], &b[k]);
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        });
        let mut h = Sha256::new();
        for row in sorted {
            for (cell, (_, kind)) in row.iter().zip(self.columns) {
                encode(&mut h, cell, *kind);
            }
            h.update([0xff]);
        }
        TableSum {
            table: self.name.to_string(),
            rows: rows.len() as u64,
            sha256: h.finalize().iter().map(|b| format!("{b:02x}")).collect(),
        }
    }

    /// The text a row's search entry is made of.
    pub fn indexed_text(&self, row: &[Cell]) -> Option<String> {
        if self.indexed.is_empty() {
            return None;
        }
        let parts: Vec<&str> = self
            .indexed
            .iter()
            .filter_map(|&i| match &row[i] {
                Cell::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        Some(parts.join(" "))
    }
}

fn cmp(a: &Cell, b: &Cell) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Cell::Int(x), Cell::Int(y)) => x.cmp(y),
        (Cell::Text(x), Cell::Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Cell::Real(x), Cell::Real(y)) => x.total_cmp(y),
        (Cell::Blob(x), Cell::Blob(y)) => x.cmp(y),
        (Cell::Null, Cell::Null) => Ordering::Equal,
        (Cell::Null, _) => Ordering::Less,
        (_, Cell::Null) => Ordering::Greater,
        _ => Ordering::Equal,
    }
}

fn encode(h: &mut Sha256, cell: &Cell, kind: Kind) {
    match (cell, kind) {
        (Cell::Null, _) => h.update([0]),
        (Cell::Int(v), Kind::Bool) => h.update([1, u8::from(*v != 0)]),
        (Cell::Int(v), _) => {
            h.update([2]);
            h.update(v.to_be_bytes());
        }
        (Cell::Real(v), _) => {
            h.update([3]);
            h.update(v.to_bits().to_be_bytes());
        }
        (Cell::Text(t), _) => {
            h.update([4]);
            h.update((t.len() as u64).to_be_bytes());
            h.update(t.as_bytes());
        }
        (Cell::Blob(b), _) => {
            h.update([5]);
            h.update((b.len() as u64).to_be_bytes());
            h.update(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sum_ignores_row_order_and_sees_any_change() {
        let t = TABLES[0];
        let row = |id: &str, n: i64| {
            let mut r = vec![Cell::Null; t.columns.len()];
            r[0] = Cell::Text(id.into());
            r[5] = Cell::Int(n);
            r
        };
        let a = t.sum(&[row("a", 1), row("b", 2)]);
        assert_eq!(a, t.sum(&[row("b", 2), row("a", 1)]));
        assert_ne!(a, t.sum(&[row("a", 1), row("b", 3)]));
        assert_eq!(a.rows, 2);
    }

    #[test]
    fn booleans_hash_alike_from_either_backend() {
        let ops = TABLES[1];
        let mut r = vec![Cell::Null; ops.columns.len()];
        r[0] = Cell::Int(1);
        r[11] = Cell::Int(1);
        let mut r2 = r.clone();
        r2[11] = Cell::Int(7);
        assert_eq!(ops.sum(&[r]), ops.sum(&[r2]));
    }
}
