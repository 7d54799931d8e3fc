//! Every input in `fuzz/corpus/<target>/` (the seeds and what the fuzzer
//! kept) and `fuzz/regressions/<target>/` (inputs that once crashed a
//! target) through the target's checks, on every `cargo test`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

use std::path::Path;

#[test]
fn every_corpus_and_regression_input_passes_its_target() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    for (name, check) in mnemon_fuzzing::TARGETS {
        let mut seen = 0;
        for kind in ["corpus", "regressions"] {
            let dir = fuzz.join(kind).join(name);
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let path = e.path();
                let data = std::fs::read(&path).unwrap();
                let run = std::panic::catch_unwind(|| check(&data));
                assert!(run.is_ok(), "{name}: {} fails", path.display());
                seen += 1;
            }
        }
        assert!(
            seen > 0,
            "target {name} has no corpus under fuzz/corpus/{name}"
        );
    }
}
