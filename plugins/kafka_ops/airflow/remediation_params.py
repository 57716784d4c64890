"""The trigger forms of the remediation DAGs as Airflow Params: JSON schema the UI renders as a form.

`form_params(form)` builds the `airflow.sdk.Param`s of one remediation DAG from its
`planning.request.RequestForm` (which Params it has, their defaults); Airflow checks their JSON
schema when a run is triggered (a value of the wrong type, or below a `minimum`, never creates a
run). What a schema cannot check, and the request a run's Params make, is `planning.request`.

No heavy imports here: DAG files import this module at parse time.
"""

from __future__ import annotations

from airflow.sdk import Param

from kafka_ops.kafka_types import INT32_MAX
from kafka_ops.planning.request import (
    ACTION_LABELS,
    MAX_BATCH_SIZE,
    MAX_BUDGET_MINUTES,
    MAX_DETECTED_CHARS,
    MAX_PATTERN_LENGTH,
    MAX_REPLICATION_FACTOR,
    MAX_THROTTLE,
    MIN_THROTTLE,
    RequestForm,
)

WHAT = "What to plan"
PACE = "Pace of the execution"
MODE = "Dry run or execute"


def form_params(form: RequestForm) -> dict[str, Param]:
    """The DAG's `params`: JSON schema for `form`, in the order the form shows them, with its defaults."""
    default = form.defaults()
    out: dict[str, Param] = {
        "cluster": Param(
            default["cluster"], type="string", minLength=1, title="Cluster", section=WHAT,
            description="A cluster name from the kafka-ops settings ($KAFKA_OPS_CONFIG); 'default' when "
            "there is no settings file.",
        ),
        "action": Param(
            default["action"], type="string", enum=list(form.actions), title="Action", section=WHAT,
            values_display={a: ACTION_LABELS[a] for a in form.actions},
            description="What to plan (dry run) or which kind of plan plan_id is (execute).",
        ),
        "topics": Param(
            default["topics"], type="array", items={"type": "string"}, title="Topics", section=WHAT,
            description=form.topics_help,
        ),
        "topic_pattern": Param(
            default["topic_pattern"], type=["string", "null"], maxLength=MAX_PATTERN_LENGTH,
            title="Topic pattern (regex)", section=WHAT,
            description="Instead of topics: a Python regular expression that must match the whole topic "
            r"name, e.g. orders\..* . It never matches internal topics (names starting with __): name "
            f"those in topics. At most {MAX_PATTERN_LENGTH} characters.",
        ),
    }  # fmt: skip
    if form.brokers:
        out["brokers"] = Param(
            default["brokers"], type="array", items={"type": "integer", "minimum": 0, "maximum": INT32_MAX},
            title="Brokers", section=WHAT,
            description="Broker ids as a JSON list, e.g. [3]. decommission: the brokers to empty (required). "
            "replica_balance: brokers to drain to zero while balancing (optional). log_dir_balance: the "
            "brokers whose log dirs to even (optional; empty: every broker with two or more log dirs).",
        )  # fmt: skip
    if form.replication_factor:
        out["replication_factor"] = Param(
            default["replication_factor"], type=["null", "integer"], minimum=1, maximum=MAX_REPLICATION_FACTOR,
            title="Target replication factor", section=WHAT,
            description="replication_factor only: the new number of replicas of every partition of the "
            "topics (at most the number of live brokers).",
        )  # fmt: skip
    if form.source_plan:
        out["source_plan_id"] = Param(
            default["source_plan_id"], type=["string", "null"], title="Plan to roll back or finish", section=WHAT,
            description="rollback / finish only: the plan_id of a plan that was cancelled or failed half "
            "way (16 hex digits). The dry run plans, from a fresh snapshot, the moves that put its partitions "
            "back to its base (rollback) or on to its target (finish).",
        )  # fmt: skip
    if form.throttle:
        out["throttle_bytes_per_s"] = Param(
            default["throttle_bytes_per_s"], type=["null", "integer"], minimum=MIN_THROTTLE, maximum=MAX_THROTTLE,
            section=PACE,
            title="Replication throttle (bytes/s)",
            description=f"Caps replication traffic on every broker that sends or receives a replica while "
            f"a batch moves (log_dir_balance: the copy between a broker's log dirs, "
            f"replica.alter.log.dirs.io.max.bytes.per.second); at least {MIN_THROTTLE} (1 MB/s). Empty: no "
            "throttle. Removed when done.",
        )  # fmt: skip
        out["time_budget_minutes"] = Param(
            default["time_budget_minutes"], type=["null", "number"], exclusiveMinimum=0, maximum=MAX_BUDGET_MINUTES,
            section=PACE,
            title="Time budget (minutes)",
            description="Instead of a fixed throttle: the minutes the moves may take. The throttle becomes "
            "the busiest broker's bytes to send or receive divided by this budget (at most its network "
            "capacity where [clusters.capacity] sets one). Needs a plan with replica sizes (a snapshot with "
            "log dirs). Empty: use the throttle above.",
        )  # fmt: skip
    out["batch_size"] = Param(
        default["batch_size"],
        type="integer",
        minimum=1,
        maximum=MAX_BATCH_SIZE,
        title="Batch size",
        section=PACE,
        description=form.batch_help,
    )
    out["dry_run"] = Param(
        default["dry_run"], type="boolean", title="Dry run", section=MODE,
        description="On: take a fresh snapshot, make a plan, save it for review; nothing is written to the "
        "cluster. Off: execute the reviewed plan named in plan_id.",
    )  # fmt: skip
    out["approve_in_ui"] = Param(
        default["approve_in_ui"], type="boolean", title="Approve in the UI", section=MODE,
        description="With Dry run on: make the plan, then wait in this run for an approver (the cluster's "
        "approvers or approver_roles) to approve or reject it under Required actions; an approved plan is "
        "executed at once, exactly as reviewed; a rejected one, or one nobody answers in time, writes nothing.",
    )  # fmt: skip
    out["detected"] = Param(
        default["detected"], type=["string", "null"], maxLength=MAX_DETECTED_CHARS, title="Detected (automatic)",
        section=MODE,
        description="Set by the analysis DAG when its automatic election waits for an approval: why it asked for "
        "this plan. Leave empty.",
    )  # fmt: skip
    out["plan_id"] = Param(
        default["plan_id"], type=["string", "null"], title="Plan id (execute only)", section=MODE,
        description="The plan_id a dry run printed (16 hex digits). Required when dry run is off; leave "
        "empty for a dry run.",
    )  # fmt: skip
    return out
