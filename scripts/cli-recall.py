#!/usr/bin/env python3
"""Evidence recall measured through the CLI, as a user would get it: per
conversation a fresh project, `mnemon import` of the conversation, then
`mnemon context --preset qa --budget B --query Q` per question; a turn
counts when its full text is in the printed context.

    scripts/cli-recall.py DATA.json [--bin target/release/mnemon]
        [--budgets 1000,2000,4000] [--model gpt-4o] [--limit N]

`mnemon eval recall` measures the same in one process, against baselines.
"""

import argparse
import collections
import json
import pathlib
import subprocess
import sys
import tempfile


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data", type=pathlib.Path)
    p.add_argument("--bin", default="target/release/mnemon")
    p.add_argument("--budgets", default="1000,2000,4000,8000,16000")
    p.add_argument("--model", default="gpt-4o", help="the project's model; '' for mnemon's default")
    p.add_argument("--limit", type=int, default=0, help="at most this many conversations")
    a = p.parse_args()
    budgets = [int(b) for b in a.budgets.split(",")]
    d = json.loads(a.data.read_text())
    convs = d["conversations"][: a.limit or None]
    scores = collections.defaultdict(list)
    by_cat = collections.defaultdict(list)

    def run(cwd, *args):
        r = subprocess.run([a.bin, *args], cwd=cwd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"mnemon {' '.join(args[:2])} failed ({r.returncode}): {r.stderr.strip()}")
        return r.stdout

    for c in convs:
        with tempfile.TemporaryDirectory() as tmp:
            init = ["init"] + (["--model", a.model] if a.model else [])
            run(tmp, *init)
            one = pathlib.Path(tmp) / "conversation.json"
            one.write_text(json.dumps({"conversations": [c]}))
            run(tmp, "import", str(one), "--json")
            text = {t["id"]: t["text"] for s in c["sessions"] for t in s["turns"]}
            for q in c["questions"]:
                ev = [text[e] for e in q["evidence"] if e in text]
                if not ev:
                    continue
                for b in budgets:
                    ctx = run(tmp, "context", "--preset", "qa", "--budget", str(b), "--query", q["question"])
                    r = sum(1 for t in ev if t in ctx) / len(ev)
                    scores[b].append(r)
                    by_cat[(b, q.get("category", "uncategorized"))].append(r)
        print(f"{c['id']}: done", file=sys.stderr)
    print("budget  recall  questions")
    for b in budgets:
        print(f"{b:>6}  {sum(scores[b]) / len(scores[b]):.3f}  {len(scores[b])}")
    for b in budgets:
        cats = sorted({k[1] for k in by_cat if k[0] == b})
        print(f"{b:>6}  " + "  ".join(f"{c} {sum(by_cat[(b, c)]) / len(by_cat[(b, c)]):.2f}" for c in cats))


if __name__ == "__main__":
    main()
