#!/usr/bin/env bash
# Throughput of `mnemon import` on an OpenAI-style JSONL history, each
# binary into a fresh project, alternated so a noisy machine slows both.
#
# Usage: scripts/import-speed.sh TURNS BIN [BASE_BIN] [-- INIT_ARGS...]
#   TURNS      turns in the generated history (20000 for BENCHMARKS.md)
#   BIN        the mnemon binary to measure
#   BASE_BIN   an older build measured in the same run, for the ratio
#   INIT_ARGS  what `mnemon init` gets (e.g. --model gpt-4o); none: the
#              default project (16,384-token fallback window)
#
# The history is generated, deterministic and about 240 bytes a turn:
# users ask and assistants answer about a few dozen projects, 7 minutes
# apart, so the days split it into sessions and the window fills.
set -euo pipefail
N=$1; B=$(realpath "$2"); BASE=""
shift 2
if [[ $# -gt 0 && $1 != "--" ]]; then BASE=$(realpath "$1"); shift; fi
[[ $# -gt 0 && $1 == "--" ]] && shift
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
python3 "$(dirname "$0")/history.py" "$N" > "$d/history.jsonl"
echo "history: $N turns, $(wc -c < "$d/history.jsonl") bytes; init ${*:-(default)}"
run() { # BIN LABEL
  local p="$d/p-$2"; rm -rf "$p"; mkdir -p "$p"
  (cd "$p" && "$1" init "${INIT[@]}" >/dev/null 2>&1) || true
  local s e
  s=$(date +%s.%N)
  (cd "$p" && "$1" import --json "$d/history.jsonl" > "$d/out-$2.json" 2>/dev/null)
  e=$(date +%s.%N)
  python3 - "$s" "$e" "$N" "$2" "$d/out-$2.json" <<'PY'
import json, sys
s, e, n, label, out = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
r = json.load(open(out))
writes = r.get("writes", "-")
print(f"{label:>6}: {e - s:7.2f} s  {n / (e - s):8.0f} turns/s  {r['messages']} stored, {r['sessions']} sessions, writes {writes}")
print(f"RESULT {label} {e - s:.3f}")
PY
}
INIT=("$@")
for round in 1 2; do
  run "$B" "new$round" | tee -a "$d/results"
  if [[ -n $BASE ]]; then run "$BASE" "base$round" | tee -a "$d/results"; fi
done
if [[ -n $BASE ]]; then
  python3 - "$d/results" <<'PY'
import sys
t = {}
for line in open(sys.argv[1]):
    if line.startswith("RESULT"):
        _, label, secs = line.split()
        t.setdefault(label.rstrip("12"), []).append(float(secs))
new, base = min(t["new"]), min(t["base"])
print(f"best of 2: new {new:.2f} s, base {base:.2f} s, base / new = {base / new:.1f}")
PY
fi
