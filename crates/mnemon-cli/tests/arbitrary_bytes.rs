//! Arbitrary bytes (invalid UTF-8, control characters, escape sequences,
//! long runs) through every text entry point of the CLI, as arguments,
//! standard input and files: never a panic or a signal, a clean error with
//! a message when refused, and what was stored comes back byte for byte
//! through a pipe.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod common;

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::{Command, Stdio};

use proptest::prelude::*;

/// Bytes as careless input has them: mostly text, with invalid UTF-8,
/// control characters and escape sequences mixed in.
fn nasty() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => "[a-zA-Z0-9 .,:;!?'\"(){}\\[\\]-]{0,24}".prop_map(String::into_bytes),
        1 => Just(b"\x1b]0;title\x07".to_vec()),
        1 => Just(b"\x1b[2J\x1b[H".to_vec()),
        1 => Just(b"\x1b]52;c;ZXZpbA==\x07".to_vec()),
        1 => Just(vec![0xff, 0xfe, 0xe9]),
        1 => Just("é😀\u{202e}\u{200b}".as_bytes().to_vec()),
        1 => proptest::collection::vec(1u8..32, 1..8),
        1 => Just(b"</mnemon-memory>".to_vec()),
        1 => (1usize..3_000).prop_map(|n| vec![b'x'; n]),
    ];
    proptest::collection::vec(piece, 0..8).prop_map(|v| v.concat())
}

/// Where text enters the CLI.
#[derive(Debug, Clone, Copy)]
enum Entry {
    RecordData,
    RecordType,
    MessageArg,
    MessageStdin,
    Remember,
    GoalAdd,
    ConstraintAdd,
    Search,
    ContextQuery,
    DecisionTitle,
    DecisionFile,
    ChatScript,
    TokensStdin,
    Agent,
}

const ENTRIES: [Entry; 14] = [
    Entry::RecordData,
    Entry::RecordType,
    Entry::MessageArg,
    Entry::MessageStdin,
    Entry::Remember,
    Entry::GoalAdd,
    Entry::ConstraintAdd,
    Entry::Search,
    Entry::ContextQuery,
    Entry::DecisionTitle,
    Entry::DecisionFile,
    Entry::ChatScript,
    Entry::TokensStdin,
    Entry::Agent,
];

fn run(dir: &Path, entry: Entry, bytes: &[u8]) -> (Option<i32>, String) {
    // An argument cannot hold a NUL byte; the OS refuses it before mnemon.
    let arg = OsString::from_vec(bytes.iter().copied().filter(|b| *b != 0).collect());
    let file = dir.join("input.bin");
    std::fs::write(&file, bytes).unwrap();
    let mut stdin = None;
    let args: Vec<OsString> = match entry {
        Entry::RecordData => vec![
            "record".into(),
            "--type".into(),
            "fuzz".into(),
            "--data".into(),
            arg,
        ],
        Entry::RecordType => vec!["record".into(), "--type".into(), arg],
        Entry::MessageArg => vec!["message".into(), "--role".into(), "user".into(), arg],
        Entry::MessageStdin => {
            stdin = Some(bytes.to_vec());
            vec!["message".into(), "--role".into(), "user".into()]
        }
        Entry::Remember => vec!["remember".into(), arg],
        Entry::GoalAdd => vec!["goal".into(), "add".into(), arg],
        Entry::ConstraintAdd => vec!["constraint".into(), "add".into(), arg],
        Entry::Search => vec!["search".into(), arg],
        Entry::ContextQuery => vec![
            "context".into(),
            "--budget".into(),
            "800".into(),
            "--query".into(),
            arg,
        ],
        Entry::DecisionTitle => vec![
            "decision".into(),
            "add".into(),
            "--title".into(),
            arg,
            "--context".into(),
            "c".into(),
            "--decision".into(),
            "d".into(),
        ],
        Entry::DecisionFile => vec![
            "decision".into(),
            "add".into(),
            "--from-json".into(),
            file.into(),
        ],
        Entry::ChatScript => vec!["chat".into(), "--script".into(), file.into()],
        Entry::TokensStdin => {
            stdin = Some(bytes.to_vec());
            vec!["tokens".into(), "count".into(), "-".into()]
        }
        Entry::Agent => vec!["recent".into(), "--agent".into(), arg],
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_mnemon"))
        .args(&args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("MNEMON_NOW", "2025-01-15T14:30:00Z")
        .env_remove("MNEMON_AGENT")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    if let Some(b) = stdin {
        let _ = pipe.write_all(&b);
    }
    drop(pipe);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic_and_are_refused_cleanly(
        entry in proptest::sample::select(ENTRIES.to_vec()),
        bytes in nasty(),
    ) {
        let dir = PROJECT.with(|p| p.path().to_path_buf());
        let (code, stderr) = run(&dir, entry, &bytes);
        prop_assert!(code.is_some(), "{entry:?}: killed by a signal: {stderr}");
        prop_assert!(!stderr.contains("panicked"), "{entry:?}: {stderr}");
        prop_assert!(!stderr.contains("stopped on a bug"), "{entry:?}: {stderr}");
        let code = code.unwrap_or(-1);
        prop_assert!([0, 1, 2].contains(&code), "{entry:?}: exit {code}: {stderr}");
        if code != 0 {
            prop_assert!(stderr.contains("error"), "{entry:?}: a refusal says why: {stderr:?}");
        }
    }
}

thread_local! {
    static PROJECT: tempfile::TempDir = {
        let tmp = tempfile::tempdir().unwrap();
        common::ok(tmp.path(), &["init", "--window", "16384"]);
        tmp
    };
}

/// What was remembered, whatever its bytes (as long as they are UTF-8),
/// comes back through a pipe unchanged.
#[test]
fn stored_text_comes_back_through_a_pipe_byte_for_byte() {
    let tmp = common::project();
    let d = tmp.path();
    let texts = [
        "plain",
        "\u{1b}]0;title\u{7} and \u{1b}[31mred\u{1b}[0m",
        "tabs\tand\u{b}vertical\u{c}feed",
        "rtl \u{202e}override\u{202c} and zero\u{200b}width",
    ];
    for t in texts {
        common::ok(d, &["remember", t]);
    }
    let out = common::ok(d, &["hot"]);
    for t in texts {
        assert!(out.contains(t), "{t:?} in {out:?}");
    }
}
