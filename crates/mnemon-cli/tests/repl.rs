//! The interactive REPL in a real terminal: tmux runs `mnemon chat`,
//! `send-keys` types like a person, `capture-pane` reads what they see.
//!
//! Needs tmux (Debian's package). `.ci/run` installs it and sets
//! `MNEMON_REQUIRE_TMUX=1`, so there a missing tmux fails the test; on a
//! machine without tmux the test says so and passes without running.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

mod common;

struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux");
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-J", "-S", "-200", "-t", "chat"])
    }

    fn send(&self, text: &str) {
        self.run(&["send-keys", "-t", "chat", "-l", text]);
        self.run(&["send-keys", "-t", "chat", "Enter"]);
    }

    fn key(&self, key: &str) {
        self.run(&["send-keys", "-t", "chat", key]);
    }

    /// Waits until the screen shows `needle` `times` times.
    fn wait_for(&self, needle: &str, times: usize) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.matches(needle).count() >= times {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "waited 30 s for {needle:?} ×{times}; the screen shows:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until `mnemon chat` has exited.
    fn wait_exit(&self) {
        let start = Instant::now();
        while !self.dead() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "mnemon chat did not exit"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn dead(&self) -> bool {
        self.run(&["display-message", "-p", "-t", "chat", "#{pane_dead}"])
            .trim()
            == "1"
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

fn have_tmux() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn start(dir: &Path, name: &str) -> Tmux {
    start_command(dir, name, "chat")
}

/// Runs `mnemon ARGS` in a fresh tmux session named `chat`.
fn start_command(dir: &Path, name: &str, args: &str) -> Tmux {
    let t = Tmux {
        socket: format!("mnemon-test-{name}-{}", std::process::id()),
    };
    let cmd = format!(
        "env MNEMON_NOW=2025-01-15T14:30:00Z TERM=xterm-256color {} {args}",
        env!("CARGO_BIN_EXE_mnemon")
    );
    let dir = dir.to_str().unwrap();
    // The pane must outlive a command that exits at once (`mnemon hot`),
    // so `remain-on-exit` is set before the command starts: the session
    // opens on a placeholder that waits, and the command replaces it. Set
    // after the command, the option raced a quick exit, which took the
    // session and the server with it.
    t.run(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "chat",
        "-x",
        "160",
        "-y",
        "50",
        "-c",
        dir,
        "cat",
        ";",
        "set-option",
        "-t",
        "chat",
        "remain-on-exit",
        "on",
        ";",
        "respawn-pane",
        "-k",
        "-t",
        "chat",
        "-c",
        dir,
        &cmd,
    ]);
    t
}

/// Whether the terminal tests can run; fails where tmux is required.
fn tmux_or_skip() -> bool {
    if have_tmux() {
        return true;
    }
    assert!(
        std::env::var_os("MNEMON_REQUIRE_TMUX").is_none(),
        "tmux is required here: apt-get install tmux"
    );
    eprintln!("tmux is not installed; skipping the terminal test (apt-get install tmux)");
    false
}

#[test]
fn a_person_at_the_terminal_sees_answers_questions_and_notices() {
    if !tmux_or_skip() {
        return;
    }
    let tmp = common::project();
    let t = start(tmp.path(), "keys");
    t.wait_for("mnemon> ", 1);
    let banner = t.screen();
    assert!(
        banner.contains("mnemon chat · gpt-4o · window 128,000 tokens"),
        "{banner}"
    );
    assert!(
        banner.contains("── green · 0 / 128,000 tokens (0.0 %)"),
        "{banner}"
    );

    t.send("Create an epic for user authentication");
    let s = t.wait_for("Created Epic #1 \"user authentication\".", 1);
    assert!(
        s.contains("session started"),
        "a notice says the session started:\n{s}"
    );
    assert!(
        s.contains("── green ·"),
        "a status line follows each command:\n{s}"
    );

    t.send("Add 3 stories to it: login, signup, and MFA");
    t.wait_for("under Epic #1 \"user authentication\".", 1);

    // An ambiguous reference asks, with its own prompt.
    t.send("start it");
    let s = t.wait_for("which? ", 1);
    assert!(
        s.contains(
            "Which one do you mean: Story #2 \"login\", Story #3 \"signup\" or Story #4 \"MFA\"?"
        ),
        "{s}"
    );
    t.send("MFA");
    t.wait_for("Started Story #4 \"MFA\".", 1);

    // History: the up arrow brings the last line back.
    t.send("what did we just do?");
    t.wait_for("We just started Story #4 \"MFA\".", 1);
    t.key("Up");
    t.key("Enter");
    t.wait_for("We just started Story #4 \"MFA\".", 2);

    // A secret typed is redacted in what is stored, the history included.
    t.send("/remember my deploy key is sk-proj-Zq8vN3kLm5Rt7Wx9Yb2Cd4Ef6Gh8Jk0");
    t.wait_for("redacted", 1);

    t.send("/checkpoint");
    t.wait_for("Checkpoint CP-", 1);

    // Ctrl-D ends the session gracefully: summary, archive, checkpoint.
    t.key("C-d");
    let s = t.wait_for("summarized and archived", 1);
    assert!(s.contains("## Session Summary"), "{s}");
    t.wait_exit();
    let s = t.screen();
    assert!(
        s.contains("checkpoint CP-20250115-143000"),
        "the session-end checkpoint is announced:\n{s}"
    );
    let history = std::fs::read_to_string(tmp.path().join(".mnemon/chat_history")).unwrap();
    assert!(
        history.contains("Add 3 stories to it: login, signup, and MFA"),
        "{history}"
    );
    assert!(history.contains("/remember my deploy key is"), "{history}");
    assert!(
        !history.contains("Zq8vN3kLm5Rt7Wx9Yb2Cd4Ef6Gh8Jk0"),
        "no secret in the history file:\n{history}"
    );
    assert!(
        std::fs::read_dir(tmp.path().join(".mnemon/sessions/archive"))
            .unwrap()
            .count()
            == 1
    );
}

#[test]
fn ctrl_c_ends_the_session_gracefully_too() {
    if !tmux_or_skip() {
        return;
    }
    let tmp = common::project();
    let t = start(tmp.path(), "ctrl-c");
    t.wait_for("mnemon> ", 1);
    t.send("create an epic for billing");
    t.wait_for("Created Epic #1 \"billing\".", 1);
    // Half a line typed, then Ctrl-C: the line is dropped, the session ends.
    t.run(&["send-keys", "-t", "chat", "-l", "add a story to it: inv"]);
    t.key("C-c");
    t.wait_for("summarized and archived", 1);
    t.wait_exit();
    let s = t.screen();
    assert!(s.contains("Created Epic #1 \"billing\""), "{s}");
    assert!(
        !s.contains("Story #2"),
        "the half-typed line never ran:\n{s}"
    );
    let state =
        std::fs::read_to_string(tmp.path().join(".mnemon/memory/project_state.md")).unwrap();
    assert!(state.contains("Epic #1 \"billing\""), "{state}");
}

/// Stored text that carries terminal escape sequences (a window title, a
/// clipboard write, a screen clear, a hyperlink) is shown escaped on a
/// real terminal: the title stays, the screen shows the sequences as text.
/// Piped, the same command gives the bytes back exactly.
#[test]
fn escape_sequences_in_stored_text_do_not_reach_the_terminal() {
    if !tmux_or_skip() {
        return;
    }
    let tmp = common::project();
    let hostile = "deploy \u{1b}]0;PWNED\u{7} \u{1b}]52;c;cm0gLXJmIH4=\u{7} \u{1b}[2J \u{1b}]8;;http://evil.example\u{1b}\\link\u{1b}]8;;\u{1b}\\ done";
    let out = common::mnemon(tmp.path(), &["remember", hostile]);
    assert!(out.status.success(), "{out:?}");
    for (name, args) in [("hot", "hot"), ("search", "search deploy")] {
        let t = start_command(tmp.path(), name, args);
        t.wait_exit();
        let title = t.run(&["display-message", "-p", "-t", "chat", "#{pane_title}"]);
        assert!(
            !title.contains("PWNED"),
            "{name}: the title was set: {title}"
        );
        let screen = t.screen();
        assert!(
            screen.contains("\\x1b]0;PWNED\\x07") && screen.contains("\\x1b[2J"),
            "{name}: the sequences are shown escaped:\n{screen}"
        );
        assert!(
            screen.contains("done"),
            "{name}: the text around them stays:\n{screen}"
        );
    }
    let piped = common::mnemon(tmp.path(), &["hot", "--json"]);
    let text = String::from_utf8(piped.stdout).unwrap();
    let items: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(
        items.to_string().contains("\\u001b]0;PWNED"),
        "--json keeps the exact text: {text}"
    );
}
