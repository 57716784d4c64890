"""The analysis DAG's optional automatic preferred-leader election (off by default).

With `auto_remediation = true` for a cluster (which requires `writes_enabled`), once leader
imbalance an election can fix has persisted for `auto_election_after_runs` analyses
(`remediation.auto_election`), the DAG plans an election on a fresh, validated snapshot and
executes it through the executor's every safety check, exactly as an operator's dry run and
execute of `kafka_preferred_leader_election` would; the audit names the actor
`kafka-ops auto-remediation`, and its first row (`detect`) says why (`remediation.lifecycle`'s `detected`).
With `auto_remediation_approval`, it executes nothing: it returns the conf of a
`kafka_preferred_leader_election` run with `approve_in_ui` (`approval_conf`), which the analysis DAG starts
(`request_approval`), so the cluster's approvers approve or reject the plan in the Airflow UI.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kafka_ops.airflow.remediation_tasks import execute_plan, make_plan
from kafka_ops.lake.open import lake_of
from kafka_ops.planning.request import AUTOMATIC_ACTOR, RemediationRequest
from kafka_ops.remediation.auto_election import should_auto_elect
from kafka_ops.settings import load_settings

ACTOR = AUTOMATIC_ACTOR
BATCH_SIZE = 100


def approval_conf(cluster: str, reason: str) -> dict[str, Any]:
    """The `kafka_preferred_leader_election` run an automatic election that waits for an approver starts:
    a dry run of every topic with `approve_in_ui`, saying why (`detected`)."""
    return {
        "cluster": cluster, "action": "preferred_election", "topics": [], "topic_pattern": "",
        "batch_size": BATCH_SIZE, "dry_run": True, "approve_in_ui": True, "plan_id": "", "detected": reason,
    }  # fmt: skip


def auto_elect(cluster_name: str, run_id: str | None) -> dict[str, Any]:
    """Elect preferred leaders when this cluster allows it and the imbalance persisted; else say why not."""
    settings = load_settings()
    cluster = settings.cluster(cluster_name)
    if not cluster.auto_remediation:
        return {"cluster": cluster.name, "elected": False, "reason": "auto_remediation is off for this cluster"}
    decision = should_auto_elect(lake_of(settings), cluster.name, int(cluster.auto_election_after_runs))
    if not decision.elect:
        return {"cluster": cluster.name, "elected": False, "reason": decision.reason}
    if cluster.auto_remediation_approval:
        return {"cluster": cluster.name, "elected": False, "reason": decision.reason, "awaiting_approval": True,
                "conf": approval_conf(cluster.name, decision.reason)}  # fmt: skip
    request = RemediationRequest(
        cluster=cluster,
        lake_root=settings.lake_root,
        action="preferred_election",
        dry_run=True,
        plan_id=None,
        batch_size=BATCH_SIZE,
        detected=decision.reason,
    )
    planned = make_plan(request, actor=ACTOR)
    executed = execute_plan(replace(request, dry_run=False, plan_id=planned["plan_id"]), actor=ACTOR, run_id=run_id)
    return {"cluster": cluster.name, "elected": True, "reason": decision.reason, "plan": planned, "execution": executed}
