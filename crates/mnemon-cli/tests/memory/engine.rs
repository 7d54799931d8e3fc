//! The engine's commands through the CLI: checkpoint, resume, compact and
//! end.

use super::*;

#[test]
fn engine_commands_checkpoint_resume_compact_and_end() {
    let tmp = tempfile::tempdir().unwrap();
    ok(
        tmp.path(),
        &["init", "--model", "gpt-4o", "--window", "4096"],
    );
    let text = "Implemented the password hashing module with bcrypt and a per-user salt, then reran the login and signup tests";
    for i in 0..60 {
        let data = format!("{{\"text\": \"{text} (step {i}). {text}. {text}.\"}}");
        ok(
            tmp.path(),
            &[
                "record",
                "--type",
                "task_execution",
                "--status",
                "completed",
                "--data",
                &data,
            ],
        );
    }
    ok(
        tmp.path(),
        &[
            "record",
            "--type",
            "decision",
            "--data",
            "{\"text\": \"Use bcrypt, not scrypt\"}",
        ],
    );
    let s = json(tmp.path(), &["status", "--json"]);
    let engine = &s["engine"];
    assert!(engine["epoch"].as_u64().unwrap() >= 2, "{engine}");
    assert!(engine["refreshes"].as_u64().unwrap() >= 1, "{engine}");
    assert!(s["window"]["emergency"] == false);
    assert!(s["window"]["used"].as_u64().unwrap() > 0);

    let cp = json(tmp.path(), &["checkpoint", "create", "--json"]);
    let id = cp["id"].as_str().unwrap().to_string();
    let file = tmp.path().join(format!(".mnemon/checkpoints/{id}.json"));
    let original = std::fs::read_to_string(&file).unwrap();
    let list = json(tmp.path(), &["checkpoint", "list", "--json"]);
    assert!(
        list.as_array().unwrap().len() >= 2,
        "auto and manual checkpoints"
    );
    assert!(ok(tmp.path(), &["checkpoint", "show", &id]).contains(&id));

    // An edited file is refused and nothing changes.
    let before = json(tmp.path(), &["status", "--json"])["engine"].clone();
    std::fs::write(&file, original.replacen("\"manual\"", "\"time_1h\"", 1)).unwrap();
    let o = mnemon(tmp.path(), &["checkpoint", "resume", &id]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("was changed after it was written"), "{err}");
    assert_eq!(json(tmp.path(), &["status", "--json"])["engine"], before);
    std::fs::write(&file, &original[..original.len() / 3]).unwrap();
    let o = mnemon(tmp.path(), &["checkpoint", "resume", &id]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("not valid checkpoint JSON"));
    // `export` rewrites it; then it resumes.
    ok(tmp.path(), &["export"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    ok(
        tmp.path(),
        &[
            "record",
            "--type",
            "nl_command",
            "--data",
            "{\"text\": \"after the checkpoint\"}",
        ],
    );
    let r = json(tmp.path(), &["checkpoint", "resume", &id, "--json"]);
    assert_eq!(r["resumed"]["checkpoint"], id.as_str());
    assert_eq!(
        r["status"]["window"]["used"],
        cp["context_snapshot"]["tokens_used"]
    );

    let c = json(tmp.path(), &["compact", "--dry-run", "--json"]);
    assert!(
        c["summary"]["tokens"].as_u64().unwrap() < c["summary"]["input_tokens"].as_u64().unwrap()
    );
    assert!(
        c["summary"]["text"]
            .as_str()
            .unwrap()
            .contains("Use bcrypt, not scrypt")
    );

    let used = json(tmp.path(), &["report-usage", "1500", "--json"]);
    assert_eq!(used["window"]["used"], 1500);
    assert_eq!(
        json(tmp.path(), &["status", "--json"])["window"]["used"],
        1500
    );

    let end = ok(tmp.path(), &["session", "end"]);
    assert!(end.contains("## Session Summary"), "{end}");
    assert!(end.contains("Use bcrypt, not scrypt"), "{end}");
    let sessions = json(tmp.path(), &["session", "list", "--json"]);
    assert_eq!(sessions[0]["status"], "archived");
    assert!(
        std::fs::read_dir(tmp.path().join(".mnemon/sessions/archive"))
            .unwrap()
            .count()
            >= 1
    );
}
