#!/usr/bin/env python3
"""Converts BEAM chats (github.com/mohammadtavakoli78/BEAM) into mnemon's
evaluation format (BRIEF section 8), for `mnemon eval recall` and
`mnemon import`.

    scripts/beam-to-eval.py BEAM_DIR OUT.json [--size 100K] [--limit N]

BEAM_DIR is a checkout of the BEAM repository (or its `chats/` folder's
parent). Each chat becomes one conversation; each batch of a chat becomes a
session dated by its time anchor ("March-15-2024"), so questions about
dates can use them; each message becomes a turn whose id is BEAM's chat id
(`m58`), which is what the probing questions' `source_chat_ids` name.

Questions: every probing question with at least one source chat id, the
category being BEAM's (information_extraction, multi_session_reasoning,
knowledge_update, temporal_reasoning, event_ordering, summarization,
contradiction_resolution, instruction_following, preference_following).
Abstention questions have no evidence and are left out. The " ->-> 1,1"
markers BEAM appends to user messages are annotations, not conversation,
and are removed.
"""

import argparse
import datetime
import json
import pathlib
import re
import sys

MARKER = re.compile(r"\s*->->\s*[\d,\s]+$")


def ids_in(value):
    """Every integer in BEAM's `source_chat_ids`, which is a list or a dict
    of lists depending on the category."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, str):
        return [int(x) for x in re.findall(r"\d+", value)]
    if isinstance(value, list):
        return [i for v in value for i in ids_in(v)]
    if isinstance(value, dict):
        return [i for v in value.values() for i in ids_in(v)]
    return []


def anchor_date(anchor):
    for fmt in ("%B-%d-%Y", "%b-%d-%Y", "%B-%d-%y"):
        try:
            return datetime.datetime.strptime(anchor, fmt)
        except ValueError:
            pass
    return None


def convert_chat(chat_dir, conv_id):
    batches = json.loads((chat_dir / "chat.json").read_text())
    sessions = []
    known = set()
    last = datetime.datetime(2024, 1, 1)
    for b in batches:
        turns = []
        date = None
        for group in b["turns"]:
            for m in group:
                if date is None and m.get("time_anchor"):
                    date = anchor_date(m["time_anchor"])
                text = MARKER.sub("", m["content"]).strip()
                if not text:
                    continue
                tid = f"m{m['id']}"
                known.add(tid)
                speaker = "user" if m["role"] == "user" else "assistant"
                turns.append({"id": tid, "speaker": speaker, "text": text})
        if not turns:
            continue
        # A batch without an anchor follows the one before it.
        if date is None or date < last:
            date = last + datetime.timedelta(days=1)
        last = date
        sessions.append(
            {
                "id": f"S{b['batch_number']}",
                "date": date.strftime("%Y-%m-%dT09:00:00Z"),
                "turns": turns,
            }
        )
    probing = json.loads(
        (chat_dir / "probing_questions" / "probing_questions.json").read_text()
    )
    questions = []
    for category, items in probing.items():
        for n, q in enumerate(items):
            evidence = []
            for i in ids_in(q.get("source_chat_ids", [])):
                tid = f"m{i}"
                if tid in known and tid not in evidence:
                    evidence.append(tid)
            if not evidence:
                continue
            answer = q.get("answer", q.get("ideal_answer", q.get("ideal_summary", "")))
            questions.append(
                {
                    "id": f"{conv_id}:{category}:{n}",
                    "question": q["question"],
                    "answer": answer,
                    "evidence": evidence,
                    "category": category,
                }
            )
    return {"id": conv_id, "sessions": sessions, "questions": questions}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("beam_dir", type=pathlib.Path)
    p.add_argument("out", type=pathlib.Path)
    p.add_argument("--size", default="100K", help="100K, 500K, 1M or 10M")
    p.add_argument("--limit", type=int, default=0, help="at most this many chats")
    p.add_argument("--skip", type=int, default=0, help="leave out the first N chats")
    a = p.parse_args()
    root = a.beam_dir / "chats" / a.size
    if not root.is_dir():
        sys.exit(f"{root} is not a folder: pass a checkout of the BEAM repository")
    chats = sorted(
        (d for d in root.iterdir() if (d / "chat.json").is_file()),
        key=lambda d: int(d.name) if d.name.isdigit() else 0,
    )
    chats = chats[a.skip :]
    if a.limit:
        chats = chats[: a.limit]
    convs = [convert_chat(d, f"beam-{a.size}-{d.name}") for d in chats]
    a.out.write_text(json.dumps({"conversations": convs}, indent=1))
    q = sum(len(c["questions"]) for c in convs)
    t = sum(len(s["turns"]) for c in convs for s in c["sessions"])
    print(f"wrote {a.out}: {len(convs)} conversations, {t} turns, {q} questions")


if __name__ == "__main__":
    main()
