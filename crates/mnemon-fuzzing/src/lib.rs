//! What each fuzz target checks, for any input: no panic, an error that
//! says something, and the round trips that must hold. The targets under
//! `fuzz/` call these functions; `tests/corpus.rs` replays every input in
//! `fuzz/corpus/` and `fuzz/regressions/` through them on every
//! `cargo test`, so a crash once found stays fixed without the fuzzer.
//!
//! Inputs that are not UTF-8 are skipped: mnemon reads each of these from
//! a file or a line it has already refused as text.

use mnemon_chat::{CommandParser, RuleParser, closest};
use mnemon_core::config::{ConfigFile, load};
use mnemon_core::engine::Checkpoint;
use mnemon_import::eval::Dataset;
use mnemon_import::{ImportFormat, SessionBy, parse};

/// One target's checks on one input; a failed check panics.
pub type Check = fn(&[u8]);

/// The targets, by name: `fuzz/fuzz_targets/<name>.rs` and
/// `fuzz/corpus/<name>/`.
pub const TARGETS: [(&str, Check); 5] = [
    ("config", config),
    ("checkpoint", checkpoint),
    ("chat", chat),
    ("import", import),
    ("eval", eval),
];

/// An error must tell the user something, in a message a terminal can hold.
fn says_something(e: &dyn std::fmt::Display) {
    let text = e.to_string();
    assert!(!text.trim().is_empty(), "an empty error message");
}

/// `.mnemon/config.toml`, and what it loads to loads the same again.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let file = ConfigFile {
        path: "fuzz.toml",
        text,
    };
    match load(Some(file), &[]) {
        Err(e) => says_something(&e),
        Ok(loaded) => {
            // Every config that loads can be written out.
            let again = toml::to_string(&loaded.config)
                .unwrap_or_else(|e| panic!("a loaded config does not serialize: {e}"));
            let reread = load(
                Some(ConfigFile {
                    path: "again.toml",
                    text: &again,
                }),
                &[],
            )
            .unwrap_or_else(|e| panic!("a loaded config did not load again: {e}\n{again}"));
            assert_eq!(
                toml::to_string(&reread.config).ok().as_deref(),
                Some(again.as_str()),
                "the round trip changed the config"
            );
        }
    }
}

/// A checkpoint file given to `mnemon checkpoint resume FILE`: refused with
/// a reason, or read and then written back to the same checkpoint.
pub fn checkpoint(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Checkpoint::from_json(text, "fuzz.json") {
        Err(e) => says_something(&e),
        Ok(cp) => {
            let again = Checkpoint::from_json(&cp.to_json(), "again.json")
                .unwrap_or_else(|e| panic!("a read checkpoint did not read again: {e}"));
            assert_eq!(again, cp);
        }
    }
}

/// A line typed into `mnemon chat`.
pub fn chat(data: &[u8]) {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    let _ = RuleParser.parse(line);
    let near = closest(line, 3);
    assert!(near.len() <= 3);
}

/// A file given to `mnemon import`, in every format and grouping.
pub fn import(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for format in [
        ImportFormat::Eval,
        ImportFormat::Jsonl,
        ImportFormat::ChatGpt,
    ] {
        for by in [SessionBy::Day, SessionBy::File] {
            match parse(text, format, by, "fuzz") {
                Err(e) => says_something(&e),
                Ok(sessions) => {
                    assert!(
                        sessions.iter().all(|s| !s.turns.is_empty()),
                        "an empty session was returned"
                    );
                }
            }
        }
    }
}

/// An evaluation dataset given to `mnemon eval recall --data FILE`.
pub fn eval(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = Dataset::from_json(text, "fuzz.json") {
        says_something(&e);
    }
}
