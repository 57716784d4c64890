"""How `make test` splits the run over pytest-xdist's workers (`-n 2 --dist loadgroup`).

Each test gets an `xdist_group`: the tests of one group run in one worker, in collection order, so a
costly fixture is started once per group rather than once per worker:
- every test on the session ZooKeeper sandbox (`sandbox`, through `healthy_sandbox` or `dag_sandbox`)
  is group `zk`, every test on the session KRaft sandbox is group `kraft` (both: `zk`, whose worker
  then starts a KRaft sandbox of its own);
- the running topology's test (`tests/stack`: the whole stack, then the short soak, the longest test of
  the run) joins group `kraft`, whatever it uses: it runs after the KRaft tests, on their sandbox (and
  starts a ZooKeeper one of its own in that worker, stopped right after it);
- the assignor bridge's JVM (`bridge`), the Airflow UI stack (`tests/e2e`) and the object store
  (`tests/integration/s3`) are one group each;
- a benchmark's toy run starts what it needs itself: each is its own group;
- any other test is grouped with its module, so a module-scoped fixture starts once.
The groups are handed out longest first (`make test` passes `--no-loadscope-reorder`, and the items
are ordered by `LONGEST_FIRST`), so the long groups start at once and the short ones fill in after.
Two workers suit this 2-core machine: much of a cluster test's time is waiting for Kafka (a session to
expire, an ISR to shrink), and the other worker runs meanwhile.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

OWN_GROUPS = {("stack",): "kraft"}
"""Folders (under tests/) whose tests are a group of their own before any fixture counts."""
FIXTURE_GROUPS = (("sandbox", "zk"), ("kraft_sandbox", "kraft"), ("bridge", "jvm"))
"""Session fixtures whose users share a worker, first match wins."""
FOLDER_GROUPS = {("e2e",): "e2e", ("integration", "s3"): "s3"}
"""Folders (under tests/) whose package- or session-scoped fixtures their tests share."""


LONGEST_FIRST = ("kraft", "zk", "e2e", "s3", "jvm")
"""Groups by their length in a run, the longest first; any other group comes after these."""


def worker() -> str | None:
    """This process's xdist worker id (`gw0`, `gw1`, ...), None when not a worker."""
    return os.environ.get("PYTEST_XDIST_WORKER")


def group(item: pytest.Item) -> str:
    """The group `assign_groups` gave `item`."""
    marker = item.get_closest_marker("xdist_group")
    return str(marker.args[0]) if marker is not None else item.nodeid


def group_of(item: pytest.Item, tests: Path) -> str:
    parts = item.path.relative_to(tests).parts if item.path.is_relative_to(tests) else ()
    for folder, group in OWN_GROUPS.items():
        if parts[: len(folder)] == folder:
            return group
    fixtures = getattr(item, "fixturenames", ())
    for fixture, group in FIXTURE_GROUPS:
        if fixture in fixtures:
            return group
    for folder, group in FOLDER_GROUPS.items():
        if parts[: len(folder)] == folder:
            return group
    if parts[:1] == ("bench",):
        return item.nodeid
    return "/".join(parts)


def assign_groups(items: list[pytest.Item], tests: Path) -> None:
    """Mark each item with its group; in an xdist worker, also order the items longest group first
    (a stable sort: each group keeps its tests' order)."""
    groups = {item.nodeid: group_of(item, tests) for item in items}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(groups[item.nodeid]))
    if worker() is not None:
        rank = {group: i for i, group in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(groups[item.nodeid], len(rank)))


def check_grouped(items: list[pytest.Item]) -> None:
    """In a worker of `--dist loadgroup`: every item's node id ends with its group, which is how xdist
    hands a group to one worker. A pytest whose node ids xdist cannot suffix (9.2 with xdist 3.8) spreads
    each group over both workers, each then starting its own sandboxes, Spark and JVMs, without a word."""
    ungrouped = [item.nodeid for item in items if not item.nodeid.endswith(f"@{group(item)}")]
    if ungrouped:
        raise pytest.UsageError(
            f"pytest-xdist did not add the group to {len(ungrouped)} node id(s) (e.g. {ungrouped[0]}): "
            "`--dist loadgroup` would not keep a group in one worker; pin a pytest that xdist supports"
        )


class LaneTimes:
    """Seconds spent per xdist worker and group (setup, call and teardown), as the controller hears the
    workers' reports: the summary says which worker's lane made the run as long as it was, and with what."""

    def __init__(self) -> None:
        self.seconds: dict[str, dict[str, float]] = {}

    def add(self, report: pytest.TestReport) -> None:
        node = getattr(report, "node", None)
        gateway = getattr(node, "gateway", None)
        if gateway is None:
            return
        nodeid = report.nodeid
        group = nodeid.split("@")[-1] if nodeid.rfind("@") > nodeid.rfind("]") else nodeid.split("::")[0]
        lane = self.seconds.setdefault(str(gateway.id), {})
        lane[group] = lane.get(group, 0.0) + report.duration

    def lines(self, top: int = 8) -> list[str]:
        out = []
        for worker_id, groups in sorted(self.seconds.items()):
            biggest = sorted(groups.items(), key=lambda kv: -kv[1])[:top]
            out.append(
                f"{worker_id}: {sum(groups.values()) / 60:.1f} min in {len(groups)} groups; longest: "
                + ", ".join(f"{g} {s / 60:.1f}" for g, s in biggest)
            )
        return out
