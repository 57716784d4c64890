"""How `make test` splits the run over pytest-xdist's workers (`-n 2 --dist loadgroup`).

Each test gets an `xdist_group`: the tests of one group run in one worker, in collection order, so a
costly fixture is started once per group rather than once per worker:
- every test on the session ZooKeeper sandbox (`sandbox`, through `healthy_sandbox` or `dag_sandbox`)
  is group `zk`, every test on the session KRaft sandbox is group `kraft` (both: `zk`, whose worker
  then starts a KRaft sandbox of its own);
- the assignor bridge's JVM (`bridge`), the Airflow UI stack (`tests/e2e`) and the object store
  (`tests/integration/s3`) are one group each;
- a benchmark's toy run starts what it needs itself: each is its own group;
- any other test is grouped with its module, so a module-scoped fixture starts once.
Two workers suit this 2-core machine: much of a cluster test's time is waiting for Kafka (a session to
expire, an ISR to shrink), and the other worker runs meanwhile.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FIXTURE_GROUPS = (("sandbox", "zk"), ("kraft_sandbox", "kraft"), ("bridge", "jvm"))
"""Session fixtures whose users share a worker, first match wins."""
FOLDER_GROUPS = {("e2e",): "e2e", ("integration", "s3"): "s3"}
"""Folders (under tests/) whose package- or session-scoped fixtures their tests share."""


def worker() -> str | None:
    """This process's xdist worker id (`gw0`, `gw1`, ...), None when not a worker."""
    return os.environ.get("PYTEST_XDIST_WORKER")


def group_of(item: pytest.Item, tests: Path) -> str:
    fixtures = getattr(item, "fixturenames", ())
    for fixture, group in FIXTURE_GROUPS:
        if fixture in fixtures:
            return group
    parts = item.path.relative_to(tests).parts if item.path.is_relative_to(tests) else ()
    for folder, group in FOLDER_GROUPS.items():
        if parts[: len(folder)] == folder:
            return group
    if parts[:1] == ("bench",):
        return item.nodeid
    return "/".join(parts)


def assign_groups(items: list[pytest.Item], tests: Path) -> None:
    for item in items:
        item.add_marker(pytest.mark.xdist_group(group_of(item, tests)))
