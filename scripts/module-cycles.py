#!/usr/bin/env python3
"""Fails when two modules of one crate import each other, directly or round
a loop. A module may use its parent and its children freely (they are one
unit); between siblings and cousins the imports must form no cycle, so each
module can be read knowing only what it depends on.

Usage: scripts/module-cycles.py [CRATES_DIR]   (default: crates/)

Modules are the source files of each crate's `src/`. A reference is a
`crate::a::b` path, a `super::x` path or a `use super::{x, y}` group outside
`#[cfg(test)]` modules; it counts toward the longest module path it names.
"""

import os
import re
import sys
from collections import defaultdict

TEST_MODULE = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod \w+\s*\{")


def module_of(src: str, path: str) -> tuple:
    parts = os.path.relpath(path, src)[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def without_tests(text: str) -> str:
    """The text with inline test modules cut out (brace-matched)."""
    out, at = [], 0
    for m in TEST_MODULE.finditer(text):
        if m.start() < at:
            continue
        out.append(text[at : m.start()])
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        at = i
    out.append(text[at:])
    return "".join(out)


def references(module: tuple, text: str) -> set:
    refs = set()
    for path in re.findall(r"\bcrate::((?:\w+::)*\w+)", text):
        refs.add(tuple(path.split("::")))
    for group in re.findall(r"use crate::\{([^}]*)\}", text):
        refs.update(tuple(x.strip().split("::")) for x in group.split(",") if x.strip())
    parent = list(module[:-1])
    for path in re.findall(r"\bsuper::((?:\w+::)*\w+)", text):
        refs.add(tuple(parent + path.split("::")))
    for group in re.findall(r"use super::\{([^}]*)\}", text):
        refs.update(
            tuple(parent + x.strip().split("::")) for x in group.split(",") if x.strip()
        )
    return refs


def cycles(src: str) -> list:
    files = [
        os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs if f.endswith(".rs")
    ]
    modules = {module_of(src, f): f for f in files}
    graph = defaultdict(set)
    for m, f in modules.items():
        with open(f, encoding="utf-8") as fh:
            text = without_tests(fh.read())
        for r in references(m, text):
            for k in range(len(r), 0, -1):
                target = r[:k]
                if target in modules:
                    related = target[: len(m)] == m or m[: len(target)] == target
                    if target != m and not related:
                        graph[m].add(target)
                    break
    # Tarjan's strongly connected components, iteratively.
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]
    for root in modules:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted("::".join(c) or "crate" for c in comp))
    return found


def main() -> int:
    root = sys.argv[1] if len(sys.argv) > 1 else "crates"
    bad = 0
    for crate in sorted(os.listdir(root)):
        src = os.path.join(root, crate, "src")
        if not os.path.isdir(src):
            continue
        for comp in cycles(src):
            bad += 1
            print(f"{crate}: modules that import each other: {', '.join(comp)}")
    if bad:
        print(
            f"{bad} import cycle(s): move what both sides use into a module of its own "
            "that depends on neither"
        )
        return 1
    print("no import cycles between modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
