#!/usr/bin/env bash
# Tokens of `mnemon context` on the design documents' acceptance scenarios,
# for comparing two builds: scripts/context-size.sh BIN
set -eu
B=$(realpath "$1")
run() { "$B" "$@" >/dev/null 2>&1; }
size() { "$B" context --budget "$1" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["tokens"])'; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
run init --model gpt-4o
echo "empty project:          budget 400: $(size 400)"
run remember "Staging runs on port 5433"
echo "one fact remembered:    budget 400: $(size 400)  budget 8000: $(size 8000)"
# Acceptance 2: a session creates an epic and its stories; the next day's
# session must know them.
printf '%s\n' "Create an epic for user authentication" \
  "Add 3 stories to it: login, signup, and MFA" "start the login story" \
  "add a task to story 2: write the login form" | run chat
run goal add "Ship user authentication"
run constraint add "No new runtime dependencies"
for i in $(seq 1 12); do
  run record --type task_execution --data "{\"task\": $i, \"result\": \"step $i of the login form done\"}"
done
run session end
echo "next-day (acceptance 2): budget 2000: $(size 2000)  budget 8000: $(size 8000)"
