"""The plan progress lock on S3 (a real moto server): an execution's read-check-write and a cancel
race for the lock object, one loses its conditional create and retries, and the cancel is never
overwritten; a dead holder's lock is taken over after its lease; a held lock times out naming it."""

from __future__ import annotations

import itertools
import json
import threading
import time

import pytest

from kafka_ops.errors import LakeError
from kafka_ops.lake.object_store import ConditionalStore
from kafka_ops.lake.open import open_lake
from kafka_ops.lake.store import Lake
from kafka_ops.remediation.progress import Progress
from kafka_ops.remediation.store import progress_lock, progress_path, read_progress, write_progress

pytestmark = pytest.mark.integration

PLAN = "p-race"


@pytest.fixture
def lost_creates(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The lock creates the server refused (412: the lock object was there), by path."""
    lost: list[str] = []
    create = ConditionalStore.create

    def counting(self: ConditionalStore, path: str, content: bytes) -> str | None:
        etag = create(self, path, content)
        if etag is None:
            lost.append(path)
        return etag

    monkeypatch.setattr(ConditionalStore, "create", counting)
    return lost


def test_a_cancel_racing_an_execution_is_never_lost(s3_root: str, lost_creates: list[str]) -> None:
    lake = open_lake(s3_root, "delta")
    write_progress(lake, Progress(PLAN, "c1", "admin_api", [], []))
    holds: list[tuple[float, float, str]] = []
    stopped, holding = threading.Event(), threading.Event()

    def execution() -> None:
        """Like the batch runner: under the lock, stop if cancelled, else 'write to the cluster' and save."""
        for step in range(200):
            with progress_lock(lake, "c1", PLAN, timeout_s=60):
                start = time.monotonic()
                stored = read_progress(lake, "c1", PLAN)
                assert stored is not None
                if stored.status == "cancelled":
                    stopped.set()
                    holds.append((start, time.monotonic(), "execution"))
                    return
                time.sleep(0.02)  # the one write to the cluster
                if step == 3:  # the cancel comes while the lock is held, whatever the machine's load
                    holding.set()
                    deadline = time.monotonic() + 30
                    while not lost_creates and time.monotonic() < deadline:
                        time.sleep(0.01)
                stored.message = f"step {step} done"
                write_progress(lake, stored)
                holds.append((start, time.monotonic(), "execution"))

    def cancel() -> None:
        holding.wait(60)  # while the execution is writing
        with progress_lock(lake, "c1", PLAN, timeout_s=60):
            start = time.monotonic()
            stored = read_progress(lake, "c1", PLAN)
            assert stored is not None
            stored.status, stored.message = "cancelled", "cancelled by the test"
            write_progress(lake, stored)
            holds.append((start, time.monotonic(), "cancel"))

    threads = [threading.Thread(target=execution), threading.Thread(target=cancel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert stopped.is_set(), "the execution never saw the cancel"
    final = read_progress(lake, "c1", PLAN)
    assert final is not None and (final.status, final.message) == ("cancelled", "cancelled by the test")
    assert lost_creates, "no taker ever lost the lock: there was no race"
    ordered = sorted(holds)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(ordered)), "two holders at once"
    assert not lake.fs.get_file_info(progress_path(lake, "c1", PLAN) + ".lock").is_file  # released


def _lock_object(lake: Lake, expires: float) -> str:
    path = progress_path(lake, "c1", PLAN) + ".lock"
    with lake.fs.open_output_stream(path) as out:
        out.write(json.dumps({"owner": "dead", "host": "gone-host", "pid": 1, "expires": expires}).encode())
    return path


def test_a_dead_holders_lock_is_taken_over_after_its_lease(s3_root: str) -> None:
    lake = open_lake(s3_root, "delta")
    _lock_object(lake, expires=time.time() - 1)
    with progress_lock(lake, "c1", PLAN, timeout_s=5):
        pass


def test_a_held_lock_times_out_naming_it_and_the_store(s3_root: str) -> None:
    lake = open_lake(s3_root, "delta")
    path = _lock_object(lake, expires=time.time() + 600)
    with pytest.raises(LakeError) as failed, progress_lock(lake, "c1", PLAN, timeout_s=0.5):
        pass
    message = str(failed.value)
    assert path in message and "gone-host pid 1" in message and "$AWS_ENDPOINT_URL" in message
    assert "\n" not in message
