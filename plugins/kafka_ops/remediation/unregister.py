"""Execute an `unregister_broker` step (`planning.unregister`): UnregisterBroker sent through the cluster's
brokers, which forward it to the active controller.

Before the one write, as every execution: the plan is stored, writes must be enabled for the cluster
(`preflight.check_offline_config`), and a fresh read must still show the broker fenced and holding no
replica (the plan's own checks, again: a broker restarted or given a replica since is refused). After it,
a fresh read must show the broker gone from the registrations (DescribeCluster with fenced brokers). Each
step is an audit row of the plan (`unregister`, `verify`, or `refuse`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kafka.errors import KafkaError
from kafka.errors import for_code as error_for_code

from kafka_ops.errors import RemediationFailed, RemediationRefused
from kafka_ops.lake.store import Lake
from kafka_ops.planning.plan import Plan
from kafka_ops.planning.unregister import unregister_problem
from kafka_ops.remediation.live import KRaftLiveReader
from kafka_ops.remediation.preflight import check_offline_config
from kafka_ops.remediation.store import AuditLog, save_plan
from kafka_ops.settings import ClusterConfig
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.sources.messages.cluster import UnregisterBrokerRequest

BACKEND = "admin_api"


def unregister_broker(
    plan: Plan, *, lake: Lake, cluster_config: ClusterConfig, target: KafkaTarget, actor: str,
    run_id: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Apply `plan` (module docstring); what was done, for the task's log and the CLI."""
    if plan.kind != "unregister_broker":
        raise RemediationRefused(plan.plan_id, "plan kind", f"a {plan.kind} plan is not an unregister_broker step")
    (broker,) = plan.request["brokers"]
    save_plan(lake, plan, created_by=actor)
    audit = AuditLog(lake, plan, BACKEND, actor, run_id)
    reader = KRaftLiveReader(plan.cluster, target)
    try:
        check_offline_config(plan, cluster_config, None)
        problem = unregister_problem(reader.full(), broker)
        if problem is not None:
            raise RemediationRefused(plan.plan_id, "broker fenced and empty", problem)
    except RemediationRefused as e:
        audit.record("refuse", "refused", detail=str(e))
        raise
    try:
        _send(target, broker)
    except RemediationFailed as e:
        audit.record("unregister", "failed", detail=str(e))
        raise
    audit.record("unregister", "ok", detail=f"broker {broker} unregistered (UnregisterBroker)")
    after = reader.full()
    if broker in after.brokers or broker in after.fenced_brokers:
        detail = f"broker {broker} is still registered after UnregisterBroker"
        audit.record("verify", "failed", detail=detail)
        raise RemediationFailed(f"plan {plan.plan_id}: {detail}")
    audit.record("verify", "ok", detail=f"broker {broker} is no longer registered")
    return {"plan_id": plan.plan_id, "cluster": plan.cluster, "broker": broker, "status": "done",
            "at": datetime.now(UTC).isoformat()}  # fmt: skip


def _send(target: KafkaTarget, broker: int) -> None:
    """One UnregisterBroker; `RemediationFailed` with Kafka's error when it is refused or unanswered."""
    admin = target()
    try:

        async def send() -> Any:
            return await admin._manager.send(UnregisterBrokerRequest(broker_id=broker))

        response = admin._manager.run(send)
    except KafkaError as e:
        raise RemediationFailed(f"UnregisterBroker of broker {broker} failed: {type(e).__name__}: {e}") from e
    finally:
        admin.close()
    if response.error_code:
        error = error_for_code(response.error_code)
        raise RemediationFailed(
            f"UnregisterBroker of broker {broker} refused: {error.__name__}: {response.error_message or error.message}"
        )
