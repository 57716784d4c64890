"""The silence DAG (`kafka_silence`): its form, and its task's body. An operator sets a maintenance window or
a silence from Airflow's trigger form, lists a cluster's silences, or ends one (`kafka_ops.silences`); the
triggering Airflow user is recorded as who set or ended it.

No heavy imports at module level beyond Airflow's `Param`: the DAG file imports `params()` at parse time.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from airflow.sdk import Param
from airflow.sdk.exceptions import AirflowFailException

from kafka_ops.alerting.silence_store import add_silence, end_silence, silences_of
from kafka_ops.errors import KafkaOpsError
from kafka_ops.settings import load_settings
from kafka_ops.silences import MAX_LENGTH, encode, new_silence, parse_duration

log = logging.getLogger(__name__)

DAG_ID = "kafka_silence"
ACTIONS = ("add", "list", "end")
FIELDS = frozenset({"cluster", "action", "brokers", "topics", "groups", "keys", "duration", "reason", "silence_id"})


def params() -> dict[str, Param]:
    """The DAG's form."""
    return {
        "cluster": Param(
            "default", type="string", minLength=1, title="Cluster",
            description="A cluster name from the kafka-ops settings ($KAFKA_OPS_CONFIG).",
        ),
        "action": Param(
            "add", type="string", enum=list(ACTIONS), title="Action",
            description="add: set a silence; list: log the cluster's silences; end: end silence Silence id now.",
        ),
        "brokers": Param(
            [], type="array", items={"type": "integer", "minimum": 0}, title="Brokers",
            description="Broker ids, one per line. Leave brokers, topics and groups empty to silence the whole "
            "cluster (a maintenance window).",
        ),
        "topics": Param(
            [], type="array", items={"type": "string", "minLength": 1}, title="Topics",
            description="Topic names or regular expressions (each matching a whole name), one per line.",
        ),
        "groups": Param(
            [], type="array", items={"type": "string", "minLength": 1}, title="Consumer groups",
            description="Group ids or regular expressions, one per line.",
        ),
        "keys": Param(
            [], type="array", items={"type": "string", "minLength": 1}, title="Only these problems",
            description="Alert keys (e.g. leader_imbalance_within_threshold); empty: every problem about what "
            "is named.",
        ),
        "duration": Param(
            "", type="string", title="For how long",
            description=f"90m, 2h or 1d (at most {MAX_LENGTH.days} days). Required to add.",
        ),
        "reason": Param(
            "", type="string", maxLength=500, title="Reason",
            description="What is being done and whom to ask. Required to add; shown with every silenced problem.",
        ),
        "silence_id": Param(
            "", type="string", title="Silence id", description="The silence to end (from list or the add's log).",
        ),
    }  # fmt: skip


def silence_task(params: Mapping[str, Any], *, actor: str) -> dict[str, Any]:
    """Add, list or end a silence as `params` say; `AirflowFailException` naming the Param on bad input."""
    unknown = sorted(set(params) - FIELDS)
    if unknown:
        raise AirflowFailException(f"unknown Params {unknown}: this DAG takes {sorted(FIELDS)}")
    try:
        settings = load_settings()
        cluster = settings.cluster(str(params.get("cluster") or "")).name
        now = datetime.now(UTC)
        action = params.get("action") or "add"
        if action == "end":
            silence_id = str(params.get("silence_id") or "").strip()
            if not silence_id:
                raise AirflowFailException("Param silence_id: say which silence to end (action list shows them)")
            ended = end_silence(settings.lake_root, cluster, silence_id, now, actor)
            log.info("%s", ended.describe())
            return {"ended": encode(ended)}
        if action == "list":
            listed = silences_of(settings.lake_root, cluster)
            for s in listed:
                log.info("%s %s", "active" if s.active(now) else "inactive", s.describe())
            return {"silences": [encode(s) for s in listed]}
        duration = str(params.get("duration") or "").strip()
        if not duration:
            raise AirflowFailException("Param duration: a silence needs an end (90m, 2h, 1d)")
        silence = new_silence(
            cluster,
            starts_at=now,
            ends_at=now + parse_duration(duration, "Param duration"),
            reason=str(params.get("reason") or ""),
            created_by=actor,
            brokers=params.get("brokers") or (),
            topics=params.get("topics") or (),
            groups=params.get("groups") or (),
            keys=params.get("keys") or (),
        )
        add_silence(settings.lake_root, silence, now)
        log.info("%s", silence.describe())
        return {"added": encode(silence)}
    except KafkaOpsError as e:
        raise AirflowFailException(str(e)) from e
