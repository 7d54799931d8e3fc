//! `mnemon forget`, through the real binary: what is forgotten is found by
//! neither search nor context, leaves no byte under `.mnemon/`, and leaves
//! a store that checks out and still resumes its checkpoints.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::path::Path;

mod common;

/// Everything a model or a user could be shown about `query`.
fn shown(dir: &Path, query: &str) -> String {
    let search = common::ok(dir, &["search", query, "--limit", "100"]);
    let context = common::ok(
        dir,
        &[
            "context", "--budget", "8000", "--query", query, "--preset", "qa",
        ],
    );
    let planner = common::ok(dir, &["context", "--budget", "8000"]);
    format!("{search}\n{context}\n{planner}")
}

const FACT: &str = "the staging database password lives in the orange notebook";
const WORD: &str = "orange notebook";
/// A question about the fact that does not contain the fact's words
/// (search echoes its query when nothing matches).
const ASK: &str = "where is the staging password notebook";

#[test]
fn a_forgotten_fact_is_found_by_neither_search_nor_context_nor_on_disk() {
    let p = common::project();
    let dir = p.path();
    // The message first: the session starts with the first write, and a
    // session begun in the hot item's millisecond would share the prefix
    // of its id that the item is forgotten by below.
    let said = common::json(
        dir,
        &[
            "message",
            "--role",
            "user",
            &format!("Please note: {FACT}."),
            "--json",
        ],
    );
    let msg_seq = said["seq"].as_i64().unwrap();
    let hot = common::json(dir, &["remember", FACT, "--json"]);
    let hot_id = hot["id"].as_str().unwrap().to_string();
    let dr = common::json(
        dir,
        &[
            "decision",
            "add",
            "--title",
            "Keep the orange notebook in the safe",
            "--context",
            "The orange notebook holds the staging credentials",
            "--decision",
            "The orange notebook stays locked in the office safe",
            "--positive",
            "Nobody carries the orange notebook home",
            "--json",
        ],
    );
    let dr_id = dr["id"].as_str().unwrap().to_string();
    // What must stay.
    common::ok(dir, &["remember", "Deploys happen on Tuesday mornings"]);
    common::ok(
        dir,
        &[
            "message",
            "--role",
            "assistant",
            "Understood, Tuesday mornings it is.",
        ],
    );
    // Copies of the fact: a compaction's summary and a checkpoint.
    common::ok(dir, &["compact"]);
    let cp = common::json(dir, &["checkpoint", "create", "--json"]);
    let cp_id = cp["id"].as_str().unwrap().to_string();
    assert!(shown(dir, WORD).contains(WORD));
    assert!(common::on_disk(dir, WORD));

    // A dry run names what would go and changes nothing.
    let before = common::all_bytes(dir).len();
    let dry = common::json(
        dir,
        &[
            "forget",
            &hot_id[..13],
            &format!("m{msg_seq}"),
            &dr_id,
            "--dry-run",
            "--json",
        ],
    );
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["hot_items"].as_array().unwrap().len(), 2, "{dry}");
    assert!(shown(dir, WORD).contains(WORD));
    assert_eq!(common::all_bytes(dir).len(), before);

    let f = common::json(
        dir,
        &[
            "forget",
            &hot_id[..13],
            &format!("m{msg_seq}"),
            &dr_id,
            "--json",
        ],
    );
    // The note, the key decision the decision put in the hot context, the
    // operations that logged all three, the message, the decision.
    assert_eq!(f["hot_items"].as_array().unwrap().len(), 2, "{f}");
    assert_eq!(f["messages"], serde_json::json!([msg_seq]), "{f}");
    assert_eq!(f["decisions"], serde_json::json!([dr_id.clone()]), "{f}");
    assert_eq!(f["operations"].as_array().unwrap().len(), 3, "{f}");
    assert!(f["summaries_rewritten"].as_u64().unwrap() >= 1, "{f}");
    assert_eq!(
        f["checkpoints_rewritten"],
        serde_json::json!([cp_id.clone()])
    );

    let seen = shown(dir, ASK);
    assert!(!seen.to_lowercase().contains("orange"), "{seen}");
    assert!(
        !common::on_disk(dir, WORD),
        "the fact is still in a file under .mnemon/"
    );
    assert!(!common::on_disk(dir, "Orange notebook"));
    // Not even as a term of the full-text index, whose segments keep
    // lowercase words (and would keep them until a merge without
    // FTS5's secure-delete).
    assert!(
        !common::on_disk(dir, "notebook"),
        "a term is left in a file under .mnemon/"
    );
    // What was not forgotten is all still there.
    assert!(shown(dir, "Tuesday mornings").contains("Tuesday mornings"));

    // The store checks out and the rewritten checkpoint still resumes.
    let doctor = common::mnemon(dir, &["doctor"]);
    assert!(doctor.status.success(), "{doctor:?}");
    common::ok(dir, &["checkpoint", "resume", &cp_id]);
    assert!(!shown(dir, ASK).to_lowercase().contains("orange"));

    // The audit says what and when, never the content.
    let audit = common::json(dir, &["forget", "--history", "--json"]);
    assert_eq!(audit.as_array().unwrap().len(), 1, "{audit}");
    assert_eq!(audit[0]["hot_items"], 2);
    let text = audit.to_string();
    assert!(!text.contains("orange") && text.contains(&dr_id), "{text}");
    let human = common::ok(dir, &["forget", "--history"]);
    assert!(
        human.contains("2 hot items") && human.contains(&format!("m{msg_seq}")),
        "{human}"
    );
}

#[test]
fn a_whole_session_is_forgotten_once_it_has_ended() {
    let p = common::project();
    let dir = p.path();
    common::ok(dir, &["session", "start", "--title", "the lighthouse plan"]);
    common::ok(
        dir,
        &[
            "message",
            "--role",
            "user",
            "The lighthouse keeper retires in March.",
        ],
    );
    common::ok(
        dir,
        &[
            "record",
            "--type",
            "note",
            "--data",
            r#"{"text": "Ask the lighthouse keeper for the lamp manual"}"#,
        ],
    );
    let s = common::json(dir, &["session", "show", "--json"]);
    let id = s["id"].as_str().unwrap().to_string();

    // The agent's active session is refused, and nothing changes.
    let out = common::mnemon(dir, &["forget", &id]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is active") && err.contains("mnemon session end"),
        "{err}"
    );
    assert!(shown(dir, "lighthouse keeper").contains("lighthouse keeper"));

    common::ok(dir, &["session", "end"]);
    common::ok(dir, &["remember", "The harbour opens at six"]);
    let f = common::json(dir, &["forget", &id, "--json"]);
    assert_eq!(f["sessions"], serde_json::json!([id.clone()]));
    assert!(f["messages"].as_array().unwrap().len() == 1, "{f}");
    assert!(
        !f["checkpoints_removed"].as_array().unwrap().is_empty(),
        "{f}"
    );
    let seen = shown(dir, "who retires in March");
    assert!(!seen.contains("lighthouse"), "{seen}");
    assert!(
        !common::on_disk(dir, "lighthouse"),
        "the session is still on disk"
    );
    let out = common::mnemon(dir, &["session", "show", &id]);
    assert_eq!(out.status.code(), Some(1));
    // The project goes on.
    assert!(shown(dir, "harbour").contains("The harbour opens at six"));
    let doctor = common::mnemon(dir, &["doctor"]);
    assert!(doctor.status.success(), "{doctor:?}");
    common::ok(
        dir,
        &["record", "--type", "note", "--data", r#"{"text": "after"}"#],
    );
}

#[test]
fn an_unknown_or_ambiguous_target_forgets_nothing() {
    let p = common::project();
    let dir = p.path();
    common::ok(dir, &["remember", "The tide table is on the wall"]);
    let before = common::ok(dir, &["search", "tide table"]);
    for (target, says) in [
        ("o999", "no operation with id `o999`"),
        ("DR-00000000", "no decision"),
        (
            "zz-not-an-id",
            "no record, message, hot item, decision or session",
        ),
        ("", "an empty id"),
    ] {
        // Every target is checked before anything goes: a good one first
        // does not go either.
        let out = common::mnemon(dir, &["forget", "o1", target]);
        assert_eq!(out.status.code(), Some(1), "{target}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{target}: {err}");
    }
    assert_eq!(common::ok(dir, &["search", "tide table"]), before);
    let audit = common::json(dir, &["forget", "--history", "--json"]);
    assert_eq!(audit, serde_json::json!([]));
    // Nothing named is a usage error.
    assert_eq!(common::mnemon(dir, &["forget"]).status.code(), Some(2));
}

#[test]
fn a_phrase_is_forgotten_wherever_it_was_said() {
    let p = common::project();
    let dir = p.path();
    // The same fact, said three ways: remembered, told in a turn, logged.
    common::ok(dir, &["remember", "My home address is 12 Quay Street"]);
    common::ok(
        dir,
        &[
            "message",
            "--role",
            "user",
            "send it to my home address: 12 Quay Street, please",
        ],
    );
    common::ok(
        dir,
        &[
            "record",
            "--type",
            "task_execution",
            "--data",
            r#"{"task": "label", "result": "printed for 12 QUAY STREET"}"#,
        ],
    );
    common::ok(dir, &["remember", "Invoices go out on Fridays"]);
    // What `mnemon chat` keeps of the lines typed into it.
    let typed = dir.join(".mnemon").join(mnemon::CHAT_HISTORY);
    std::fs::write(
        &typed,
        "#V2\n/remember Home address: 12 Quay Street\nwhat are the invoices about?\n",
    )
    .unwrap();

    let short = common::mnemon(dir, &["forget", "--matching", "12"]);
    assert_eq!(short.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&short.stderr).contains("too short"));

    let dry = common::json(
        dir,
        &[
            "forget",
            "--matching",
            "12 quay street",
            "--dry-run",
            "--json",
        ],
    );
    assert_eq!(dry["messages"].as_array().unwrap().len(), 1, "{dry}");
    assert_eq!(dry["hot_items"].as_array().unwrap().len(), 1, "{dry}");
    // The remembered item's log line and the task.
    assert_eq!(dry["operations"].as_array().unwrap().len(), 2, "{dry}");

    common::ok(dir, &["forget", "--matching", "12 quay street"]);
    let seen = shown(dir, "where do I live, home address");
    assert!(!seen.to_lowercase().contains("quay"), "{seen}");
    assert!(!common::on_disk(dir, "Quay Street") && !common::on_disk(dir, "QUAY STREET"));
    assert!(shown(dir, "invoices").contains("Invoices go out on Fridays"));
    assert_eq!(
        std::fs::read_to_string(&typed).unwrap(),
        "#V2\nwhat are the invoices about?\n",
        "the typed line that said it is gone, the others stay"
    );
    let audit = common::ok(dir, &["forget", "--history", "--json"]);
    assert!(
        !audit.to_lowercase().contains("quay") && audit.contains("14 characters"),
        "{audit}"
    );
    let again = common::ok(dir, &["forget", "--matching", "12 quay street"]);
    assert!(again.contains("nothing holds that text"), "{again}");
}

/// A history as a user makes one: a chat that remembers the phrase and
/// says it, checkpoints, refreshes, a compaction and an optimization, hot
/// items edited (each rewrite frees the space the old row held).
fn a_realistic_history(dir: &Path) {
    std::fs::write(
        dir.join("chat.txt"),
        "/remember Home address: 12 Quay Street\n\
         I moved to 12 Quay Street last month, please send the parcel there\n\
         /checkpoint\n/refresh\ncreate an epic for the billing page\n/checkpoint\n",
    )
    .unwrap();
    common::ok(dir, &["chat", "--script", "chat.txt"]);
    let goal = common::json(
        dir,
        &["goal", "add", "Post the deed to 12 Quay Street", "--json"],
    );
    let id = goal["id"].as_str().unwrap();
    common::ok(
        dir,
        &[
            "goal",
            "update",
            id,
            "--text",
            "Post the deed (12 Quay Street) today",
        ],
    );
    common::ok(dir, &["goal", "update", id, "--status", "in-progress"]);
    for i in 0..30 {
        common::ok(
            dir,
            &[
                "record",
                "--type",
                "task_execution",
                "--data",
                &format!(r#"{{"task": "step {i}"}}"#),
            ],
        );
    }
    common::ok(dir, &["refresh"]);
    common::ok(dir, &["compact"]);
    common::ok(dir, &["optimize"]);
}

#[test]
fn after_a_realistic_history_a_forgotten_phrase_leaves_no_byte() {
    let p = common::project();
    let dir = p.path();
    a_realistic_history(dir);
    assert!(common::on_disk(dir, "Quay Street"), "the history holds it");
    common::ok(dir, &["forget", "--matching", "quay street"]);
    assert!(
        !common::on_disk(dir, "Quay Street"),
        "no byte of the phrase under .mnemon/ (database, log, views, checkpoints, chat history)"
    );
    common::ok(dir, &["doctor"]);
}

#[test]
fn a_database_written_without_secure_delete_is_rewritten_at_its_first_forget() {
    let p = common::project();
    let dir = p.path();
    common::ok(dir, &["remember", "The spare key is under the blue pot"]);
    // As an earlier mnemon left a database: text in freed space, and no
    // mark that its free space is clean.
    {
        let db = rusqlite::Connection::open(dir.join(".mnemon/mnemon.db")).unwrap();
        db.execute_batch(
            "PRAGMA secure_delete = OFF;
             INSERT INTO meta (key, value) VALUES ('scratch', 'a note about the blue pot, kept a while');
             DELETE FROM meta WHERE key = 'scratch';
             DELETE FROM meta WHERE key = 'free_space_zeroed';
             PRAGMA wal_checkpoint(TRUNCATE);",
        )
        .unwrap();
    }
    assert!(
        common::on_disk(dir, "about the blue pot"),
        "freed space holds it"
    );
    common::ok(dir, &["forget", "--matching", "blue pot"]);
    assert!(!common::on_disk(dir, "blue pot"));
    common::ok(dir, &["doctor"]);
}

/// Forgetting by handle cleans the chat history too: the lines typed into
/// `mnemon chat` that said the forgotten items go, every other line stays.
#[test]
fn forgetting_by_handle_drops_the_typed_lines_that_said_it() {
    let p = common::project();
    let dir = p.path();
    let r = common::ok(dir, &["remember", "Home address: 12 Quay Street"]);
    let h = r.split_whitespace().nth(2).unwrap().to_string();
    let said = common::ok(
        dir,
        &["message", "--role", "user", "My locker code is 4417-alpha"],
    );
    let m = said.split_whitespace().nth(3).unwrap().to_string();
    assert!(m.starts_with('m'), "{said}");
    common::ok(dir, &["remember", "Invoices go out on Fridays"]);
    let typed = dir.join(".mnemon").join(mnemon::CHAT_HISTORY);
    std::fs::write(
        &typed,
        "#V2\n/remember Home address: 12 Quay Street\nMy locker code is 4417-alpha\n/remember Invoices go out on Fridays\nok\n",
    )
    .unwrap();
    let before = std::fs::read_to_string(&typed).unwrap();
    common::ok(dir, &["forget", &h, "--dry-run"]);
    assert_eq!(
        std::fs::read_to_string(&typed).unwrap(),
        before,
        "a dry run changes nothing"
    );
    common::ok(dir, &["forget", &h, &m]);
    assert_eq!(
        std::fs::read_to_string(&typed).unwrap(),
        "#V2\n/remember Invoices go out on Fridays\nok\n"
    );
    assert!(!common::on_disk(dir, "Quay Street") && !common::on_disk(dir, "4417-alpha"));
}
