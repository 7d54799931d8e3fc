//! Durability across processes: concurrent writers, a writer killed with
//! SIGKILL, and files that are not (or not yet) mnemon databases.
//!
//! Child writers are this test binary run again with `--ignored --exact
//! child_writer`; the environment tells them what to do.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use mnemon_core::memory::{NewOperation, OperationLog, OperationQuery, SessionStore, StoreError};
use mnemon_sqlite::SqliteStore;
use serde_json::json;

const DB: &str = "MNEMON_TEST_CHILD_DB";
const WRITES: &str = "MNEMON_TEST_CHILD_WRITES";
const NAME: &str = "MNEMON_TEST_CHILD_NAME";

/// Run only as a child of the tests below.
#[test]
#[ignore = "a helper process for the durability tests, not a test of its own"]
fn child_writer() {
    let db = std::env::var(DB).expect("run by the durability tests");
    let writes: usize = std::env::var(WRITES).unwrap().parse().unwrap();
    let name = std::env::var(NAME).unwrap();
    let store = SqliteStore::open(Path::new(&db)).unwrap();
    let m = mnemon_conformance::memory(store, &name);
    let mut out = std::io::stdout().lock();
    for i in 0..writes {
        let op = m
            .record(NewOperation {
                kind: "stress".into(),
                data: json!({"proc": name, "i": i}),
                tokens: Some(3),
                ..NewOperation::default()
            })
            .unwrap();
        // Acknowledged only after the commit returned.
        use std::io::Write;
        writeln!(out, "ack {}", op.id).unwrap();
        out.flush().unwrap();
    }
}

fn child(db: &Path, name: &str, writes: usize) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_writer",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DB, db)
        .env(WRITES, writes.to_string())
        .env(NAME, name)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// libtest prints `test child_writer ... ` without a newline before the
/// child's first line, so an acknowledgement may follow other text.
fn acks(line: &str) -> Option<String> {
    line.rsplit_once("ack ")
        .map(|(_, id)| id.trim().to_string())
}

#[test]
fn eight_processes_times_500_writes_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mnemon.db");
    SqliteStore::open(&db).unwrap();
    let children: Vec<_> = (0..8)
        .map(|p| child(&db, &format!("proc-{p}"), 500))
        .collect();
    let mut acked = Vec::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success());
        acked.extend(
            String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .filter_map(acks),
        );
    }
    assert_eq!(acked.len(), 4_000);
    let store = SqliteStore::open(&db).unwrap();
    let ops = stress_ops(&store);
    assert_eq!(ops.len(), 4_000, "every write landed");
    let mut pairs: Vec<(String, u64)> = ops
        .iter()
        .map(|o| {
            (
                o.data["proc"].as_str().unwrap().to_string(),
                o.data["i"].as_u64().unwrap(),
            )
        })
        .collect();
    pairs.sort();
    pairs.dedup();
    assert_eq!(pairs.len(), 4_000, "no write was stored twice");
    let mut ids: Vec<_> = ops.iter().map(|o| o.id.clone()).collect();
    ids.sort();
    acked.sort();
    assert_eq!(ids, acked, "exactly the acknowledged writes");
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

fn stress_ops(store: &SqliteStore) -> Vec<mnemon_core::memory::Operation> {
    store
        .operations(&OperationQuery {
            kind: Some("stress".into()),
            ..OperationQuery::default()
        })
        .unwrap()
}

/// Processes that open a project whose database does not exist yet, all
/// at once: the first migrates it, the others wait for the lock and find it
/// migrated. None fails with a half-created schema.
#[test]
fn processes_creating_one_database_together_all_succeed() {
    for round in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("mnemon.db");
        let children: Vec<_> = (0..8)
            .map(|p| child(&db, &format!("first-{p}"), 5))
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: a child failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let store = SqliteStore::open(&db).unwrap();
        assert_eq!(
            stress_ops(&store).len(),
            40,
            "round {round}: every write landed once"
        );
        assert_eq!(store.integrity_check().unwrap(), "ok");
    }
}

#[test]
fn sigkill_at_random_points_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mnemon.db");
    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut all_acked = Vec::new();
    for round in 0..20 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let stop_after = 1 + (rng % 150) as usize;
        let mut c = child(&db, &format!("victim-{round}"), 1_000_000);
        let mut lines = BufReader::new(c.stdout.take().unwrap()).lines();
        for _ in 0..stop_after {
            match lines.next() {
                Some(Ok(line)) => all_acked.extend(acks(&line)),
                _ => break,
            }
        }
        c.kill().unwrap(); // SIGKILL on Unix: no destructors, no flush.
        c.wait().unwrap();
        // Whatever the child printed before dying was also acknowledged.
        all_acked.extend(lines.map_while(Result::ok).filter_map(|l| acks(&l)));

        let store = SqliteStore::open(&db).unwrap();
        assert_eq!(store.integrity_check().unwrap(), "ok", "round {round}");
        for id in &all_acked {
            store
                .operation(id)
                .unwrap_or_else(|e| panic!("round {round}: acknowledged {id} lost: {e}"));
        }
    }
    assert!(all_acked.len() >= 20);
}

/// SQLite's page cap fails a write with SQLITE_FULL, the same error a full
/// disk gives; it stands in for filling a real disk, which a test cannot do
/// safely on a shared machine.
#[test]
fn a_full_disk_refuses_the_write_and_keeps_what_was_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mnemon.db");
    let store = SqliteStore::open(&db).unwrap();
    let m = mnemon_conformance::memory(store, "filler");
    let mut acked = Vec::new();
    let big = "x".repeat(2_000);
    // SQLite never sets the cap below the current size, so a cap of 1 reads it.
    let now = m.store().limit_pages(1).unwrap();
    assert_eq!(m.store().limit_pages(now + 64).unwrap(), now + 64);
    let err = loop {
        match m.record(NewOperation {
            kind: "fill".into(),
            data: json!({"blob": big}),
            tokens: Some(1),
            ..NewOperation::default()
        }) {
            Ok(op) => acked.push(op.id),
            Err(e) => break e,
        }
        assert!(acked.len() < 10_000, "the cap was never reached");
    };
    assert_eq!(err, StoreError::DiskFull, "{err}");
    assert!(err.to_string().contains("nothing was written"));
    assert!(!acked.is_empty());
    drop(m);
    let store = SqliteStore::open(&db).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let stored = store
        .operations(&OperationQuery {
            kind: Some("fill".into()),
            ..OperationQuery::default()
        })
        .unwrap();
    assert_eq!(
        stored.len(),
        acked.len(),
        "every acknowledged write is there, and no half-written one"
    );
}

#[test]
fn a_text_file_is_refused_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemon.db");
    std::fs::write(&path, "just some notes\n").unwrap();
    let err = SqliteStore::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Foreign { .. }), "{err}");
    assert!(err.to_string().contains("not an SQLite database"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "just some notes\n");
}

#[test]
fn another_programs_database_is_refused_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemon.db");
    let other = other_programs_db(&path);
    let err = SqliteStore::open(&path).unwrap_err();
    assert!(
        err.to_string().contains("holds other tables (invoices)"),
        "{err}"
    );
    assert!(
        std::fs::read(&path).unwrap() == other,
        "nothing was written"
    );
}

/// An SQLite file of some other program.
fn other_programs_db(path: &Path) -> Vec<u8> {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL);")
        .unwrap();
    drop(conn);
    std::fs::read(path).unwrap()
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemon.db");
    SqliteStore::open(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)",
        [],
    )
    .unwrap();
    drop(conn);
    let err = SqliteStore::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::NewerSchema { found: 999, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("Upgrade mnemon"), "{err}");
}

#[test]
fn a_damaged_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemon.db");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend(std::iter::repeat_n(0xA5u8, 8192));
    std::fs::write(&path, &bytes).unwrap();
    let err = SqliteStore::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::Corrupt { .. } | StoreError::Foreign { .. }),
        "{err}"
    );
    assert!(
        std::fs::read(&path).unwrap() == bytes,
        "nothing was written"
    );
}

#[test]
fn an_unwritable_location_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "").unwrap();
    let err = SqliteStore::open(&blocker.join("mnemon.db")).unwrap_err();
    assert!(err.to_string().contains("not-a-dir"), "{err}");
}

#[test]
fn writers_of_one_agent_starting_together_share_one_session() {
    // Eight connections, as eight processes would hold, all finding no
    // session and starting one at the same moment: a read-then-insert would
    // give several, and each writer would keep resetting the others' window.
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("mnemon.db");
        SqliteStore::open(&db).unwrap();
        let gate = std::sync::Barrier::new(8);
        let ids: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    let (db, gate) = (&db, &gate);
                    s.spawn(move || {
                        let m =
                            mnemon_conformance::memory(SqliteStore::open(db).unwrap(), "shared");
                        gate.wait();
                        m.current_session().unwrap().id
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(ids.iter().all(|id| *id == ids[0]), "round {round}: {ids:?}");
        let m = mnemon_conformance::memory(SqliteStore::open(&db).unwrap(), "shared");
        let sessions = m.store().sessions(100).unwrap();
        assert_eq!(sessions.len(), 1, "round {round}: {sessions:?}");
    }
}
