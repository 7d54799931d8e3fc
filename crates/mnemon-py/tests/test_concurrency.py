"""Writers at once: threads of one process sharing a handle (the GIL is
released inside every call), and processes sharing one project."""

import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import mnemon
from mnemon import Mnemon

THREADS = 8
PER_THREAD = 500
PROCESSES = 4
PER_PROCESS = 150


def stored(m: Mnemon, kind: str) -> Counter:
    seen: Counter = Counter()
    for op in m.recent(limit=100_000, type=kind):
        seen[(op.data["writer"], op.data["i"])] += 1
    return seen


def test_threads_share_one_handle(tmp_path: Path) -> None:
    m = Mnemon.init(tmp_path)
    failures: list = []

    def write(t: int) -> None:
        agent = m.for_agent(f"worker-{t % 2}")
        for i in range(PER_THREAD):
            try:
                w = agent.record("thread_write", writer=t, i=i)
                assert w.value.data == {"writer": t, "i": i}
            except Exception as e:  # noqa: BLE001 - every failure is reported
                failures.append((t, i, repr(e)))

    threads = [threading.Thread(target=write, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    seen = stored(Mnemon.open(tmp_path), "thread_write")
    expected = {(t, i) for t in range(THREADS) for i in range(PER_THREAD)}
    assert set(seen) == expected
    assert max(seen.values()) == 1, "a write was stored twice"


WRITER = """
import sys, mnemon
m = mnemon.Mnemon.open(sys.argv[1], agent="proc-" + sys.argv[2])
for i in range(int(sys.argv[3])):
    m.record("process_write", writer=int(sys.argv[2]), i=i)
print("done")
"""


def test_processes_share_one_project(tmp_path: Path) -> None:
    Mnemon.init(tmp_path)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), str(p), str(PER_PROCESS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in range(PROCESSES)
    ]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert out.strip() == "done"
    seen = stored(Mnemon.open(tmp_path), "process_write")
    expected = {(p, i) for p in range(PROCESSES) for i in range(PER_PROCESS)}
    assert set(seen) == expected
    assert max(seen.values()) == 1, "a write was stored twice"


def test_a_handle_is_one_object_across_threads() -> None:
    m = Mnemon.in_memory()
    barrier = threading.Barrier(4)
    errors: list = []

    def read_and_write() -> None:
        barrier.wait()
        try:
            for i in range(50):
                m.record("note", text=f"n{i}")
                assert m.context(budget=200).tokens <= 200
        except mnemon.Error as e:
            errors.append(e)

    ts = [threading.Thread(target=read_and_write) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    assert len(m.recent(limit=1000, type="note")) == 200
