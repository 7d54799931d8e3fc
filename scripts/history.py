#!/usr/bin/env python3
"""A generated, deterministic OpenAI-style JSONL history for the speed
scripts (import-speed.sh, cli-calls.sh): about 240 bytes a turn, users ask
and assistants answer about a few dozen projects, 7 minutes apart, so the
days split it into sessions and the window fills.

Usage: scripts/history.py TURNS > history.jsonl
"""
import datetime
import json
import random
import sys

n = int(sys.argv[1])
rng = random.Random(7)
things = ["the billing service", "the login flow", "the nightly export", "the search index",
          "the mobile app", "the staging cluster", "the payments webhook", "the audit log"]
verbs = ["times out after", "was moved to", "needs a retry on", "logs an error at",
         "was rewritten for", "is blocked by", "ships behind", "was measured at"]
objs = ["port 8443", "the v2 schema", "Thursday's release", "a 30 second limit",
        "the argon2id hasher", "ticket #4121", "the eu-west region", "p95 of 180 ms"]
t0 = datetime.datetime(2026, 1, 1, 9, 0, 0)
for i in range(n):
    s = f"{rng.choice(things)} {rng.choice(verbs)} {rng.choice(objs)}"
    if i % 2 == 0:
        text = f"Can you check why {s}? It came up again in turn {i}."
    else:
        text = (f"I looked into it: {s}. The fix is to pin the version and add a test; "
                f"{rng.choice(things)} {rng.choice(verbs)} {rng.choice(objs)} as well, "
                f"so I noted both in the plan (step {i}).")
    at = t0 + datetime.timedelta(minutes=7 * i)
    print(json.dumps({"role": "user" if i % 2 == 0 else "assistant", "content": text,
                      "timestamp": at.isoformat() + "Z"}))
