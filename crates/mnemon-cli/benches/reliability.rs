//! The reliability harness: the `mnemon` binary as agents run it, under the
//! failures users meet. Figures go to BENCHMARKS.md.
//!
//! `cargo bench -p mnemon-cli --bench reliability [-- kill|many|full]`
//!
//! - `kill`: 100 trials of four concurrent writers, each a `mnemon record`
//!   process, killed with SIGKILL at a random moment. Every acknowledged
//!   write (exit 0 with its id printed) must be in the store, the database
//!   must pass `PRAGMA integrity_check`, and the next command must work.
//! - `many`: 16 processes × 1,000 `mnemon record` calls and a 50-line chat
//!   session each, into one fresh project: 16,000 stored, no duplicate, no
//!   non-zero exit, no warning.
//! - `full`: a project on a small tmpfs, written until the disk is full:
//!   the failing command names the cause and exits 3, and every record
//!   acknowledged before it is still there. Needs `mount` (root); skipped
//!   with a note otherwise.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks: a panic with its message is the failure report"
)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_mnemon");

fn mnemon(dir: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(dir).env("NO_COLOR", "1");
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("MNEMON_")) {
        cmd.env_remove(k);
    }
    cmd
}

fn run(dir: &Path, args: &[&str]) -> Output {
    mnemon(dir).args(args).output().expect("mnemon runs")
}

fn init(dir: &Path) {
    let o = run(dir, &["init", "--window", "128000"]);
    assert!(
        o.status.success(),
        "init: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Ids of the stored operations of `kind`.
fn stored(dir: &Path, kind: &str) -> Vec<String> {
    let o = run(
        dir,
        &["recent", "--type", kind, "--limit", "100000000", "--json"],
    );
    assert!(
        o.status.success(),
        "recent: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    v.as_array()
        .expect("a list")
        .iter()
        .map(|o| o["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn integrity(dir: &Path) -> String {
    let db = dir.join(".mnemon/mnemon.db");
    let o = Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])",
        ])
        .arg(&db)
        .output()
        .expect("python3 runs");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A small deterministic generator: the trials are random but repeatable.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below
    }
}

fn kill_trials(trials: usize) {
    let mut rng = Lcg(0x6d6e_656d_6f6e);
    let (mut acked_total, mut killed_total, mut lost_total) = (0usize, 0usize, 0usize);
    let mut bad_integrity = 0;
    let started = Instant::now();
    for trial in 0..trials {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        init(&dir);
        let running: Arc<Mutex<Vec<u32>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let workers: Vec<_> = (0..4)
            .map(|w| {
                let (dir, running, stop) = (dir.clone(), running.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut acked = Vec::new();
                    let mut killed = 0;
                    let mut i = 0;
                    while !stop.load(Ordering::SeqCst) {
                        let child = mnemon(&dir)
                            .args([
                                "record",
                                "--json",
                                "--type",
                                "kill",
                                "--agent",
                                &format!("w{w}"),
                                "--data",
                                &format!("{{\"w\":{w},\"i\":{i}}}"),
                            ])
                            .stdout(Stdio::piped())
                            .stderr(Stdio::piped())
                            .spawn()
                            .unwrap();
                        running.lock().unwrap().push(child.id());
                        let id = child.id();
                        let out = child.wait_with_output().unwrap();
                        running.lock().unwrap().retain(|p| *p != id);
                        if out.status.success() {
                            let v: serde_json::Value =
                                serde_json::from_slice(&out.stdout).expect("JSON on success");
                            acked.push(v["id"].as_str().unwrap().to_string());
                        } else {
                            killed += 1;
                        }
                        i += 1;
                    }
                    (acked, killed)
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(50 + rng.next(400)));
        stop.store(true, Ordering::SeqCst);
        for pid in running.lock().unwrap().iter() {
            // The process may have finished meanwhile; that is no error.
            let _ = Command::new("kill")
                .args(["-9", &pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
        let mut acked = Vec::new();
        for w in workers {
            let (a, k) = w.join().unwrap();
            acked.extend(a);
            killed_total += k;
        }
        let have: HashSet<String> = stored(&dir, "kill").into_iter().collect();
        let lost = acked.iter().filter(|id| !have.contains(*id)).count();
        let ok = integrity(&dir);
        if ok != "ok" {
            bad_integrity += 1;
        }
        // The project still takes writes after the kill.
        let after = run(&dir, &["record", "--type", "after"]);
        assert!(
            after.status.success(),
            "trial {trial}: the next write failed"
        );
        acked_total += acked.len();
        lost_total += lost;
    }
    println!(
        "kill: {trials} trials, {acked_total} acknowledged writes, {killed_total} processes killed mid-write, {lost_total} acknowledged writes lost, {bad_integrity} integrity failures, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(lost_total, 0);
    assert_eq!(bad_integrity, 0);
}

fn many(procs: usize, each: usize, chat_lines: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    init(&dir);
    let started = Instant::now();
    let workers: Vec<_> = (0..procs)
        .map(|p| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let mut failed = 0;
                let mut warned = 0;
                for i in 0..each {
                    let o = run(
                        &dir,
                        &[
                            "record",
                            "--type",
                            "many",
                            "--agent",
                            &format!("a{p}"),
                            "--data",
                            &format!("{{\"p\":{p},\"i\":{i}}}"),
                        ],
                    );
                    if !o.status.success() {
                        failed += 1;
                        eprintln!("{}", String::from_utf8_lossy(&o.stderr));
                    }
                    if String::from_utf8_lossy(&o.stderr).contains("warning") {
                        warned += 1;
                    }
                }
                let mut chat = mnemon(&dir)
                    .args(["chat", "--json", "--agent", &format!("a{p}")])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                {
                    use std::io::Write;
                    let mut stdin = chat.stdin.take().unwrap();
                    for l in 0..chat_lines {
                        let line = match l % 3 {
                            0 => format!("create a task for worker {p} step {l}"),
                            1 => "start it".to_string(),
                            _ => format!("/remember worker {p} finished step {l}"),
                        };
                        writeln!(stdin, "{line}").unwrap();
                    }
                }
                let out = chat.wait_with_output().unwrap();
                if !out.status.success() {
                    failed += 1;
                }
                (failed, warned)
            })
        })
        .collect();
    let (mut failed, mut warned) = (0, 0);
    for w in workers {
        let (f, w) = w.join().unwrap();
        failed += f;
        warned += w;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let o = run(
        &dir,
        &["recent", "--type", "many", "--limit", "100000000", "--json"],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let pairs: Vec<(u64, u64)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["data"]["p"].as_u64().unwrap(),
                o["data"]["i"].as_u64().unwrap(),
            )
        })
        .collect();
    let distinct: HashSet<_> = pairs.iter().collect();
    let chats = stored(&dir, "nl_command").len() + stored(&dir, "slash_command").len();
    println!(
        "many: {procs} processes x {each} records + {chat_lines} chat lines each: {} of {} stored, {} duplicated, {chats} chat lines recorded, {failed} non-zero exits, {warned} warnings, integrity {}, {elapsed:.1} s ({:.1} records/s)",
        distinct.len(),
        procs * each,
        pairs.len() - distinct.len(),
        integrity(&dir),
        (procs * each) as f64 / elapsed
    );
    assert_eq!(distinct.len(), procs * each);
    assert_eq!(pairs.len(), distinct.len());
    assert_eq!(failed, 0);
}

fn full_disk() {
    let mount = PathBuf::from(format!("/tmp/mnemon-full-{}", std::process::id()));
    std::fs::create_dir_all(&mount).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=3m", "tmpfs"])
        .arg(&mount)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        println!("full: skipped (cannot mount a tmpfs here; run as root)");
        return;
    }
    init(&mount);
    let mut acked = Vec::new();
    let mut failure = None;
    let mut warnings = 0;
    let payload = "x".repeat(2_000);
    for i in 0..100_000 {
        let o = run(
            &mount,
            &[
                "record",
                "--json",
                "--type",
                "fill",
                "--data",
                &format!("{{\"i\":{i},\"pad\":\"{payload}\"}}"),
            ],
        );
        if String::from_utf8_lossy(&o.stderr).contains("warning") {
            warnings += 1;
        }
        if o.status.success() {
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            acked.push(v["id"].as_str().unwrap().to_string());
        } else {
            failure = Some((
                o.status.code(),
                String::from_utf8_lossy(&o.stderr).trim().to_string(),
            ));
            break;
        }
    }
    let have: HashSet<String> = stored(&mount, "fill").into_iter().collect();
    let lost = acked.iter().filter(|id| !have.contains(*id)).count();
    let ok = integrity(&mount);
    let _ = Command::new("umount").arg(&mount).status();
    let _ = std::fs::remove_dir(&mount);
    let (code, message) = failure.expect("the disk filled up");
    println!(
        "full: {} records acknowledged before the disk filled; {warnings} of them warned that a view was not written; the failing command exited {code:?}: \"{message}\"; {lost} acknowledged records lost; integrity {ok}",
        acked.len()
    );
    assert_eq!(lost, 0);
    assert_eq!(code, Some(3));
    assert!(message.contains("disk is full"), "{message}");
}

fn main() {
    // `cargo bench` passes `--bench`; the rest names the scenarios.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let all = args.is_empty();
    let wants = |name: &str| all || args.iter().any(|a| a == name);
    if wants("kill") {
        kill_trials(100);
    }
    if wants("many") {
        many(16, 1_000, 50);
    }
    if wants("full") {
        full_disk();
    }
}
