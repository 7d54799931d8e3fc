//! A Python with a client SDK from PyPI, as its users install it: a venv
//! under `~/.cache/mnemon/<name>`, made once. Two test processes may make
//! one at once: each builds its own directory and renames it into place,
//! so the cache is never half-made.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A venv named `name` where `import` runs, with `packages` installed if
/// it does not. `MNEMON_TEST_PYTHON` names an interpreter to use instead.
pub fn venv(name: &str, packages: &[&str], import: &str) -> PathBuf {
    if let Some(p) = std::env::var_os("MNEMON_TEST_PYTHON") {
        return PathBuf::from(p);
    }
    let home = std::env::var_os("HOME").expect("HOME is set");
    let cache = Path::new(&home).join(".cache/mnemon");
    let venv = cache.join(name);
    let py = venv.join("bin/python");
    let has_sdk = |py: &Path| {
        Command::new(py)
            .args(["-c", import])
            .status()
            .is_ok_and(|s| s.success())
    };
    if has_sdk(&py) {
        return py;
    }
    std::fs::create_dir_all(&cache).unwrap();
    let building = cache.join(format!("{name}.{}", std::process::id()));
    let run = |cmd: &mut Command| {
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(Command::new("python3").args(["-m", "venv"]).arg(&building));
    // PyPI now and then drops a connection; an install is tried three times.
    let pip = || {
        Command::new(building.join("bin/pip"))
            .args(["install", "-q", "--retries", "5"])
            .args(packages)
            .output()
            .unwrap()
    };
    let mut installed = pip();
    for _ in 0..2 {
        if installed.status.success() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_secs(3));
        installed = pip();
    }
    assert!(
        installed.status.success(),
        "pip install {packages:?}: {}",
        String::from_utf8_lossy(&installed.stderr)
    );
    // Python's venv records its own path; rebuild it in place after the rename.
    if std::fs::rename(&building, &venv).is_ok() {
        run(Command::new("python3")
            .args(["-m", "venv", "--upgrade"])
            .arg(&venv));
    } else {
        let _ = std::fs::remove_dir_all(&building);
    }
    assert!(has_sdk(&py), "`{import}` fails in {py:?}");
    py
}
