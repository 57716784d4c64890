"""A remediation request: what an operator asks a remediation DAG (or the demo) to plan or execute.

Two forms, one per DAG: `ELECTION_FORM` (`kafka_preferred_leader_election`: preferred election,
leader reorder + election) and `REASSIGNMENT_FORM` (`kafka_partition_reassignment`: replication
factor, decommission, replica balance, log dir balance, rollback, finish). Each says which Params
its DAG has and their defaults; the Airflow form built from it (JSON schema, checked by Airflow
when a run is triggered) is `kafka_ops.airflow.remediation_params`.

`parse_request(params, settings, form, stored=...)` checks everything a schema cannot, stops at the
first invalid Param and raises `ParamError` (a `ConfigError`) whose message starts with its name:
"Param 'replication_factor': must be at least 1, got 0". Only a Param naming a stored plan
(`plan_id`, `source_plan_id`) reads anything, through `stored` (the plans in the lake,
`kafka_ops.remediation.store.stored_plan`); the rest is pure.

A run is either a dry run (`dry_run` true, `plan_id` empty: plan from a fresh snapshot, write
nothing to the cluster) or the execution of a plan a dry run made and the operator reviewed
(`dry_run` false and its `plan_id`, of this cluster and this action). On an execution the Params
that choose *what* to plan (topics, topic pattern, brokers, replication factor) may be left empty,
since the plan says what to do; any that is given must agree with the reviewed plan's request
(`check_reviewed`), so the form re-triggered with the dry run's values passes and a changed value
is refused rather than silently ignored. The plan is executed as it was reviewed, never re-planned.
A dry run with `approve_in_ui` goes on, in the same run, to wait for an approver's answer in the Airflow
UI, and executes the plan it made once approved (`kafka_ops.airflow.approval`).
Throttle and batch size pace the execution; a time budget (`time_budget_minutes`), when given,
replaces the throttle with the rate that moves the plan's bytes within it
(`remediation.throttle_budget`).

No heavy imports here: DAG files import this module at parse time.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from kafka_ops.errors import ConfigError, KafkaOpsError
from kafka_ops.kafka_types import INT32_MAX, INT64_MAX, shown
from kafka_ops.lake.names import DEFAULT_LAKE_FORMAT
from kafka_ops.planning.plan import Plan
from kafka_ops.settings import ClusterConfig, Settings

Action = Literal[
    "preferred_election",
    "leader_reorder",
    "replication_factor",
    "decommission",
    "replica_balance",
    "log_dir_balance",
    "rollback",
    "finish",
    "unregister_broker",
]
ACTIONS: tuple[str, ...] = get_args(Action)
ACTION_LABELS: dict[str, str] = {
    "preferred_election": "Preferred-leader election: give leadership back to each partition's first replica",
    "leader_reorder": "Leader reorder + election: even out preferred leaders by reordering replica lists "
    "(no data copied), then elect",
    "replication_factor": "Replication factor: change the number of replicas of the chosen topics",
    "decommission": "Decommission brokers: move every replica off the chosen brokers",
    "replica_balance": "Replica balance: even out replicas per broker with the fewest moves (optionally "
    "draining the chosen brokers)",
    "log_dir_balance": "Log dir balance: even out each broker's log dirs (JBOD) by moving replicas between "
    "them (AlterReplicaLogDirs; no replica changes broker)",
    "rollback": "Roll back a cancelled or failed plan: put its moved partitions back to the plan's base",
    "finish": "Finish a cancelled or failed plan: move its partitions still at the base to the plan's target",
    "unregister_broker": "Unregister a decommissioned broker (KRaft): remove the registration a stopped broker "
    "holding no replica keeps, fenced (UnregisterBroker, KIP-1073)",
}
TOPIC_ACTIONS = frozenset({"preferred_election", "leader_reorder", "replication_factor"})
BROKER_ACTIONS = frozenset({"decommission", "replica_balance", "log_dir_balance", "unregister_broker"})
SOURCE_PLAN_ACTIONS = frozenset({"rollback", "finish"})

MIN_THROTTLE = 1_000_000
MAX_THROTTLE = INT64_MAX  # Kafka's throttled rate is a long
MAX_REPLICATION_FACTOR = 2**15 - 1  # Kafka's replication factor is an int16
MAX_BATCH_SIZE = INT32_MAX
MAX_PATTERN_LENGTH = 500
"""Longest topic pattern accepted. A topic name has at most 249 characters; a longer pattern is a list
of topics, better given in `topics`. It also bounds nesting to 250 groups, which `re.compile` (about
two stack frames per group) handles far below Python's recursion limit wherever the pattern is
compiled again, so a pattern valid here stays valid in the tasks."""
DEFAULT_THROTTLE = 50_000_000
MAX_BUDGET_MINUTES = 525_600 * 10
"""Ten years: a larger budget is a typo, and would round the throttle to its minimum anyway."""
_TOPIC_NAME = re.compile(r"^[A-Za-z0-9._-]{1,249}$")
_PLAN_ID = re.compile(r"^[0-9a-f]{16}$")


AUTOMATIC_ACTOR = "kafka-ops auto-remediation"
"""Who the automatic election is, in the audit and the lifecycle."""
MAX_DETECTED_CHARS = 1000


class ParamError(ConfigError):
    """A Param of a remediation DAG is invalid; the message starts with "Param '<name>':"."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"Param {field!r}: {problem}")
        self.field = field
        self.problem = problem


@dataclass(frozen=True)
class RequestForm:
    """The Params of one remediation DAG: its actions, which optional fields it shows, defaults (the
    Airflow form built from it is `kafka_ops.airflow.remediation_params.form_params`)."""

    dag_id: str
    actions: tuple[Action, ...]
    batch_size: int
    batch_help: str
    topics_help: str
    throttle: bool
    brokers: bool
    replication_factor: bool
    source_plan: bool = False

    @property
    def fields(self) -> frozenset[str]:
        names = {"cluster", "action", "topics", "topic_pattern", "batch_size", "dry_run", "approve_in_ui", "plan_id",
                 "detected"}  # fmt: skip
        for name in ("brokers", "replication_factor"):
            if getattr(self, name):
                names.add(name)
        if self.source_plan:
            names.add("source_plan_id")
        if self.throttle:
            names |= {"throttle_bytes_per_s", "time_budget_minutes"}
        return frozenset(names)

    def defaults(self) -> dict[str, Any]:
        """Each Param's value when the form is left as it is, in the order the form shows them."""
        values: dict[str, Any] = {"cluster": "default", "action": self.actions[0], "topics": [], "topic_pattern": ""}
        if self.brokers:
            values["brokers"] = []
        if self.replication_factor:
            values["replication_factor"] = None
        if self.source_plan:
            values["source_plan_id"] = ""
        if self.throttle:
            values |= {"throttle_bytes_per_s": DEFAULT_THROTTLE, "time_budget_minutes": None}
        return values | {"batch_size": self.batch_size, "dry_run": True, "approve_in_ui": False, "plan_id": "",
                         "detected": ""}  # fmt: skip


ELECTION_FORM = RequestForm(
    dag_id="kafka_preferred_leader_election",
    actions=("preferred_election", "leader_reorder"),
    batch_size=100,
    batch_help="Partitions per election request (and, for leader reorder, per reassignment batch); the next "
    "starts when the previous one is done.",
    topics_help="One topic per line, or use the topic pattern; leave both empty for every topic.",
    throttle=False,
    brokers=False,
    replication_factor=False,
)
REASSIGNMENT_FORM = RequestForm(
    dag_id="kafka_partition_reassignment",
    actions=(
        "replication_factor",
        "decommission",
        "replica_balance",
        "log_dir_balance",
        "rollback",
        "finish",
        "unregister_broker",
    ),
    batch_size=10,
    batch_help="At most this many partitions are reassigned at once; the next batch starts when every "
    "replica of the previous one is in sync.",
    topics_help="replication_factor only: one topic per line (or use the topic pattern). Leave empty for "
    "decommission and replica_balance, which act on brokers.",
    throttle=True,
    brokers=True,
    replication_factor=True,
    source_plan=True,
)
FORMS = {f.dag_id: f for f in (ELECTION_FORM, REASSIGNMENT_FORM)}


@dataclass(frozen=True)
class RemediationRequest:
    """A validated trigger of a remediation DAG."""

    cluster: ClusterConfig
    lake_root: str
    action: Action
    dry_run: bool
    plan_id: str | None
    topics: tuple[str, ...] = ()
    """Topics named one by one (empty: none named)."""
    topic_pattern: str | None = None
    brokers: tuple[int, ...] = ()
    replication_factor: int | None = None
    throttle_bytes_per_s: int | None = DEFAULT_THROTTLE
    batch_size: int = 10
    time_budget_minutes: float | None = None
    """When set, the throttle is computed from the plan's bytes and this budget (replaces the throttle)."""
    form: str = field(default="", compare=False)
    source_plan_id: str | None = None
    """rollback / finish: the half-applied plan to roll back or finish."""
    lake_format: str = DEFAULT_LAKE_FORMAT
    approve_in_ui: bool = False
    """Plan, wait in the same run for an approver's answer in the Airflow UI, then execute that plan."""
    detected: str | None = None
    """Set by the automatic election: why it asked for this plan (its lifecycle's `detected` step)."""

    def summary(self) -> dict[str, Any]:
        """JSON-ready, for XCom and logs."""
        return {
            "cluster": self.cluster.name,
            "action": self.action,
            "dry_run": self.dry_run,
            "approve_in_ui": self.approve_in_ui,
            "plan_id": self.plan_id,
            "detected": self.detected,
            "topics": list(self.topics),
            "topic_pattern": self.topic_pattern,
            "brokers": list(self.brokers),
            "replication_factor": self.replication_factor,
            "throttle_bytes_per_s": self.throttle_bytes_per_s,
            "time_budget_minutes": self.time_budget_minutes,
            "batch_size": self.batch_size,
            "source_plan_id": self.source_plan_id,
        }


StoredPlan = Callable[["RemediationRequest", str], Plan]
"""Where the plans a request names are found: (request, plan id) → the plan of the request's cluster;
raises a `KafkaOpsError` naming why when there is none."""


def parse_request(
    params: Mapping[str, Any], settings: Settings, form: RequestForm | None = None, *, stored: StoredPlan
) -> RemediationRequest:
    """Validate `params` (a DAG run's Params) for `form` (None: any action, every field).

    Raises `ParamError` naming the first invalid Param. With `dry_run` false, the plan `plan_id`
    must be `stored` for this cluster, be of this action and agree with the Params given."""
    allowed = form.fields if form is not None else frozenset().union(*(f.fields for f in FORMS.values()))
    reject_unknown(params, allowed)
    dry_run = params.get("dry_run", True)
    if not isinstance(dry_run, bool):
        raise ParamError("dry_run", f"must be true or false, got {shown(dry_run)}")
    approve = params.get("approve_in_ui", False)
    if not isinstance(approve, bool):
        raise ParamError("approve_in_ui", f"must be true or false, got {shown(approve)}")
    if approve and not dry_run:
        raise ParamError(
            "approve_in_ui",
            "plans first and executes only what an approver approves in this run: leave dry_run on and plan_id "
            "empty (to execute a plan reviewed before, turn approve_in_ui off)",
        )
    detected = params.get("detected") or None
    if detected is not None and (not isinstance(detected, str) or len(detected) > MAX_DETECTED_CHARS or not dry_run):
        raise ParamError("detected", f"is set by the automatic election on a dry run (at most {MAX_DETECTED_CHARS} "
                         f"characters), got {shown(detected)}")  # fmt: skip
    cluster = cluster_param(params.get("cluster", "default"), settings)
    action = _action(params.get("action"), form.actions if form is not None else ACTIONS)
    # what to plan: required on a dry run; on an execution the plan says it, and any value given must agree
    topics, pattern = _topics(params.get("topics"), params.get("topic_pattern"), action, required=dry_run)
    brokers = _brokers(params.get("brokers"), action, required=dry_run)
    rf = _replication_factor(params.get("replication_factor"), action, required=dry_run)
    throttle = _throttle(params.get("throttle_bytes_per_s", DEFAULT_THROTTLE))
    budget = _time_budget(params.get("time_budget_minutes"))
    default_batch = form.batch_size if form is not None else 10
    batch_size = _positive("batch_size", params.get("batch_size", default_batch), MAX_BATCH_SIZE)
    plan_id = _plan_id(params.get("plan_id"), dry_run)
    source = _source_plan_id(params.get("source_plan_id"), action, required=dry_run)
    request = RemediationRequest(
        cluster=cluster,
        lake_root=settings.lake_root,
        lake_format=settings.lake_format,
        action=action,
        dry_run=dry_run,
        plan_id=plan_id,
        topics=topics,
        topic_pattern=pattern,
        brokers=brokers,
        replication_factor=rf,
        throttle_bytes_per_s=throttle,
        batch_size=batch_size,
        time_budget_minutes=budget,
        form=form.dag_id if form is not None else "",
        source_plan_id=source,
        approve_in_ui=approve,
        detected=detected,
    )
    if plan_id is not None:
        _check_stored_plan(request, plan_id, stored)
    elif source is not None:
        _check_source_plan(request, source, stored)
    return request


# -- one check per Param ------------------------------------------------------------------------------


def reject_unknown(params: Mapping[Any, Any], allowed: frozenset[str]) -> None:
    """A Param the DAG does not have is refused, naming the first (keys of any type, as a dict may hold)."""
    unknown = sorted((str(k) for k in params if k not in allowed), key=str)
    if unknown:
        raise ParamError(unknown[0], f"is not a Param of this DAG (its Params: {sorted(allowed)})")


def cluster_param(value: object, settings: Settings) -> ClusterConfig:
    """Param `cluster`: a cluster named in the settings."""
    if not isinstance(value, str) or not value.strip():
        raise ParamError("cluster", f"must name a cluster from the settings, got {shown(value)}")
    try:
        return settings.cluster(value.strip())
    except ConfigError as e:
        raise ParamError("cluster", str(e)) from None


def _action(value: object, actions: tuple[str, ...]) -> Action:
    if value not in actions:
        raise ParamError("action", f"must be one of {list(actions)}, got {shown(value)}")
    return cast(Action, value)


def _unset(value: object) -> bool:
    return value is None or value in ("", [])


def _topics(names: object, pattern: object, action: str, *, required: bool) -> tuple[tuple[str, ...], str | None]:
    if action not in TOPIC_ACTIONS:
        for name, value in (("topics", names), ("topic_pattern", pattern)):
            if not _unset(value):
                raise ParamError(name, f"is not used by action {action}: clear it")
        return (), None
    if names is None:
        names = []
    if not isinstance(names, list) or not all(isinstance(t, str) for t in names):
        raise ParamError("topics", f"must be a list of topic names, got {shown(names)}")
    cleaned = [t.strip() for t in names if t.strip()]  # the form's text area leaves blank lines
    bad = [t for t in cleaned if not _TOPIC_NAME.match(t) or t in (".", "..")]
    if bad:
        raise ParamError(
            "topics", f"{shown(bad[0])} is not a Kafka topic name (letters, digits, '.', '_', '-'; at most 249)"
        )
    twice = sorted(t for t, n in Counter(cleaned).items() if n > 1)
    if twice:
        raise ParamError("topics", f"lists {', '.join(twice)} more than once")
    regex = _pattern(pattern)
    if cleaned and regex is not None:
        raise ParamError("topic_pattern", "give topics or a topic pattern, not both")
    if required and action == "replication_factor" and not cleaned and regex is None:
        raise ParamError("topics", "name at least one topic (or set topic_pattern) to change its replication factor")
    return tuple(cleaned), regex


def _pattern(value: object) -> str | None:
    if _unset(value):
        return None
    if not isinstance(value, str):
        raise ParamError("topic_pattern", f"must be a regular expression, got {shown(value)}")
    if len(value) > MAX_PATTERN_LENGTH:
        raise ParamError(
            "topic_pattern",
            f"is {len(value)} characters long, at most {MAX_PATTERN_LENGTH} are accepted: list the topics in "
            "topics instead",
        )
    try:
        value.encode()
    except UnicodeEncodeError:
        raise ParamError("topic_pattern", f"{shown(value)} is not valid Unicode (a lone surrogate)") from None
    try:
        re.compile(value)
    except (re.error, OverflowError, RecursionError) as e:  # a{4294967296}: OverflowError; deep groups: recursion
        raise ParamError("topic_pattern", f"{shown(value)} is not a valid regular expression: {e}") from None
    return value


def _brokers(value: object, action: str, *, required: bool) -> tuple[int, ...]:
    if action not in BROKER_ACTIONS:
        if not _unset(value):
            raise ParamError("brokers", f"is not used by action {action}: clear it")
        return ()
    value = [] if value is None else value
    if not isinstance(value, list):
        raise ParamError("brokers", f"must be a list of broker ids, e.g. [3], got {shown(value)}")
    bad = [b for b in value if isinstance(b, bool) or not isinstance(b, int) or not 0 <= b <= INT32_MAX]
    if bad:
        raise ParamError("brokers", f"broker ids are whole numbers >= 0 (at most {INT32_MAX}), got {shown(bad[0])}")
    twice = sorted(b for b, n in Counter(value).items() if n > 1)
    if twice:
        raise ParamError("brokers", f"lists broker(s) {twice} more than once")
    if required and action == "decommission" and not value:
        raise ParamError("brokers", "name at least one broker to decommission, e.g. [3]")
    if required and action == "unregister_broker" and len(value) != 1:
        raise ParamError("brokers", f"name the one broker to unregister, e.g. [3], got {shown(value)}")
    return tuple(sorted(value))


def _replication_factor(value: object, action: str, *, required: bool) -> int | None:
    if action != "replication_factor":
        if value is not None:
            raise ParamError("replication_factor", f"is only used by action replication_factor, not {action}: clear it")
        return None
    if value is None:
        if not required:
            return None
        raise ParamError("replication_factor", "required for action replication_factor: the new number of replicas")
    return _positive("replication_factor", value, MAX_REPLICATION_FACTOR)


def _positive(name: str, value: object, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParamError(name, f"must be a whole number, got {shown(value)}")
    if value < 1:
        raise ParamError(name, f"must be at least 1, got {value}")
    if value > maximum:
        raise ParamError(name, f"must be at most {maximum}, got {shown(value)}")
    return value


def _throttle(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < MIN_THROTTLE:
        raise ParamError(
            "throttle_bytes_per_s",
            f"must be at least {MIN_THROTTLE} bytes/s (1 MB/s), or empty for no throttle, got {shown(value)}",
        )
    if value > MAX_THROTTLE:
        raise ParamError("throttle_bytes_per_s", f"must be at most {MAX_THROTTLE} (Kafka's limit), got {shown(value)}")
    return value


def _time_budget(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_BUDGET_MINUTES:
        raise ParamError(
            "time_budget_minutes",
            f"must be a number of minutes > 0 and at most {MAX_BUDGET_MINUTES}, or empty, got {shown(value)}",
        )
    return float(value)


def _plan_id(value: object, dry_run: bool) -> str | None:
    if _unset(value):
        if not dry_run:
            raise ParamError(
                "plan_id",
                "required when dry_run is false: run a dry run first, review its plan, then trigger again "
                "with dry_run false and the plan_id it printed",
            )
        return None
    plan_id = plan_id_param(value)
    if dry_run:
        raise ParamError(
            "plan_id",
            f"is set ({plan_id}) but dry_run is true: to execute that plan set dry_run to false; to make "
            "a new plan, clear plan_id",
        )
    return plan_id


def _source_plan_id(value: object, action: str, *, required: bool) -> str | None:
    if action not in SOURCE_PLAN_ACTIONS:
        if not _unset(value):
            raise ParamError("source_plan_id", f"is only used by actions rollback and finish, not {action}: clear it")
        return None
    if _unset(value):
        if required:
            raise ParamError("source_plan_id", f"required for action {action}: the plan_id of the plan to {action}")
        return None
    try:
        return plan_id_param(value)
    except ParamError as e:
        raise ParamError("source_plan_id", e.problem) from None


def _check_source_plan(request: RemediationRequest, source: str, stored: StoredPlan) -> None:
    """A rollback / finish dry run names a stored reassignment plan of this cluster."""
    try:
        plan = stored(request, source)
    except KafkaOpsError as e:
        raise ParamError(
            "source_plan_id", f"no stored plan {source} for cluster {request.cluster.name!r} ({e})"
        ) from None
    if not plan.reassignments:
        raise ParamError("source_plan_id", f"plan {source} ({plan.kind}) moves no replica: nothing to {request.action}")


def plan_id_param(value: object) -> str:
    """Param `plan_id`: a plan id as a dry run prints it."""
    if not isinstance(value, str) or not _PLAN_ID.match(value.strip()):
        raise ParamError("plan_id", f"{shown(value)} is not a plan id (16 hex digits, as a dry run prints it)")
    return value.strip()


def _check_stored_plan(request: RemediationRequest, plan_id: str, stored: StoredPlan) -> None:
    try:
        plan = stored(request, plan_id)
    except KafkaOpsError as e:
        raise ParamError(
            "plan_id", f"no stored plan {plan_id} for cluster {request.cluster.name!r} ({e}); run a dry run first"
        ) from None
    check_reviewed(request, plan)


def check_reviewed(request: RemediationRequest, plan: Plan) -> None:
    """The reviewed `plan` is one `request` may execute: of its action, and every "what" Param the
    request gives agrees with what the plan was made for. Raises `ParamError` naming the Param."""
    if plan.kind != request.action:
        raise ParamError(
            "plan_id",
            f"plan {plan.plan_id} is a {plan.kind} plan, but action is {request.action}: pick the plan's action",
        )
    _check_agrees(request, plan.plan_id, dict(plan.request))


def _check_agrees(request: RemediationRequest, plan_id: str, planned: dict[str, Any]) -> None:
    """On an execution, every "what" Param given must say what the reviewed plan does: a plan is
    executed as it was reviewed, and a different value means the operator expects another plan."""
    planned_topics = planned.get("topics")
    given: list[tuple[str, object, object]] = []
    if request.topics:
        given.append(("topics", sorted(request.topics), planned_topics))
    if request.brokers:
        key = "exclude_brokers" if request.action == "replica_balance" else "brokers"
        given.append(("brokers", list(request.brokers), planned.get(key)))
    if request.replication_factor is not None:
        given.append(("replication_factor", request.replication_factor, planned.get("replication_factor")))
    if request.source_plan_id is not None:
        given.append(("source_plan_id", request.source_plan_id, planned.get("plan_id")))
    for name, value, in_plan in given:
        if value != in_plan:
            raise ParamError(
                name,
                f"is {value!r}, but plan {plan_id} was made for {in_plan!r}: a plan is executed as it was "
                f"reviewed; clear {name} or make a new plan with a dry run",
            )
    if request.topic_pattern is not None:
        regex = re.compile(request.topic_pattern)
        outside = [t for t in planned_topics or [] if not regex.fullmatch(t)]
        if planned_topics is None or outside:
            raise ParamError(
                "topic_pattern",
                f"{request.topic_pattern!r} does not match the topics of plan {plan_id} "
                f"({'every topic' if planned_topics is None else ', '.join(outside[:5])}): clear it or make a new "
                "plan with a dry run",
            )
