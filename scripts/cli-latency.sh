#!/usr/bin/env bash
# Wall time of N sequential `mnemon record` calls into a fresh project.
# Usage: scripts/cli-latency.sh BIN N    (BIN: a built mnemon binary)
set -u
B=$1; N=$2
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d" && "$B" init --window 128000 >/dev/null 2>&1 || { echo "init failed"; exit 1; }
s=$(date +%s.%N)
for i in $(seq 1 "$N"); do
  "$B" record --type lat --data "{\"i\":$i}" >/dev/null 2>&1 || echo "record $i failed" >&2
done
e=$(date +%s.%N)
python3 -c "print(f'{$e - $s:.2f} s for $N records')"
