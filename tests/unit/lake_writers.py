"""Writers for the Delta lake fault tests, run as `python -m tests.unit.lake_writers ...` in a subprocess.

`kill ROOT SEED ATTEMPTS`: forks one child per publish attempt and SIGKILLs it at a random moment
of its publish: the child reports each step it finishes (the intent, then each table's Delta
commit) through a pipe; the parent picks a step at random, waits for it, then kills the child
after a random extra delay, so the kill lands inside the next step whatever the machine's load
(a kill timed from the clock alone misses the steps when a loaded machine slows the publish).
Each batch is attempted twice, so the second attempt is a retry of the first, killed or not;
prints one JSON line per attempt. The parent never touches delta-rs itself, so each forked child
starts its runtime afresh, as a new process would.

`race ROOT WRITER COUNT WRITERS`: once all WRITERS writers are ready, publishes COUNT batches of
cluster `c1` as fast as it can; prints the batch ids it published, the errors it got and how
many Delta commits it had to retry after losing a race.
"""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import sys
import time
from pathlib import Path

import pyarrow as pa

from kafka_ops.errors import LakeError
from kafka_ops.lake.delta_store import DeltaLake
from kafka_ops.lake.store import Batch
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.snapshots import small_snapshot


class _SteppedLake(DeltaLake):
    """A `DeltaLake` that writes one byte to `fd` after each step of a publish it finishes."""

    def __init__(self, root: str, fd: int) -> None:
        super().__init__(root)
        self._fd = fd

    def _write_intent(self, batch: Batch, tables: list[str]) -> None:
        super()._write_intent(batch, tables)
        os.write(self._fd, b".")

    def _replace_batch_rows(self, table: str, batch: Batch, data: pa.Table) -> None:
        super()._replace_batch_rows(table, batch, data)
        os.write(self._fd, b".")


def publish_in_child(root: str, batch_id: str, kill_at: tuple[int, float] | None) -> str:
    """'killed', 'published' or 'failed': the fate of one publish of `batch_id` in a forked child,
    killed `kill_at[1]` seconds after it finishes step `kill_at[0]` (0: the intent), if given."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            _SteppedLake(root, write_end).publish(snapshot_batch(small_snapshot(batch_id)))
        except BaseException:  # the child reports any failure through its exit code
            os._exit(1)
        os._exit(0)
    os.close(write_end)
    step, delay = kill_at if kill_at is not None else (-1, 0.0)
    finished = 0
    while (kill_at is None or finished <= step) and os.read(read_end, 1):  # b"" once the child has exited
        finished += 1
    if kill_at is not None:
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return "killed"
    return "published" if os.WEXITSTATUS(status) == 0 else "failed"


def kill_run(root: str, seed: int, attempts: int) -> None:
    rng = random.Random(seed)
    publish_in_child(root, "warmup", None)  # creates the tables: later publishes only append
    steps = 1 + len(snapshot_batch(small_snapshot("x")).tables)  # the intent, then one commit per table
    started = time.monotonic()
    publish_in_child(root, "timed", None)
    per_step = (time.monotonic() - started) / steps
    for i in range(attempts):
        step, delay = rng.randrange(steps), rng.uniform(0, 1.2 * per_step)  # a few outlive their kill
        fate = publish_in_child(root, f"b{i // 2}", (step, delay))
        print(json.dumps({"batch": f"b{i // 2}", "after_step": step, "delay_s": delay, "fate": fate}), flush=True)


class _Count(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def race(root: str, writer: str, count: int, writers: int) -> None:
    lake = DeltaLake(root)
    retries = _Count()
    logging.getLogger("kafka_ops.lake.delta_store").addHandler(retries)
    logging.getLogger("kafka_ops.lake.delta_store").setLevel(logging.INFO)
    barrier = Path(root).parent / "ready"
    barrier.mkdir(exist_ok=True)
    (barrier / writer).touch()
    while len(list(barrier.iterdir())) < writers:  # start together, or there is no race
        time.sleep(0.002)
    published, errors = [], []
    for i in range(count):
        batch_id = f"{writer}-{i}"
        try:
            lake.publish(snapshot_batch(small_snapshot(batch_id)))
            published.append(batch_id)
        except LakeError as e:
            errors.append(str(e))
    print(json.dumps({"published": published, "errors": errors, "retries": retries.count}), flush=True)


if __name__ == "__main__":
    mode, lake_root = sys.argv[1], sys.argv[2]
    if mode == "kill":
        kill_run(lake_root, int(sys.argv[3]), int(sys.argv[4]))
    else:
        race(lake_root, sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
