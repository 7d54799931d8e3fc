//! Stores in a bad state, each made on purpose in a fresh project.

use super::*;

pub(crate) fn db(d: &Path) -> std::path::PathBuf {
    d.join(".mnemon/mnemon.db")
}

/// Writes every committed page into the main file, so the file alone is
/// the store and can be damaged on purpose.
pub(crate) fn settle(d: &Path) {
    let c = rusqlite::Connection::open(db(d)).unwrap();
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
}

pub(crate) fn overwrite(d: &Path, at: usize, bytes: &[u8]) {
    settle(d);
    let mut all = std::fs::read(db(d)).unwrap();
    all[at..at + bytes.len()].copy_from_slice(bytes);
    std::fs::write(db(d), all).unwrap();
}

/// As root, file modes do not stop writes: the immutable attribute does.
pub(crate) fn freeze(p: &Path, on: bool) {
    let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    if root {
        let flag = if on { "+i" } else { "-i" };
        let out = Command::new("chattr").arg(flag).arg(p).output().unwrap();
        assert!(
            out.status.success(),
            "chattr {flag} {}: {out:?}",
            p.display()
        );
    } else {
        use std::os::unix::fs::PermissionsExt;
        let mode = match (p.is_dir(), on) {
            (true, true) => 0o555,
            (true, false) => 0o755,
            (false, true) => 0o444,
            (false, false) => 0o644,
        };
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

pub(crate) fn stores() -> Vec<StoreCase> {
    vec![
        StoreCase {
            name: "not a database",
            break_it: |d| std::fs::write(db(d), "plain text, not SQLite").unwrap(),
            args: &["record", "--type", "x"],
            code: 3,
            says: "not a mnemon database",
            untouched: true,
        },
        StoreCase {
            name: "a damaged header",
            break_it: |d| overwrite(d, 0, b"NOT SQLITE FORMAT"),
            args: &["recent"],
            code: 3,
            says: "not a mnemon database",
            untouched: true,
        },
        StoreCase {
            name: "damaged pages",
            break_it: |d| {
                settle(d);
                let len = std::fs::metadata(db(d)).unwrap().len() as usize;
                // Every page after the first: tables and indexes.
                overwrite(d, 4096, &vec![0xA5; len - 4096]);
            },
            args: &["record", "--type", "x"],
            code: 3,
            says: "damaged",
            untouched: true,
        },
        StoreCase {
            name: "cut short",
            break_it: |d| {
                settle(d);
                let all = std::fs::read(db(d)).unwrap();
                std::fs::write(db(d), &all[..all.len() / 3]).unwrap();
            },
            args: &["search", "canary"],
            code: 3,
            says: "damaged",
            untouched: true,
        },
        StoreCase {
            name: "from a newer mnemon",
            break_it: |d| {
                let c = rusqlite::Connection::open(db(d)).unwrap();
                c.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)",
                    [],
                )
                .unwrap();
                drop(c);
                settle(d);
            },
            args: &["status"],
            code: 3,
            says: "newer mnemon",
            untouched: true,
        },
        StoreCase {
            name: "read-only",
            break_it: |d| {
                settle(d);
                freeze(&db(d), true);
                freeze(&d.join(".mnemon"), true);
            },
            args: &["record", "--type", "x"],
            code: 3,
            says: "mnemon.db",
            untouched: true,
        },
        StoreCase {
            name: "a stale version",
            break_it: |d| {
                let hot = common::json(d, &["hot", "--json"]);
                let id = hot.to_string();
                let id = regex::Regex::new(
                    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                )
                .unwrap()
                .find(&id)
                .unwrap()
                .as_str()
                .to_string();
                // Someone else moves it to version 2 first.
                common::ok(
                    d,
                    &[
                        "goal",
                        "update",
                        &id,
                        "--status",
                        "in-progress",
                        "--if-version",
                        "1",
                    ],
                );
                std::fs::write(d.join("goal-id"), &id).unwrap();
            },
            args: &["goal", "complete", "@goal-id", "--if-version", "1"],
            code: 4,
            says: "conflict",
            untouched: true,
        },
    ]
}
