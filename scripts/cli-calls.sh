#!/usr/bin/env bash
# What one CLI call costs at scale: wall time (min / median / max of RUNS
# whole processes) and peak resident memory of `status`, `recent`, `search`,
# `context --budget 8000 --query` and `record`, on a project of TURNS
# imported turns, once on the heuristic tokenizer and once on gpt-4o
# (o200k_base). With a second binary, both are measured in the same run,
# call by call alternated, so a noisy machine slows both alike.
#
# Usage: scripts/cli-calls.sh TURNS RUNS BIN [BASE_BIN]
#   TURNS     turns imported (100000 for BENCHMARKS.md)
#   RUNS      whole-process runs per command and binary (21)
#   BIN       the mnemon binary to measure
#   BASE_BIN  an older build, measured beside it
#
# Peak memory is the child's own (getrusage's ru_maxrss via os.wait4), so
# nothing else is needed on the machine. The projects are imported by BIN.
set -euo pipefail
N=$1; RUNS=$2; B=$(realpath "$3"); BASE=""
[[ $# -ge 4 ]] && BASE=$(realpath "$4")
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
python3 "$(dirname "$0")/history.py" "$N" > "$d/history.jsonl"
for p in heuristic o200k; do
  mkdir -p "$d/$p"
  args=(--window 32000)
  [[ $p == o200k ]] && args+=(--model gpt-4o)
  (cd "$d/$p" && "$B" init "${args[@]}" >/dev/null && "$B" import "$d/history.jsonl" >/dev/null)
done
python3 - "$d" "$RUNS" "$B" "$BASE" <<'PY'
import os, statistics, subprocess, sys, time
d, runs, new, base = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
bins = [("new", new)] + ([("base", base)] if base else [])
commands = {
    "status": ["status"],
    "recent": ["recent"],
    "search": ["search", "argon2id hasher"],
    "context --budget 8000 --query": ["context", "--budget", "8000", "--query",
                                      "why does the billing service time out"],
    "record": ["record", "--type", "note", "--data", '{"text": "measured"}'],
}

def once(binary, project, args):
    start = time.perf_counter()
    p = subprocess.Popen([binary, *args], cwd=project,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    elapsed = time.perf_counter() - start
    err = p.stderr.read().decode()
    p.stderr.close()
    if status != 0:
        sys.exit(f"{binary} {' '.join(args)} failed in {project}: {err}")
    return elapsed * 1000, usage.ru_maxrss / 1024

for project in ["heuristic", "o200k"]:
    print(f"\n{project}")
    print("| command | " + " | ".join(f"{n}: min / median / max ms, peak MiB" for n, _ in bins)
          + (" | median ratio (base / new) |" if base else " |"))
    print("|---|" + "---|" * (len(bins) + (1 if base else 0)))
    for name, args in commands.items():
        got = {n: [] for n, _ in bins}
        for _ in range(runs):
            for n, b in bins:
                got[n].append(once(b, os.path.join(d, project), args))
        cells = []
        for n, _ in bins:
            ms = sorted(t for t, _ in got[n])
            rss = statistics.median(m for _, m in got[n])
            cells.append(f"{ms[0]:.1f} / {statistics.median(ms):.1f} / {ms[-1]:.1f} ms, {rss:.0f} MiB")
        line = f"| `{name}` | " + " | ".join(cells)
        if base:
            ratio = statistics.median(t for t, _ in got["base"]) / statistics.median(t for t, _ in got["new"])
            line += f" | {ratio:.2f}x"
        print(line + " |")
PY
