#!/usr/bin/env python3
"""Converts REALTALK (github.com/danny911kr/REALTALK, `data/Chat_*.json`)
into mnemon's evaluation format (BRIEF section 8), for `mnemon eval recall`
and `mnemon import`.

    scripts/realtalk-to-eval.py REALTALK_DATA OUT.json [--chats 1,3,5]

REALTALK_DATA is the repository's `data/` folder: ten conversations between
real people, held over 21 days, in LoCoMo's layout (`session_N`,
`session_N_date_time`, turns with a `dia_id`, `qa` with `evidence`).
Conversations are taken by the number in their file name (`Chat_7_...`),
in that order; `--chats` keeps only the numbers given, so a split names
the same conversations on every machine.

Each session becomes a session dated by its `session_N_date_time`
("29.12.2023, 22:42:04"), each turn a turn with REALTALK's dialogue id
(`D1:3`), which is what the questions' `evidence` names. A turn that
shares a photo gets its caption appended, as for LoCoMo:
`[shares a photo: ...]`.

Questions: every memory-probing question with at least one evidence id
that names a turn. REALTALK writes evidence by hand, so ids come in several
shapes, all read here: lists in one string ("D5:12;D5:16", "D1:11; D3:18"),
a trailing full stop ("D5:3."), a space ("D 2:18") and ranges within a
session ("D12:3-D12:5", every turn from the first to the last). Ids that
still name no turn are left out: 140 of REALTALK's 1,833 (the script says
how many it kept). REALTALK numbers its categories without naming them in its
README; they are kept as `category-1` to `category-3`.
"""

import argparse
import datetime
import json
import pathlib
import re
import sys

ID = re.compile(r"D\s*(\d+)\s*:\s*(\d+)")


def session_date(text):
    text = text.strip()
    try:
        return datetime.datetime.strptime(text, "%d.%m.%Y, %H:%M:%S").strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        raise SystemExit(f"realtalk-to-eval: cannot read the session date `{text}`")


def turn_text(turn):
    text = turn.get("clean_text", "")
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shares a photo: {caption}]"
    return text


def evidence_ids(raw):
    """Every turn id a hand-written evidence string names, ranges expanded."""
    out = []
    for part in re.split(r"[;,]", str(raw)):
        found = [(int(s), int(t)) for s, t in ID.findall(part)]
        if len(found) == 2 and "-" in part and found[0][0] == found[1][0] and found[0][1] <= found[1][1]:
            s, first = found[0]
            out.extend(f"D{s}:{t}" for t in range(first, found[1][1] + 1))
        else:
            out.extend(f"D{s}:{t}" for s, t in found)
    return out


def convert(data, conv_id):
    numbers = sorted(
        int(m.group(1)) for k in data if (m := re.fullmatch(r"session_(\d+)", k)) and data[k]
    )
    sessions = []
    known = set()
    for n in numbers:
        turns = []
        for t in data[f"session_{n}"]:
            text = turn_text(t).strip()
            if not text:
                continue
            known.add(t["dia_id"])
            turns.append({"id": t["dia_id"], "speaker": t["speaker"], "text": text})
        sessions.append(
            {"id": f"S{n}", "date": session_date(data[f"session_{n}_date_time"]), "turns": turns}
        )
    questions = []
    named = 0
    kept = 0
    for i, q in enumerate(data.get("qa", [])):
        evidence = []
        for e in q.get("evidence", []):
            for part in evidence_ids(e):
                named += 1
                if part in known and part not in evidence:
                    evidence.append(part)
                    kept += 1
        if not evidence:
            continue
        questions.append(
            {
                "id": f"q{i + 1}",
                "question": q["question"],
                "answer": q.get("answer", ""),
                "evidence": evidence,
                "category": f"category-{q.get('category')}",
            }
        )
    return {"id": conv_id, "sessions": sessions, "questions": questions}, named, kept


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", type=pathlib.Path, help="REALTALK's data/ folder")
    p.add_argument("out", type=pathlib.Path)
    p.add_argument("--chats", default="", help="comma-separated chat numbers to keep (default: all)")
    a = p.parse_args()
    files = []
    for f in a.data.glob("Chat_*.json"):
        m = re.match(r"Chat_(\d+)_", f.name)
        if m:
            files.append((int(m.group(1)), f))
    files.sort()
    if not files:
        sys.exit(f"realtalk-to-eval: no Chat_N_*.json files in {a.data}; pass REALTALK's data/ folder")
    if a.chats:
        wanted = {int(x) for x in a.chats.split(",") if x.strip()}
        missing = wanted - {n for n, _ in files}
        if missing:
            sys.exit(f"realtalk-to-eval: no chat numbered {sorted(missing)} in {a.data}")
        files = [(n, f) for n, f in files if n in wanted]
    conversations = []
    named = kept = 0
    for n, f in files:
        conv, nm, kp = convert(json.loads(f.read_text()), f"realtalk-{n}")
        conversations.append(conv)
        named += nm
        kept += kp
    a.out.write_text(json.dumps({"conversations": conversations}, ensure_ascii=False))
    turns = sum(len(s["turns"]) for c in conversations for s in c["sessions"])
    questions = sum(len(c["questions"]) for c in conversations)
    print(
        f"wrote {a.out}: {len(conversations)} conversations, {turns} turns, {questions} questions "
        f"({kept} of {named} evidence ids name a turn)"
    )


if __name__ == "__main__":
    main()
