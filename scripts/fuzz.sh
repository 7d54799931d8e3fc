#!/usr/bin/env bash
# Runs each cargo-fuzz target (fuzz/fuzz_targets/) for SECONDS seconds
# (default 30): the config loader, checkpoint files, the chat command
# parser, every import format and the evaluation format. What each target
# checks is crates/mnemon-fuzzing. CI runs it briefly; for the long runs in
# RELIABILITY.md pass 3600.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# New inputs the fuzzer finds go to fuzz/runs/<target>/ (not committed);
# the committed seeds in fuzz/corpus/<target>/ are only read. A crash stops
# the script with the input under fuzz/artifacts/<target>/: copy it to
# fuzz/regressions/<target>/, and `cargo test -p mnemon-fuzzing` replays it
# from then on. cargo-fuzz is installed once into ~/.cache/mnemon/.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-30}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(config checkpoint chat import eval)
fi

cache="${HOME}/.cache/mnemon"
cargo_fuzz="$cache/cargo-fuzz/bin/cargo-fuzz"
if [ ! -x "$cargo_fuzz" ]; then
    echo "fuzz.sh: installing cargo-fuzz into $cache/cargo-fuzz (first run only)" >&2
    cargo install --locked --quiet --root "$cache/cargo-fuzz" cargo-fuzz@0.13.2
fi

# libFuzzer's instrumentation takes -Z flags; the stable compiler accepts
# them with RUSTC_BOOTSTRAP, so no nightly toolchain is needed.
export RUSTC_BOOTSTRAP=1
"$cargo_fuzz" build --fuzz-dir fuzz
for t in "${targets[@]}"; do
    mkdir -p "fuzz/runs/$t"
    echo "== fuzz $t for ${secs}s" >&2
    if ! "$cargo_fuzz" run --fuzz-dir fuzz "$t" "fuzz/runs/$t" "fuzz/corpus/$t" -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        2> "fuzz/runs/$t.log"; then
        tail -n 40 "fuzz/runs/$t.log" >&2
        echo "fuzz.sh: target $t crashed; the input is in fuzz/artifacts/$t/ (copy it to fuzz/regressions/$t/)" >&2
        exit 1
    fi
    grep -E "stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb" "fuzz/runs/$t.log" \
        | sed "s/^/  $t /" >&2 || true
done
