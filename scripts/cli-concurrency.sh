#!/usr/bin/env bash
# Wall time and failures of P processes × N `mnemon record` calls into one
# fresh project (no database yet), for comparing two builds.
# Usage: scripts/cli-concurrency.sh BIN P N
set -u
B=$1; P=$2; N=$3
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d" && "$B" init --window 128000 >/dev/null 2>&1 || { echo "init failed"; exit 1; }
s=$(date +%s.%N)
for p in $(seq 1 "$P"); do
  ( for i in $(seq 1 "$N"); do
      "$B" record --type c --agent "a$p" --data "{\"p\":$p,\"i\":$i}" >/dev/null 2>&1 || echo "$p $i"
    done ) > "$d/failed.$p" &
done
wait
e=$(date +%s.%N)
python3 -c "print(f'{$e - $s:.2f} s, $(cat "$d"/failed.* | wc -l) commands exited non-zero')"
