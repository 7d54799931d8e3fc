#!/usr/bin/env bash
# The Python package's calls against the same calls from Rust, in one run:
# `record` and an 8K `context` with a query, each side in a fresh project
# filled with the same operations, sides alternated ROUNDS times; then the
# time `import mnemon` takes in a fresh interpreter (21 runs).
#
# usage: scripts/python-calls.sh PYTHON [ROUNDS] [FILL] [RECORDS] [CONTEXTS]
#   PYTHON: an interpreter where `import mnemon` works (pip install ./crates/mnemon-py)
set -euo pipefail
cd "$(dirname "$0")/.."
py=${1:?usage: scripts/python-calls.sh PYTHON [ROUNDS] [FILL] [RECORDS] [CONTEXTS]}
rounds=${2:-3}
fill=${3:-2000}
records=${4:-500}
contexts=${5:-200}

cargo build -q --release -p mnemon-cli -p mnemon --example verb_latency
cli=target/release/mnemon
rust=target/release/examples/verb_latency
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for r in $(seq "$rounds"); do
    for side in rust python; do
        d="$out/$side-$r"
        mkdir -p "$d"
        "$cli" --dir "$d" init >/dev/null
        if [ "$side" = rust ]; then
            "$rust" "$d" "$fill" "$records" "$contexts" >"$out/$side.$r.json"
        else
            "$py" crates/mnemon-py/bench/verbs.py "$d" "$fill" "$records" "$contexts" >"$out/$side.$r.json"
        fi
        rm -rf "$d"
    done
done

for i in $(seq 21); do
    "$py" -c 'import time; t = time.perf_counter(); import mnemon; print((time.perf_counter() - t) * 1e3)'
done >"$out/import.txt"

"$py" - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]

print(f"{'call':8} {'round':>5} {'rust p50':>9} {'py p50':>9} {'ratio':>6} {'rust p95':>9} {'py p95':>9} {'ratio':>6}  (µs)")
for call in ("record", "context"):
    pooled = {"rust": [], "python": []}
    for r in range(1, rounds + 1):
        v = {s: json.load(open(f"{out}/{s}.{r}.json"))[call] for s in pooled}
        for s in pooled:
            pooled[s] += v[s]
        a50, b50, a95, b95 = pct(v["rust"], 50), pct(v["python"], 50), pct(v["rust"], 95), pct(v["python"], 95)
        print(f"{call:8} {r:>5} {a50:9.1f} {b50:9.1f} {b50 / a50:6.3f} {a95:9.1f} {b95:9.1f} {b95 / a95:6.3f}")
    a, b = pooled["rust"], pooled["python"]
    print(f"{call:8} {'all':>5} {pct(a, 50):9.1f} {pct(b, 50):9.1f} {pct(b, 50) / pct(a, 50):6.3f} "
          f"{pct(a, 95):9.1f} {pct(b, 95):9.1f} {pct(b, 95) / pct(a, 95):6.3f}")
imports = [float(x) for x in open(f"{out}/import.txt")]
print(f"import mnemon: median {statistics.median(imports):.1f} ms, min {min(imports):.1f}, max {max(imports):.1f} (21 runs)")
PY
