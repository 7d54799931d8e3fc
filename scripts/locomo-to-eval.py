#!/usr/bin/env python3
"""Converts LoCoMo (github.com/snap-research/locomo, `data/locomo10.zip`)
into mnemon's evaluation format (BRIEF section 8), for `mnemon eval recall`
and `mnemon import`.

    scripts/locomo-to-eval.py LOCOMO OUT.json [--skip N] [--limit N]

LOCOMO is the unpacked zip's `locomo10_v2/` folder (one JSON file per
conversation), a `locomo10.json` list of the same objects, or the zip
itself. Conversations are taken in the order of their sample ids, so
`--skip` and `--limit` name the same ones on every machine.

Each session becomes a session dated by its `session_N_date_time`
("1:56 pm on 8 May, 2023"), each turn a turn with LoCoMo's dialogue id
(`D1:3`), which is what the questions' `evidence` names. A turn that
shares a photo gets its caption appended, as LoCoMo's own evaluation
shows it to a model: `[shares a photo: a photo of ...]`.

Questions: every question with at least one evidence id that names a turn,
the category named as in LoCoMo's paper (1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial). Evidence ids written together
("D8:6; D9:17") are split; ids that name no turn are left out.
"""

import argparse
import datetime
import json
import pathlib
import re
import sys
import zipfile

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def load(path):
    path = pathlib.Path(path)
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as z:
            names = [n for n in z.namelist() if re.search(r"locomo10_v2/[^/]+\.json$", n)]
            return named([(pathlib.PurePath(n).stem, json.loads(z.read(n))) for n in names])
    if path.is_dir():
        return named([(p.stem, json.loads(p.read_text())) for p in path.glob("*.json")])
    data = json.loads(path.read_text())
    data = data if isinstance(data, list) else [data]
    return named([(str(i), s) for i, s in enumerate(data)])


def named(pairs):
    """(id, sample) in a fixed order: by `sample_id` where LoCoMo gives one,
    else by the file's number."""
    out = [(str(s.get("sample_id", stem)), s) for stem, s in pairs]
    out.sort(key=lambda p: (len(p[0]), p[0]))
    return out


def conversation_of(sample):
    """LoCoMo's files hold the conversation either at the top level or
    under `conversation` (locomo10.json)."""
    return sample.get("conversation", sample)


def session_date(text):
    text = text.strip()
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.datetime.strptime(text, fmt).strftime("%Y-%m-%dT%H:%M:00Z")
        except ValueError:
            pass
    raise SystemExit(f"locomo-to-eval: cannot read the session date `{text}`")


def turn_text(turn):
    text = turn.get("text", "")
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shares a photo: {caption}]"
    return text


def convert(sample, conv_id):
    conv = conversation_of(sample)
    numbers = sorted(
        int(m.group(1))
        for k in conv
        if (m := re.fullmatch(r"session_(\d+)", k)) and conv[k]
    )
    sessions = []
    known = set()
    for n in numbers:
        turns = []
        for t in conv[f"session_{n}"]:
            known.add(t["dia_id"])
            turns.append({"id": t["dia_id"], "speaker": t["speaker"], "text": turn_text(t)})
        sessions.append(
            {"id": f"S{n}", "date": session_date(conv[f"session_{n}_date_time"]), "turns": turns}
        )
    questions = []
    for i, q in enumerate(sample.get("qa", [])):
        evidence = []
        for e in q.get("evidence", []):
            for part in re.split(r"[;,\s]+", str(e)):
                part = part.strip()
                if part in known and part not in evidence:
                    evidence.append(part)
        if not evidence:
            continue
        answer = q.get("answer", q.get("adversarial_answer", ""))
        questions.append(
            {
                "id": f"q{i + 1}",
                "question": q["question"],
                "answer": answer,
                "evidence": evidence,
                "category": CATEGORIES.get(q.get("category"), str(q.get("category"))),
            }
        )
    return {"id": conv_id, "sessions": sessions, "questions": questions}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("locomo")
    p.add_argument("out")
    p.add_argument("--skip", type=int, default=0, help="conversations to pass over first")
    p.add_argument("--limit", type=int, default=None, help="conversations to convert at most")
    a = p.parse_args()
    samples = load(a.locomo)
    chosen = samples[a.skip :]
    if a.limit is not None:
        chosen = chosen[: a.limit]
    convs = []
    for conv_id, s in chosen:
        convs.append(convert(s, f"locomo-{conv_id}"))
    pathlib.Path(a.out).write_text(json.dumps({"conversations": convs}, indent=1))
    turns = sum(len(s["turns"]) for c in convs for s in c["sessions"])
    qs = sum(len(c["questions"]) for c in convs)
    print(f"wrote {a.out}: {len(convs)} conversations, {turns} turns, {qs} questions", file=sys.stderr)


if __name__ == "__main__":
    main()
