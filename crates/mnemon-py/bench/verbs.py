"""The latency of `record` and of an 8K `context` with a query, called from
Python: the same calls as `crates/mnemon/examples/verb_latency.rs`, through
the package. `scripts/python-calls.sh` runs both and compares them.

python verbs.py DIR FILL RECORDS CONTEXTS
"""

import json
import sys
import time

import mnemon


def main() -> None:
    root, fill, records, contexts = sys.argv[1], *map(int, sys.argv[2:5])
    m = mnemon.Mnemon.open(root)

    def op(i: int) -> dict:
        return {"task": i, "result": f"step {i}: the parser handles case {i % 97} of the grammar"}

    for i in range(fill):
        m.record("task_execution", op(i))
    rec = []
    for i in range(records):
        t = time.perf_counter()
        m.record("task_execution", op(fill + i))
        rec.append((time.perf_counter() - t) * 1e6)
    ctx = []
    for i in range(contexts):
        q = f"which case of the grammar did step {i * 7} handle"
        t = time.perf_counter()
        c = m.context(budget=8000, query=q)
        ctx.append((time.perf_counter() - t) * 1e6)
        assert c.tokens <= 8000
    print(json.dumps({"record": rec, "context": ctx}))


if __name__ == "__main__":
    main()
