//! What the benches of this crate share: the real model's directory and
//! how a run's times are reported.

use std::path::PathBuf;
use std::time::Duration;

/// all-MiniLM-L6-v2's directory: `MNEMON_EMBED_MODEL`, else the one
/// `scripts/embedding-model.sh` fetches and prints.
pub fn model_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("MNEMON_EMBED_MODEL") {
        return PathBuf::from(d);
    }
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/embedding-model.sh");
    let out = std::process::Command::new(script).output().unwrap();
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Prints the median, 95th and 99th percentile of `times` under `name`,
/// and returns the 95th.
pub fn report(name: &str, mut times: Vec<Duration>) -> Duration {
    times.sort();
    let p = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{name:<44} p50 {:>9.3?}  p95 {:>9.3?}  p99 {:>9.3?}",
        p(0.5),
        p(0.95),
        p(0.99)
    );
    p(0.95)
}
