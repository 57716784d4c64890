"""Where a lake keeps the remediation's files beside its tables: each saved plan's Kafka files
(`_plans/<cluster>/<plan_id>/`, `PLAN_FILES`) and each plan's execution progress
(`_executions/<cluster>/<plan_id>.json`). `remediation.store` writes them; `validation.plan_states`
reads them (a plan stopped half way explains a snapshot); `lake.retention` keeps them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_ops.lake.names import check_name

if TYPE_CHECKING:
    from kafka_ops.lake.store import Lake

PLANS_DIR = "_plans"
EXECUTIONS_DIR = "_executions"
REASSIGNMENT_FILE = "reassignment.json"
"""The plan's target, in `kafka-reassign-partitions`' reassignment format."""
ROLLBACK_FILE = "rollback.json"
"""The plan's base (the current assignment of every partition it touches), in the same format."""
ELECTION_FILE = "election.json"
PLAN_FILES = (REASSIGNMENT_FILE, ROLLBACK_FILE, ELECTION_FILE)


def plan_dir(lake: Lake, cluster: str, plan_id: str) -> str:
    """The folder of a saved plan's `PLAN_FILES`; `LakeError` for a name unsafe in a path."""
    return f"{lake.base}/{PLANS_DIR}/{check_name('cluster', cluster)}/{check_name('plan id', plan_id)}"


def executions_dir(lake: Lake, cluster: str) -> str:
    """The folder of a cluster's progress documents, one `<plan_id>.json` per plan run."""
    return f"{lake.base}/{EXECUTIONS_DIR}/{check_name('cluster', cluster)}"


def progress_path(lake: Lake, cluster: str, plan_id: str) -> str:
    """A plan's progress document; `LakeError` for a name unsafe in a path."""
    return f"{executions_dir(lake, cluster)}/{check_name('plan id', plan_id)}.json"
