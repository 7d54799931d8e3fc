//! `mnemon import` stores a history many turns to a commit. What it leaves
//! behind must be what the same history leaves when an orchestrator sends
//! it turn by turn through `Mnemon::message`: the same rows in every table,
//! the same window accounting, the same checkpoints and views, with only
//! the random ids told apart.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use mnemon::mnemon_core::engine::EngineError;
use mnemon::mnemon_core::memory::transfer::{Cell, TABLES};
use mnemon::mnemon_core::memory::{Clock, Timestamp};
use mnemon::mnemon_import::{ImportSession, ImportTurn};
use mnemon::{Mnemon, NewMessage, OpenOptions, ReplayClock, Role};

const DAY_MS: i64 = 86_400_000;

/// A history that sets off every action an import meets: sessions on
/// several days, turns minutes apart (time checkpoints), long answers that
/// fill a 4,096-token window (zone actions, refreshes at the emergency
/// line, log compaction), requests to remember (pinned turns) and one turn
/// no live window could hold.
fn history() -> Vec<ImportSession> {
    let topics = [
        "the staging cluster rotates its certificates every ninety days",
        "Caroline moved the release train to Thursdays after the outage",
        "the billing service keeps invoices in the ledger_v2 table",
        "argon2id replaced bcrypt for password hashing in March",
        "the mobile team ships builds through the beta channel first",
    ];
    let mut sessions = Vec::new();
    let mut at = 1_767_261_600_000; // 2026-01-01T10:00:00Z
    for s in 0..6 {
        let mut turns = Vec::new();
        for t in 0..140 {
            let topic = topics[(s * 7 + t) % topics.len()];
            let (role, content) = if t % 2 == 0 {
                let ask = if t % 37 == 0 {
                    format!("Remember this: {topic} (note {s}.{t}).")
                } else {
                    format!("Question {s}.{t}: what do we know about how {topic}?")
                };
                (Role::User, ask)
            } else {
                let len = 1 + (t * 13 + s * 5) % 9;
                let body = (0..len)
                    .map(|k| format!("Point {k} of answer {s}.{t}: {topic}, as agreed."))
                    .collect::<Vec<_>>()
                    .join(" ");
                (Role::Assistant, body)
            };
            turns.push(ImportTurn {
                role,
                content,
                at: Some(Timestamp(at)),
            });
            at += 9 * 60_000;
        }
        if s == 3 {
            turns.insert(
                70,
                ImportTurn {
                    role: Role::Assistant,
                    content: "A log pasted whole: ".to_string() + &"line of output ".repeat(2_000),
                    at: turns[69].at,
                },
            );
        }
        sessions.push(ImportSession {
            title: Some(format!("day {s}")),
            turns,
        });
        at += DAY_MS;
    }
    sessions
}

fn project(clock: &Arc<ReplayClock>) -> (tempfile::TempDir, Mnemon) {
    let dir = tempfile::tempdir().unwrap();
    mnemon::init(
        dir.path(),
        &mnemon::InitOptions {
            model: None,
            window: Some(4_096),
        },
    )
    .unwrap();
    let clock: Arc<dyn Clock> = clock.clone();
    let m = OpenOptions::new().clock(clock).open(dir.path()).unwrap();
    (dir, m)
}

/// The history as an orchestrator would send it, one turn per call.
fn turn_by_turn(m: &Mnemon, clock: &ReplayClock, sessions: &[ImportSession]) {
    for s in sessions {
        let first = s.turns[0].at.unwrap();
        clock.set(first);
        m.start_session(s.title.as_deref()).unwrap();
        let mut last = first;
        for t in &s.turns {
            let at = t.at.unwrap().max(last);
            last = at;
            clock.set(at);
            let msg = NewMessage {
                role: t.role,
                content: t.content.clone(),
                agent: None,
                tokens: None,
            };
            match m.message(msg.clone()) {
                Ok(_) => {}
                Err(mnemon::Error::Engine(EngineError::TooLarge { .. })) => {
                    m.archive_message(msg).unwrap();
                }
                Err(e) => panic!("{e}"),
            }
        }
        let _: mnemon::Written<mnemon::SessionEnd> = m.end_session(None).unwrap();
    }
}

/// Replaces every UUID in `text` by its rank of first appearance, so two
/// projects that did the same things in the same order read the same.
fn normalize(text: &str, ids: &mut HashMap<String, usize>) -> String {
    let b = text.as_bytes();
    let is_uuid = |s: &[u8]| {
        s.len() == 36
            && s.iter().enumerate().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => *c == b'-',
                _ => c.is_ascii_hexdigit(),
            })
    };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if i + 36 <= b.len() && text.is_char_boundary(i + 36) && is_uuid(&b[i..i + 36]) {
            let n = ids.len();
            let k = *ids.entry(text[i..i + 36].to_string()).or_insert(n);
            out.push_str(&format!("<id{k}>"));
            i += 36;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// A checkpoint's digest hashes the ids it names, which differ between two
/// projects; what it hashes is compared field by field.
fn without_digests(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("\"digest\": \"") {
            Some(i) => format!("{}\"digest\": <digest>", &l[..i]),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every table of the project and every file under `.mnemon/` (but the
/// database), ids normalized.
fn state(root: &Path) -> BTreeMap<String, Vec<String>> {
    let mut ids = HashMap::new();
    let mut out = BTreeMap::new();
    // Read from the file, as another process would.
    let store = mnemon_sqlite::SqliteStore::open(&root.join(".mnemon/mnemon.db")).unwrap();
    let tables = store.export(TABLES).unwrap();
    for (t, rows) in TABLES.iter().zip(tables) {
        let rows = rows
            .iter()
            .map(|row| {
                let cells: Vec<String> = row
                    .iter()
                    .map(|c| match c {
                        Cell::Text(s) => normalize(&without_digests(s), &mut ids),
                        other => format!("{other:?}"),
                    })
                    .collect();
                cells.join(" | ")
            })
            .collect();
        out.insert(format!("table {}", t.name), rows);
    }
    let dir = root.join(".mnemon");
    let mut files = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    for p in files {
        let name = p.strip_prefix(&dir).unwrap().display().to_string();
        if name.starts_with("mnemon.db") || name == "project-id" {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
        // The project is named after its directory, a random one here.
        let root_name = root.file_name().unwrap().to_string_lossy();
        let text = without_digests(&text).replace(&*root_name, "<root>");
        let name = normalize(&name, &mut ids);
        // An archived session's file ends in the first 8 hex digits of its
        // id, a UUIDv7 whose leading bits are the wall clock's: two runs a
        // minute apart name the same session differently.
        let name = match name.strip_suffix(".md").and_then(|n| n.rsplit_once('_')) {
            Some((stem, id8)) if name.starts_with("sessions/archive/") && id8.len() == 8 => {
                format!("{stem}_<id8>.md")
            }
            _ => name,
        };
        out.insert(format!("file {name}"), vec![normalize(&text, &mut ids)]);
    }
    out
}

#[test]
fn an_import_in_batches_leaves_what_turn_by_turn_leaves() {
    let sessions = history();
    let clock_a = Arc::new(ReplayClock::default());
    let (dir_a, a) = project(&clock_a);
    let report = mnemon::import::import(&a, &clock_a, &sessions, |_| {}).unwrap();
    let turns: usize = sessions.iter().map(|s| s.turns.len()).sum();
    assert_eq!(report.messages, turns);
    assert_eq!(report.outside_window, 1, "the pasted log is history only");
    assert!(report.refreshes > 0, "the history filled the window");
    assert!(
        report.writes * 2 < turns,
        "{} turns took {} writes",
        turns,
        report.writes
    );
    a.flush_views();

    let clock_b = Arc::new(ReplayClock::default());
    let (dir_b, b) = project(&clock_b);
    turn_by_turn(&b, &clock_b, &sessions);
    b.flush_views();

    let (sa, sb) = (state(dir_a.path()), state(dir_b.path()));
    let checkpoints = sa.keys().filter(|k| k.contains("checkpoints/")).count();
    assert!(
        checkpoints > 10,
        "the history set off checkpoints: {checkpoints}"
    );
    assert_eq!(
        sa.keys().collect::<Vec<_>>(),
        sb.keys().collect::<Vec<_>>(),
        "the same tables and files"
    );
    for (k, rows) in &sa {
        let other = &sb[k];
        assert_eq!(rows.len(), other.len(), "{k}: row count");
        for (i, (x, y)) in rows.iter().zip(other).enumerate() {
            assert_eq!(x, y, "{k}, row {i}");
        }
    }
    // Importing it again stores nothing twice.
    let again = mnemon::import::import(&a, &clock_a, &sessions, |_| {}).unwrap();
    assert_eq!(again.messages, 0);
    assert_eq!(again.already_stored, turns);
}
