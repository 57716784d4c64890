"""Typed settings: which clusters to watch, where the lake is. Endpoints and credentials are
not here: they live in Airflow connections, named per cluster.

Read from the TOML file `$KAFKA_OPS_CONFIG` when set, e.g.::

    lake_root = "s3a://kafka-lake/prod"
    lake_format = "delta"           # the default; "parquet": the Parquet lake of earlier versions

    [[clusters]]
    name = "payments"
    zookeeper_conn_id = "zk_payments"
    kafka_conn_id = "kafka_payments"
    tier = "1"                      # optional: how critical, shown and sortable on the fleet page
    owner = "payments-team"         # optional: the team answering for the cluster, on the fleet page
    metadata_source = "auto"        # or "zookeeper" / "kraft" (see ClusterConfig.metadata_source)
    controller_bootstrap_servers = "kc1:9093"  # while a ZooKeeper cluster migrates: its KRaft controllers
    alert_conn_ids = ["slack_payments", "pagerduty_payments"]   # optional, see alerting.registry
    alert_reminder_minutes = 60
    writes_enabled = false          # the remediation executor refuses to write unless true
    remediation_backend = "admin_api"   # or "zookeeper" (see ClusterConfig.remediation_backend)
    auto_remediation = false        # let the analysis DAG elect preferred leaders by itself
    auto_election_after_runs = 3    # ... once leader imbalance persisted for this many analyses
    auto_remediation_approval = false  # ... and only once an approver approved it in the Airflow UI
    approvers = ["ana"]             # Airflow users who may approve plans in the UI (approve_in_ui)
    approver_roles = ["op"]         # ... or every user of these roles (the simple auth manager's)
    approval_timeout_minutes = 240  # a plan nobody answered is rejected after this long
    min_insync_replicas_default = 2 # the brokers' static min.insync.replicas (server.properties)
    cordoned_brokers = [4]          # brokers the planners never add a replica to (they keep theirs)
    [clusters.thresholds]           # optional, see kafka_ops.thresholds
    stuck_reassignment_minutes = 120
    [clusters.capacity]             # optional, see kafka_ops.capacities
    disk_bytes = 2_000_000_000_000

    [web]                           # optional, the api-server plugin (see WebSettings)
    metrics_profile = "kafka-lag-exporter"
    metrics_max_age_minutes = 30

    [[owners]]                      # optional: who owns which topics and groups (see kafka_ops.owners)
    name = "payments-team"
    topics = ["payments\\..*"]
    groups = ["billing-.*"]
    alert_conn_ids = ["slack_payments_team"]

    [lake]                          # optional, retention and maintenance (see kafka_ops.lake.policy)
    keep_snapshots_days = 35
    keep_audit_days = "forever"
    vacuum_retention_hours = 168

With no file, one cluster named `default` uses the `zookeeper_default` and `kafka_default`
connections. `$KAFKA_OPS_LAKE` overrides `lake_root` (default `./var/lake`),
`$KAFKA_OPS_LAKE_FORMAT` overrides `lake_format`, and `$KAFKA_OPS_METRICS_PROFILE` overrides
`[web] metrics_profile`.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal, cast, get_args

from kafka_ops.capacities import Capacities
from kafka_ops.errors import ConfigError, LakeError
from kafka_ops.kafka_types import INT32_MAX, duration_setting, shown, topic_name_problem
from kafka_ops.lake.names import DEFAULT_LAKE_FORMAT, LAKE_FORMATS, LakeFormat, check_name
from kafka_ops.lake.policy import RetentionPolicy
from kafka_ops.owners import Owner, parse_owners
from kafka_ops.thresholds import Thresholds

DEFAULT_LAKE = "var/lake"
_HOST_PORT = re.compile(r"[^\s:,]+:[0-9]{1,5}")
DEFAULT_SCHEDULE = "*/5 * * * *"
RemediationBackend = Literal["admin_api", "zookeeper"]
REMEDIATION_BACKENDS: tuple[str, ...] = get_args(RemediationBackend)
MetadataSource = Literal["auto", "zookeeper", "kraft"]
METADATA_SOURCES: tuple[str, ...] = get_args(MetadataSource)
APPROVER_ROLES = ("viewer", "user", "op", "admin")
"""The simple auth manager's roles, lowest first: a role takes every user of its role or a higher one."""
MetricsProfile = Literal["kafka-lag-exporter", "kminion", "kafka_exporter", "burrow"]
METRICS_PROFILES: tuple[str, ...] = get_args(MetricsProfile)


@dataclass(frozen=True)
class ClusterConfig:
    """One Kafka cluster to watch, by name, and the Airflow connections that reach it."""

    name: str
    zookeeper_conn_id: str = "zookeeper_default"
    kafka_conn_id: str = "kafka_default"
    metadata_source: MetadataSource = "auto"
    """Where the metadata snapshot reads from. "zookeeper": the cluster's znodes (Kafka 3.x on
    ZooKeeper, and 3.9 while it migrates). "kraft": the Admin API and the controller quorum, through
    the Kafka connection (Kafka 4.x, or 3.x in KRaft mode). "auto": ZooKeeper when the cluster's
    ZooKeeper connection exists in Airflow, else KRaft; so a mixed fleet needs no setting."""
    controller_bootstrap_servers: str | None = None
    """While a ZooKeeper cluster migrates to KRaft (3.9): the KRaft controllers' listener, "host:port,..."
    (their `controller.quorum.bootstrap.servers`). The snapshot then asks them for the quorum (its
    health, which brokers registered with it, how far ZooKeeper is behind); without it the migration's
    phase comes from ZooKeeper alone."""
    writes_enabled: bool = False
    """The remediation executor writes to this cluster only when this is true (dry-run otherwise)."""
    groups_include: str | None = None
    """Collect only consumer groups whose id fully matches this regex (default: all)."""
    groups_exclude: str | None = None
    """Skip consumer groups whose id fully matches this regex."""
    thresholds: Thresholds = field(default_factory=Thresholds)
    capacity: Capacities = field(default_factory=Capacities)
    """Brokers' disk and network capacities and the planner's hard limits (`[clusters.capacity]`,
    see `kafka_ops.capacities`)."""
    alert_conn_ids: tuple[str, ...] = ()
    """Airflow connections of this cluster's alert sinks (Slack, PagerDuty, e-mail, log file; see
    `alerting.registry`). Empty: the log sink only, so alerts still leave a trail."""
    alert_reminder_minutes: float = 60.0
    """An incident still firing is sent again after this long without a notification (1 ms to 100 years)."""
    remediation_backend: RemediationBackend = "admin_api"
    """How the remediation executor writes. "admin_api": Kafka's Admin API (AlterPartitionReassignments,
    ElectLeaders, IncrementalAlterConfigs), the supported interface, which can also cancel a
    reassignment. "zookeeper": the `/admin/reassign_partitions` and `/admin/preferred_replica_election`
    znodes and the `/config` entity znodes, as Kafka's ZooKeeper-mode tools wrote them (for clusters
    whose brokers cannot be reached with admin rights); it cannot cancel."""
    remediation_controller_quiet_seconds: float = 300.0
    """The executor refuses to write within this many seconds of a controller change (a new controller
    is still loading state); 1 ms to 100 years. 0 turns the check off: only for test clusters whose
    controller was just elected."""
    auto_remediation: bool = False
    """The analysis DAG may run a preferred-leader election on its own once leader imbalance persisted
    for `auto_election_after_runs` analyses. Needs `writes_enabled`; off by default."""
    auto_remediation_approval: bool = False
    """The automatic election waits for an approver: instead of executing, the analysis DAG starts a
    `kafka_preferred_leader_election` run with `approve_in_ui`, whose plan the cluster's approvers approve or
    reject in the Airflow UI. Needs `auto_remediation` and `approvers` or `approver_roles`."""
    auto_election_after_runs: int = 3
    """How many consecutive analyses must find fixable leader imbalance before an automatic election
    (1 to `INT32_MAX`)."""
    min_insync_replicas_default: int = 1
    """The brokers' static `min.insync.replicas` (their server.properties). ZooKeeper holds only
    dynamic configs, so where neither the topic, the leader's `/config/brokers/<id>` nor
    `/config/brokers/<default>` sets min ISR, the analysis assumes this value (1 = Kafka's default)
    and says so (`isr_health.min_isr_source` = "static"). 1 to `INT32_MAX`, Kafka's int."""
    approvers: tuple[str, ...] = ()
    """Airflow users who may approve this cluster's plans in the Airflow UI (a remediation run with
    `approve_in_ui`): Airflow refuses anyone else's answer, and the execution checks it again."""
    approver_roles: tuple[str, ...] = ()
    """Airflow roles whose users may approve, as the simple auth manager names them (`op` takes `op` and
    `admin`); with another auth manager, name the users in `approvers`."""
    approval_timeout_minutes: float = 240.0
    """A plan nobody approved or rejected within this long is rejected: nothing is written."""
    tier: str | None = None
    """How critical the cluster is ("1", "gold"), as the organisation names its tiers: shown on the fleet page
    (`web.fleet`) and sortable there, never used to decide anything."""
    owner: str | None = None
    """The team that answers for the cluster (its name): shown on the fleet page and sortable there."""
    probe_topic: str | None = None
    """The topic each snapshot probes every broker through: one record produced with acks=all to each of
    its partitions and read back (`sources.probe`). Created by kafka-ops with a partition led by each
    broker only where `writes_enabled`; otherwise create it by hand (the collection issue says how). None:
    no probe."""
    cordoned_brokers: tuple[int, ...] = ()
    """Broker ids the remediation planners never add a replica to (replication factor, decommission,
    replica balance), e.g. a broker about to be serviced. A cordoned broker keeps the replicas it has;
    decommissioning it (or draining it in a balance) is what moves them. Brokers Kafka itself cordons
    (KIP-1066 `cordoned.log.dirs`, Kafka 4.3+ on KRaft) are respected too, without being listed here.
    Preferred-leader elections are not affected."""

    def __post_init__(self) -> None:
        self._check_names()
        try:
            check_name("cluster name", self.name)
        except LakeError as e:
            raise ConfigError(str(e)) from None
        self._check_alerting()
        self._check_approval()
        self._check_remediation()
        self._check_cordons()
        min_isr = self.min_insync_replicas_default
        if isinstance(min_isr, bool) or not isinstance(min_isr, int) or not 1 <= min_isr <= INT32_MAX:
            raise ConfigError(
                f"cluster {self.name!r}: 'min_insync_replicas_default' must be a whole number from 1 to {INT32_MAX} "
                f"(the brokers' server.properties min.insync.replicas), got {shown(min_isr)}"
            )

    def _check_remediation(self) -> None:
        # strict: the string "false" from a hand-edited file must never enable writes
        where = f"cluster {self.name!r}"
        if self.metadata_source not in METADATA_SOURCES:
            raise ConfigError(
                f"{where}: 'metadata_source' must be one of {list(METADATA_SOURCES)}, got {self.metadata_source!r}"
            )
        if not isinstance(self.writes_enabled, bool):
            raise ConfigError(f"{where}: 'writes_enabled' must be true or false, got {self.writes_enabled!r}")
        if self.remediation_backend not in REMEDIATION_BACKENDS:
            raise ConfigError(
                f"{where}: 'remediation_backend' must be one of {list(REMEDIATION_BACKENDS)}, "
                f"got {self.remediation_backend!r}"
            )
        quiet = duration_setting(
            self.remediation_controller_quiet_seconds,
            "seconds",
            f"{where}: 'remediation_controller_quiet_seconds'",
            zero_is_off=True,
        )
        object.__setattr__(self, "remediation_controller_quiet_seconds", quiet)
        if not isinstance(self.auto_remediation, bool):
            raise ConfigError(f"{where}: 'auto_remediation' must be true or false, got {self.auto_remediation!r}")
        runs = self.auto_election_after_runs
        if isinstance(runs, bool) or not isinstance(runs, int) or not 1 <= runs <= INT32_MAX:
            raise ConfigError(
                f"{where}: 'auto_election_after_runs' must be a whole number from 1 to {INT32_MAX}, got {shown(runs)}"
            )
        if not isinstance(self.auto_remediation_approval, bool):
            raise ConfigError(
                f"{where}: 'auto_remediation_approval' must be true or false, got {self.auto_remediation_approval!r}"
            )
        if self.auto_remediation_approval and not (self.approvers or self.approver_roles):
            raise ConfigError(f"{where}: 'auto_remediation_approval' = true needs 'approvers' or 'approver_roles'")
        if self.auto_remediation and not self.writes_enabled:
            # contradictory: the automatic election would only ever be refused
            raise ConfigError(f"{where}: 'auto_remediation' = true needs 'writes_enabled' = true")

    def _check_cordons(self) -> None:
        where = f"cluster {self.name!r}"
        ids = self.cordoned_brokers
        if isinstance(ids, list):  # TOML arrays arrive as lists; the config stays hashable
            object.__setattr__(self, "cordoned_brokers", ids := tuple(ids))
        if not isinstance(ids, tuple) or not all(
            isinstance(b, int) and not isinstance(b, bool) and 0 <= b <= INT32_MAX for b in ids
        ):
            raise ConfigError(
                f"{where}: 'cordoned_brokers' must be a list of broker ids (whole numbers from 0 to {INT32_MAX}), "
                f"got {ids!r}"
            )
        if len(set(ids)) != len(ids):
            raise ConfigError(f"{where}: 'cordoned_brokers' names a broker twice: {list(ids)}")

    def _check_alerting(self) -> None:
        where = f"cluster {self.name!r}"
        ids = self.alert_conn_ids
        if isinstance(ids, list):  # TOML arrays arrive as lists; the config stays hashable
            object.__setattr__(self, "alert_conn_ids", ids := tuple(ids))
        if not isinstance(ids, tuple) or not all(isinstance(i, str) and i.strip() == i and i for i in ids):
            raise ConfigError(f"{where}: 'alert_conn_ids' must be a list of Airflow connection ids, got {ids!r}")
        if len(set(ids)) != len(ids):
            raise ConfigError(f"{where}: 'alert_conn_ids' names a connection twice: {list(ids)}")
        minutes = duration_setting(self.alert_reminder_minutes, "minutes", f"{where}: 'alert_reminder_minutes'")
        object.__setattr__(self, "alert_reminder_minutes", minutes)

    def _check_approval(self) -> None:
        where = f"cluster {self.name!r}"
        for key, what in (("approvers", "user"), ("approver_roles", "role")):
            names = getattr(self, key)
            if isinstance(names, list):  # TOML arrays arrive as lists; the config stays hashable
                object.__setattr__(self, key, names := tuple(names))
            if not isinstance(names, tuple) or not all(isinstance(n, str) and n.strip() == n and n for n in names):
                raise ConfigError(f"{where}: {key!r} must be a list of Airflow {what} names, "
                                  f"got {names!r}")  # fmt: skip
            if len(set(names)) != len(names):
                raise ConfigError(f"{where}: {key!r} names one twice: {list(names)}")
        if not all(r.lower() in APPROVER_ROLES for r in self.approver_roles):
            raise ConfigError(f"{where}: 'approver_roles' must be among {list(APPROVER_ROLES)}, "
                              f"got {list(self.approver_roles)}")  # fmt: skip
        minutes = duration_setting(self.approval_timeout_minutes, "minutes", f"{where}: 'approval_timeout_minutes'")
        object.__setattr__(self, "approval_timeout_minutes", minutes)

    def _check_names(self) -> None:
        """Types first: a value of the wrong type must never reach `check_name`, a regex or a hook."""
        if not isinstance(self.name, str):
            raise ConfigError(f"cluster name must be a string, got {self.name!r}")
        where = f"cluster {self.name!r}"
        for key in ("zookeeper_conn_id", "kafka_conn_id"):
            conn_id = getattr(self, key)
            if not isinstance(conn_id, str) or not conn_id or conn_id.strip() != conn_id:
                raise ConfigError(f"{where}: {key!r} must be an Airflow connection id, got {conn_id!r}")
        servers = self.controller_bootstrap_servers
        if servers is not None and (
            not isinstance(servers, str)
            or not servers.strip()
            or not all(_HOST_PORT.fullmatch(a.strip()) for a in servers.split(","))
        ):
            raise ConfigError(
                f"{where}: 'controller_bootstrap_servers' must be \"host:port\" addresses separated by commas, "
                f"got {servers!r}"
            )
        for key in ("groups_include", "groups_exclude"):
            pattern = getattr(self, key)
            if pattern is None:
                continue
            if not isinstance(pattern, str):
                raise ConfigError(f"{where}: {key!r} must be a regular expression, got {pattern!r}")
            try:
                re.compile(pattern)
            except (re.error, OverflowError, RecursionError) as e:
                raise ConfigError(f"{where}: {key!r} is not a valid regular expression: {e}") from None
        problem = None if self.probe_topic is None else topic_name_problem(self.probe_topic)
        if problem is not None:
            raise ConfigError(f"{where}: 'probe_topic': {problem}")
        for key, example in (("tier", '"1" or "gold"'), ("owner", "a team's name")):
            label = getattr(self, key)
            if label is not None and (not isinstance(label, str) or not label or label.strip() != label):
                raise ConfigError(
                    f"{where}: {key!r} must be a string ({example}) without surrounding spaces, got {shown(label)}"
                )

    @property
    def alert_reminder(self) -> timedelta:
        return timedelta(minutes=self.alert_reminder_minutes)


@dataclass(frozen=True)
class WebSettings:
    """The api-server plugin's endpoints (`kafka_ops.web`): `[web]` in the settings file."""

    metrics_profile: MetricsProfile = "kafka-lag-exporter"
    """Whose metric names `/kafka-ops/metrics` uses besides its own `kafka_ops_*`: "kafka-lag-exporter",
    "kminion", "kafka_exporter" or "burrow" (drop-in for dashboards built on them)."""
    metrics_max_age_minutes: float = 30.0
    """A batch captured longer ago than this is stale: its figures are left out of the metrics (and
    `kafka_ops_data_stale` says so) rather than shown as if they were current. 1 ms to 100 years."""

    def __post_init__(self) -> None:
        if self.metrics_profile not in METRICS_PROFILES:
            raise ConfigError(
                f"[web] 'metrics_profile' must be one of {list(METRICS_PROFILES)}, got {self.metrics_profile!r}"
            )
        age = duration_setting(self.metrics_max_age_minutes, "minutes", "[web] 'metrics_max_age_minutes'")
        object.__setattr__(self, "metrics_max_age_minutes", age)

    @property
    def metrics_max_age(self) -> timedelta:
        return timedelta(minutes=self.metrics_max_age_minutes)


@dataclass(frozen=True)
class Settings:
    lake_root: str = DEFAULT_LAKE
    clusters: tuple[ClusterConfig, ...] = (ClusterConfig("default"),)
    web: WebSettings = field(default_factory=WebSettings)
    lake_format: LakeFormat = DEFAULT_LAKE_FORMAT
    lake: RetentionPolicy = field(default_factory=RetentionPolicy)
    """What the lake keeps and how the maintenance DAG tidies it (`[lake]`)."""
    owners: tuple[Owner, ...] = ()
    """Who owns which topics and groups, and their sinks (`[[owners]]`, see `kafka_ops.owners`)."""

    def __post_init__(self) -> None:
        if self.lake_format not in LAKE_FORMATS:
            raise ConfigError(f"lake_format must be one of {list(LAKE_FORMATS)}, not {self.lake_format!r}")

    def cluster(self, name: str) -> ClusterConfig:
        for cluster in self.clusters:
            if cluster.name == name:
                return cluster
        raise ConfigError(f"no cluster named {name!r} in the settings (have: {[c.name for c in self.clusters]})")

    def owners_on(self, cluster: str) -> tuple[Owner, ...]:
        """The owners of topics or groups on `cluster`, in the file's order."""
        return tuple(o for o in self.owners if o.on(cluster))


def load_settings(path: str | os.PathLike[str] | None = None) -> Settings:
    """Settings from `path`, else `$KAFKA_OPS_CONFIG`, else defaults; then the `$KAFKA_OPS_*` overrides."""
    source = path or os.environ.get("KAFKA_OPS_CONFIG")
    settings = _from_file(Path(source)) if source else Settings()
    lake = os.environ.get("KAFKA_OPS_LAKE")
    if lake:
        settings = replace(settings, lake_root=lake)
    lake_format = os.environ.get("KAFKA_OPS_LAKE_FORMAT")
    if lake_format:
        try:
            settings = replace(settings, lake_format=cast(LakeFormat, lake_format))
        except ConfigError as e:
            raise ConfigError(f"$KAFKA_OPS_LAKE_FORMAT: {e}") from None
    profile = os.environ.get("KAFKA_OPS_METRICS_PROFILE")
    if profile:
        try:
            settings = replace(settings, web=replace(settings.web, metrics_profile=cast(MetricsProfile, profile)))
        except ConfigError as e:
            raise ConfigError(f"$KAFKA_OPS_METRICS_PROFILE: {e}") from None
    return settings


def _from_file(path: Path) -> Settings:
    try:
        raw = tomllib.loads(path.read_text())
    except OSError as e:
        raise ConfigError(f"cannot read settings file {path}: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise ConfigError(f"settings file {path} is not UTF-8 text: {e}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"settings file {path} is not valid TOML: {e}") from e
    except RecursionError:  # tomllib recurses into nested arrays and inline tables
        raise ConfigError(f"settings file {path} nests arrays or tables too deeply to be settings") from None
    _reject_unknown(raw, {"lake_root", "lake_format", "clusters", "web", "lake", "owners"}, f"{path}")
    clusters_raw = raw.get("clusters", [{"name": "default"}])
    if not isinstance(clusters_raw, list) or not clusters_raw:
        raise ConfigError(f"{path}: 'clusters' must be a non-empty list of [[clusters]] tables")
    clusters = [_cluster(entry, f"{path}: clusters[{i}]") for i, entry in enumerate(clusters_raw)]
    names = [c.name for c in clusters]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"{path}: cluster names must be unique, repeated: {duplicates}")
    lake_root = raw.get("lake_root", DEFAULT_LAKE)
    if not isinstance(lake_root, str) or not lake_root:
        raise ConfigError(f"{path}: 'lake_root' must be a path or URL")
    web = _web(raw.get("web", {}), path)
    longest_history = max(c.thresholds.history_hours for c in clusters)
    policy = RetentionPolicy.from_mapping(raw.get("lake", {}), str(path), history_hours=longest_history)
    try:
        owners = parse_owners(raw.get("owners"), names)
        return Settings(
            lake_root, tuple(clusters), web, lake_format=raw.get("lake_format", DEFAULT_LAKE_FORMAT), lake=policy,
            owners=owners,
        )  # fmt: skip
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None


def _cluster(entry: Any, where: str) -> ClusterConfig:
    """One `[[clusters]]` table; every error names `where` (the file and the table's position)."""
    if not isinstance(entry, dict) or "name" not in entry:
        raise ConfigError(f"{where}: each cluster needs a 'name'")
    _reject_unknown(entry, {f.name for f in fields(ClusterConfig)}, where)
    thresholds = entry.pop("thresholds", {})
    if not isinstance(thresholds, dict):
        raise ConfigError(f"{where}.thresholds: expected a table of threshold = number")
    entry["thresholds"] = Thresholds.from_mapping(thresholds, f"{where}.thresholds")
    entry["capacity"] = Capacities.from_mapping(entry.pop("capacity", {}), f"{where}.capacity")
    try:
        return ClusterConfig(**entry)
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None


def _web(raw: Any, path: Path) -> WebSettings:
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: [web] must be a table of settings")
    _reject_unknown(raw, {f.name for f in fields(WebSettings)}, f"{path}: [web]")
    try:
        return WebSettings(**raw)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None


def _reject_unknown(raw: dict[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown setting(s) {unknown} (known: {sorted(known)})")


def snapshot_schedule() -> str:
    """The snapshot DAG's cron schedule: `$KAFKA_OPS_SNAPSHOT_SCHEDULE`, else every 5 minutes."""
    return os.environ.get("KAFKA_OPS_SNAPSHOT_SCHEDULE", DEFAULT_SCHEDULE)
