"""Tell a state kafka-ops itself left from a corrupt snapshot: a plan stopped half way.

A reassignment plan cancelled (or failed, stuck, killed) mid-way leaves some partitions at their
planned replicas and the rest at the plan's base. For a replication-factor change that is a topic
with two replication factors, which `one_replication_factor_per_topic` would otherwise hold against
every later snapshot, refusing every plan on the cluster as untrusted. Such a topic is excused when
the lake shows the plan that explains it:

* the plan's progress document (`lake.plan_files.progress_path`) says it did not
  complete (any status but `done`);
* every partition of the topic the plan moves is at the plan's base (its `rollback.json`) or its
  target (its `reassignment.json`), and the topic's other partitions share one replication factor.

What is excused is recorded (the validation's `observed.left_by_plans`, and a warning in the log)
with the plan and the way out: the reassignment DAG's `rollback` or `finish` action for that plan.
This module reads the lake's files only (the layer below remediation, which writes them).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs

from kafka_ops.errors import LakeError
from kafka_ops.lake.plan_files import REASSIGNMENT_FILE, ROLLBACK_FILE, executions_dir, plan_dir
from kafka_ops.lake.store import Lake
from kafka_ops.model.cluster import TopicPartition
from kafka_ops.validation import suites as s

log = logging.getLogger(__name__)


def left_by_plans(lake: Lake, cluster: str, partitions: pa.Table) -> dict[str, str]:
    """Topic → why its mixed replication factors are a plan's doing and what to do (module docstring)."""
    assignment: dict[TopicPartition, tuple[int, ...]] = {
        (r["topic"], int(r["partition"])): tuple(r["replicas"] or ())
        for r in partitions.select(["topic", "partition", "replicas"]).to_pylist()
    }
    out: dict[str, str] = {}
    for plan_id, status in _unfinished_plans(lake, cluster):
        files = _plan_files(lake, cluster, plan_id)
        if files is None:
            continue
        targets, bases = files
        for topic in sorted({t for t, _ in targets}):
            note = _explained(topic, plan_id, status, assignment=assignment, targets=targets, bases=bases)
            if note is not None and topic not in out:
                out[topic] = note
                log.warning("snapshot of %s: %s", cluster, note)
    return out


def excuse(frame: pd.DataFrame, left: Mapping[str, str]) -> pd.DataFrame:
    """The partition frame with `one_replication_factor_per_topic` passing on the topics in `left`."""
    if not left:
        return frame
    column = s.ONE_REPLICATION_FACTOR_PER_TOPIC.name
    frame = frame.copy()
    frame.loc[frame["topic"].isin(list(left)), column] = s.OK
    return frame


def _explained(
    topic: str,
    plan_id: str,
    status: str,
    *,
    assignment: Mapping[TopicPartition, tuple[int, ...]],
    targets: Mapping[TopicPartition, tuple[int, ...]],
    bases: Mapping[TopicPartition, tuple[int, ...]],
) -> str | None:
    ours = [tp for tp in targets if tp[0] == topic and tp in assignment]
    at_target = [tp for tp in ours if assignment[tp] == targets[tp]]
    at_base = [tp for tp in ours if assignment[tp] == bases.get(tp) and assignment[tp] != targets[tp]]
    if len(at_target) + len(at_base) != len(ours):
        return None  # a partition of the plan is somewhere else: not the plan's doing alone
    others = {len(r) for tp, r in assignment.items() if tp[0] == topic and tp not in targets}
    factors = others | {len(assignment[tp]) for tp in ours}
    if len(others) > 1 or len(factors) < 2:
        return None
    return (
        f"topic {topic}: mixed replication factors {sorted(factors)} left by plan {plan_id} ({status}): "
        f"{len(at_target)} of its partitions at the plan's target, {len(at_base)} at its base. Roll it back or "
        f"finish it: trigger kafka_partition_reassignment with action rollback (or finish) and source_plan_id "
        f"{plan_id}, dry run first"
    )


def _unfinished_plans(lake: Lake, cluster: str) -> list[tuple[str, str]]:
    folder = executions_dir(lake, cluster)
    try:
        infos = lake.fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
    except OSError as e:
        log.warning("cannot list %s: %s", folder, e)
        return []
    out = []
    for info in sorted(infos, key=lambda i: i.path):
        if info.type != pafs.FileType.File or not info.base_name.endswith(".json"):
            continue
        document = _json(lake, info.path)
        status = document.get("status") if isinstance(document, dict) else None
        if isinstance(status, str) and status != "done":
            out.append((info.base_name[: -len(".json")], status))
    return out


def _plan_files(
    lake: Lake, cluster: str, plan_id: str
) -> tuple[dict[TopicPartition, tuple[int, ...]], dict[TopicPartition, tuple[int, ...]]] | None:
    try:
        folder = plan_dir(lake, cluster, plan_id)
    except LakeError:  # a file save_plan never names (it checks the same names): no plan explains it
        return None
    target, rollback = _json(lake, f"{folder}/{REASSIGNMENT_FILE}"), _json(lake, f"{folder}/{ROLLBACK_FILE}")
    if target is None or rollback is None:
        return None
    return _assignment(target), _assignment(rollback)


def _assignment(document: Any) -> dict[TopicPartition, tuple[int, ...]]:
    """Kafka's reassignment file `{"partitions": [{topic, partition, replicas}]}`; anything else is empty."""
    rows = document.get("partitions") if isinstance(document, dict) else None
    out: dict[TopicPartition, tuple[int, ...]] = {}
    for r in rows if isinstance(rows, list) else []:
        if (
            isinstance(r, dict)
            and isinstance(r.get("topic"), str)
            and type(r.get("partition")) is int
            and isinstance(r.get("replicas"), list)
            and all(type(b) is int for b in r["replicas"])
        ):
            out[(r["topic"], r["partition"])] = tuple(r["replicas"])
    return out


def _json(lake: Lake, path: str) -> Any:
    """The file's JSON, or None when it is missing or not JSON (this check never fails a validation)."""
    try:
        if lake.fs.get_file_info(path).type != pafs.FileType.File:
            return None
        with lake.fs.open_input_stream(path) as f:
            return json.loads(f.read())
    except (OSError, ValueError) as e:
        log.warning("cannot read %s: %s", path, e)
        return None
