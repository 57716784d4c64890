"""Snapshot one Kafka cluster's metadata from ZooKeeper with pipelined reads.

The walk keeps a window of reads in flight on one session (`zk_session.ZkReadSession`), so a
snapshot of 100k partitions costs a few round trips of latency instead of 100k. ZooKeeper
answers a session's requests in order, so results are consumed in the order they were sent;
a partition's state is requested as soon as its topic's assignment has been read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from kazoo.exceptions import KazooException, NoAuthError, ZookeeperError

from kafka_ops import redaction
from kafka_ops.errors import (
    NotAKafkaChroot,
    NotZooKeeper,
    ZnodeFormatError,
    ZooKeeperAuthFailed,
    ZooKeeperUnreachable,
)
from kafka_ops.model.cluster import ClusterSnapshot, CollectionIssue, new_snapshot_id
from kafka_ops.sources.zookeeper import znodes
from kafka_ops.sources.zookeeper.session import DENIED, TlsOptions, ZkReadSession

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_WINDOW = 4096
NO_AUTH = "NoAuth: ACL denies read"


@dataclass(frozen=True, slots=True)
class ZooKeeperTarget:
    """Where one cluster's metadata lives: `hosts` (`h1:2181,h2:2181`) and its chroot."""

    hosts: str
    chroot: str = "/"
    digest_auth: tuple[str, str] | None = None
    timeout_s: float = 10.0
    tls: TlsOptions | None = None

    @classmethod
    def parse(cls, connect: str, **kwargs: Any) -> ZooKeeperTarget:
        """Split a `zookeeper.connect` string (`host:port[,host:port]/chroot`)."""
        hosts, slash, chroot = connect.partition("/")
        return cls(hosts=hosts, chroot="/" + chroot.strip("/") if slash else "/", **kwargs)

    @property
    def connect_string(self) -> str:
        return self.hosts + (self.chroot if self.chroot != "/" else "")

    def __post_init__(self) -> None:
        if self.digest_auth is not None:
            redaction.register(self.digest_auth[1])  # kazoo logs its Auth requests (user:password)

    def __repr__(self) -> str:  # never show credentials
        return f"ZooKeeperTarget({self.connect_string!r})"

    def session(self) -> ZkReadSession:
        return ZkReadSession(self.hosts, self.chroot, self.timeout_s, self.digest_auth, self.tls)

    def kazoo_options(self) -> dict[str, Any]:
        """What `KazooClient(**...)` needs to reach this target: hosts with the chroot, session
        timeout, digest login and TLS (for the writers and watchers that use kazoo, not our session)."""
        options: dict[str, Any] = {"hosts": self.connect_string, "timeout": self.timeout_s}
        if self.digest_auth is not None:
            user, password = self.digest_auth
            options["auth_data"] = [("digest", f"{user}:{password}")]
        if self.tls is not None:
            options |= {
                "use_ssl": True,
                "ca": self.tls.ca_file,
                "certfile": self.tls.cert_file,
                "keyfile": self.tls.key_file,
                "verify_certs": True,
                "check_hostname": self.tls.verify_hostname,
            }
        return options


class ZooKeeperCollector:
    """Reads every znode the pipeline needs from one cluster and builds a `ClusterSnapshot`.

    Malformed znodes, and znodes whose ACL denies reading, become `CollectionIssue`s naming
    the path; znodes that vanish mid-walk (a topic deleted, a broker leaving) are skipped. Only
    a cluster that cannot be seen at all (unreachable, wrong chroot, `/brokers` unreadable with
    these credentials) raises a `CollectionFailed`.
    """

    def __init__(self, cluster: str, target: ZooKeeperTarget, window: int = DEFAULT_WINDOW) -> None:
        self.cluster = cluster
        self.target = target
        self.window = window

    def collect(self) -> ClusterSnapshot:
        where = self.target.connect_string
        try:
            session = self.target.session().open()
        except ZooKeeperUnreachable as e:
            _refuse_a_kafka_listener(self.target, e)
            raise
        try:
            return self._collect(session)
        except NoAuthError as e:  # only the root listings raise it: the walk records denied znodes
            raise ZooKeeperAuthFailed(
                f"ZooKeeper at {where} denies reading Kafka's metadata ({e.args[0] if e.args else '/'}: NoAuth; "
                "check the digest credentials and the znodes' ACLs)"
            ) from e
        except (OSError, EOFError, KazooException, ZookeeperError) as e:
            raise ZooKeeperUnreachable(f"lost ZooKeeper at {where} during the snapshot: {e!r}") from e
        finally:
            session.close()

    def _collect(self, session: ZkReadSession) -> ClusterSnapshot:
        captured_at = datetime.now(UTC)
        snap = ClusterSnapshot(
            cluster=self.cluster,
            snapshot_id=new_snapshot_id(self.cluster, captured_at),
            captured_at=captured_at,
            zookeeper=self.target.connect_string,
        )
        if session.children(znodes.TOPICS) is None or session.children(znodes.BROKER_IDS) is None:
            raise NotAKafkaChroot(f"no /brokers under {self.target.connect_string}: is the chroot right?")
        snap.zxid_start = session.last_zxid
        _Walk(session, snap, self.window).run()
        snap.zxid_end = session.last_zxid
        snap.completed_at = datetime.now(UTC)
        return snap


def _refuse_a_kafka_listener(target: ZooKeeperTarget, failure: ZooKeeperUnreachable) -> None:
    """Raise `NotZooKeeper` when a host that did not answer as ZooKeeper answers as Kafka: the cluster's
    ZooKeeper setting names a broker or a KRaft controller (a KRaft cluster has no ZooKeeper at all)."""
    from kafka_ops.sources.kraft.controllers import speaks_kafka  # noqa: PLC0415 - only on a failed connect

    for host, port in target.session().hosts:  # parsed as the session that failed parsed them
        if speaks_kafka(host, port, min(3.0, target.timeout_s)):
            raise NotZooKeeper(
                f"the ZooKeeper setting {target.connect_string!r} names {host}:{port}, a Kafka listener, not "
                "ZooKeeper: point the cluster's ZooKeeper connection at its ensemble, or, for a KRaft cluster "
                '(no ZooKeeper), set metadata_source = "kraft" and read it through its Kafka connection'
            ) from failure


class _Walk:
    """One pipelined pass over the chroot, filling a snapshot."""

    def __init__(self, session: ZkReadSession, snap: ClusterSnapshot, window: int) -> None:
        self.session = session
        self.snap = snap
        self.window = window

    def run(self) -> None:
        children = self._children_of(
            [
                znodes.BROKER_IDS,
                znodes.TOPICS,
                znodes.ISR_CHANGE_NOTIFICATION,
                znodes.LOG_DIR_EVENT_NOTIFICATION,
                znodes.DELETE_TOPICS,
                znodes.CONFIG_TOPICS,
                znodes.CONFIG_BROKERS,
                znodes.CONFIG_CLIENTS,
                znodes.CONFIG_USERS,
                znodes.CONFIG_IPS,
                znodes.CONFIG_CHANGES,
            ]
        )
        singles = [
            znodes.CONTROLLER,
            znodes.CONTROLLER_EPOCH,
            znodes.REASSIGN_PARTITIONS,
            znodes.PREFERRED_REPLICA_ELECTION,
            znodes.CLUSTER_ID,
            znodes.FEATURE,
            znodes.MIGRATION,
        ]
        self._read_singles(singles)
        self._read_brokers(children[znodes.BROKER_IDS])
        self._read_topics_and_states(children[znodes.TOPICS])
        self._read_notifications(children[znodes.ISR_CHANGE_NOTIFICATION], children[znodes.LOG_DIR_EVENT_NOTIFICATION])
        self._read_configs(children[znodes.CONFIG_TOPICS], children[znodes.CONFIG_BROKERS])
        self.snap.pending_topic_deletions = sorted(children[znodes.DELETE_TOPICS])
        self._read_quotas(children[znodes.CONFIG_CLIENTS], children[znodes.CONFIG_USERS], children[znodes.CONFIG_IPS])
        self._read_acls()
        self._read_config_changes(children[znodes.CONFIG_CHANGES])

    # -- pipelining ---------------------------------------------------------------------------

    def _gets(self, items: Iterable[T], path_of: Callable[[T], str] = str) -> Iterator[tuple[T, Any | None]]:
        """`(item, (data, stat) or None when missing)`; a znode its ACL hides is an issue, not a result."""
        for item, result in self.session.pipelined(items, "get", path_of, self.window, denied="yield"):
            if result is DENIED:
                self._issue(path_of(item), NO_AUTH, kind="denied")
            else:
                yield item, result

    def _children_of(self, paths: list[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for path, result in self.session.pipelined(paths, "children", str, self.window, denied="yield"):
            if result is DENIED:
                self._issue(path, NO_AUTH, kind="denied")
            out[path] = result if isinstance(result, list) else []
        return out

    def _issue(self, path: str, problem: str, kind: str = "parse") -> None:
        self.snap.issues.append(CollectionIssue(path=path, problem=problem, kind=kind))

    def _parse(self, parse: Callable[..., R], *args: Any) -> R | None:
        """`parse(*args)`, or None with the problem recorded as a collection issue."""
        try:
            return parse(*args)
        except ZnodeFormatError as e:
            self._issue(e.path, e.problem)
            return None

    # -- readers ------------------------------------------------------------------------------

    def _read_singles(self, paths: list[str]) -> None:
        snap = self.snap
        for path, result in self._gets(paths):
            if result is None:
                continue
            data, zstat = result
            stat = znodes.stat_of(zstat)
            if path == znodes.CONTROLLER:
                snap.controller = self._parse(znodes.parse_controller, path, data, stat)
            elif path == znodes.CONTROLLER_EPOCH:
                snap.controller_epoch = self._parse(znodes.parse_controller_epoch, path, data)
                snap.controller_epoch_stat = stat
            elif path == znodes.REASSIGN_PARTITIONS:
                requests = self._parse(znodes.parse_reassign_partitions, path, data)
                snap.reassignment_requests = requests or []
            elif path == znodes.PREFERRED_REPLICA_ELECTION:
                elections = self._parse(znodes.parse_preferred_election, path, data)
                snap.preferred_election_requests = elections or []
            elif path == znodes.CLUSTER_ID:
                snap.cluster_id = self._parse(znodes.parse_cluster_id, path, data)
            elif path == znodes.FEATURE:
                snap.feature = self._parse(znodes.parse_feature, path, data)
            elif path == znodes.MIGRATION:
                snap.migration = self._parse(znodes.parse_migration, path, data, stat)

    def _read_brokers(self, ids: list[str]) -> None:
        paths = [f"{znodes.BROKER_IDS}/{i}" for i in ids]
        for path, result in self._gets(paths):
            if result is not None:
                data, zstat = result
                broker = self._parse(znodes.parse_broker, path, data, znodes.stat_of(zstat))
                if broker is not None:
                    self.snap.brokers[broker.broker_id] = broker

    def _read_topics_and_states(self, topics: list[str]) -> None:
        """Read topic znodes, and each partition's state as soon as its topic is known."""
        snap = self.snap
        state_requests = self._state_requests(topics)
        for (path, topic, partition), result in self._gets(state_requests, lambda r: r[0]):
            if result is None:
                if topic in snap.topics:  # topic still there, state not (being created?)
                    self._issue(path, "partition state znode is missing", kind="missing")
                continue
            data, zstat = result
            state = self._parse(znodes.parse_partition_state, path, data, znodes.stat_of(zstat), topic, partition)
            if state is not None:
                snap.partition_states[(topic, partition)] = state

    def _state_requests(self, topics: list[str]) -> Iterator[tuple[str, str, int]]:
        for path, result in self._gets([znodes.topic_path(t) for t in topics]):
            if result is None:
                continue  # deleted since the listing
            data = result[0]
            assignment = self._parse(znodes.parse_topic, path, data)
            if assignment is None:
                continue
            self.snap.topics[assignment.topic] = assignment
            for partition in sorted(assignment.partitions):
                yield znodes.state_path(assignment.topic, partition), assignment.topic, partition

    def _read_notifications(self, isr_changes: list[str], log_dir_events: list[str]) -> None:
        snap = self.snap
        isr_paths = [f"{znodes.ISR_CHANGE_NOTIFICATION}/{n}" for n in isr_changes]
        for path, result in self._gets(isr_paths):
            if result is not None:  # the controller deletes what it has read
                data, zstat = result
                note = self._parse(znodes.parse_isr_change, path, data, znodes.stat_of(zstat))
                if note is not None:
                    snap.isr_change_notifications.append(note)
        dir_paths = [f"{znodes.LOG_DIR_EVENT_NOTIFICATION}/{n}" for n in log_dir_events]
        for path, result in self._gets(dir_paths):
            if result is not None:
                data, zstat = result
                event = self._parse(znodes.parse_log_dir_event, path, data, znodes.stat_of(zstat))
                if event is not None:
                    snap.log_dir_events.append(event)

    def _read_configs(self, topics: list[str], brokers: list[str]) -> None:
        paths = [(f"{znodes.CONFIG_TOPICS}/{t}", "topic") for t in topics]
        paths += [(f"{znodes.CONFIG_BROKERS}/{b}", "broker") for b in brokers]
        for (path, kind), result in self._gets(paths, lambda p: p[0]):
            if result is not None:
                data = result[0]
                config = self._parse(znodes.parse_config, path, data, kind)
                if config is not None:
                    self.snap.configs.append(config)

    def _read_quotas(self, clients: list[str], users: list[str], ips: list[str]) -> None:
        """Quota entities: `clients/<c>`, `ips/<ip>`, `users/<u>` and `users/<u>/clients/<c>`."""
        per_user = self._children_of([f"{znodes.CONFIG_USERS}/{u}/clients" for u in users])
        paths = [f"{znodes.CONFIG_CLIENTS}/{c}" for c in clients] + [f"{znodes.CONFIG_IPS}/{i}" for i in ips]
        paths += [f"{znodes.CONFIG_USERS}/{u}" for u in users]
        paths += [f"{parent}/{c}" for parent, names in per_user.items() for c in names]
        for path, result in self._gets(paths):
            if result is None or not result[0]:  # gone, or a user znode that only holds its clients
                continue
            quota = self._parse(znodes.parse_quota_config, path, result[0])
            if quota is not None and (quota.quotas or quota.scram_mechanisms):
                self.snap.quotas.append(quota)

    def _read_acls(self) -> None:
        """ACL resources (`AclAuthorizer`'s znodes): `/kafka-acl/<type>/<name>` and the prefixed ones."""
        types = self._children_of([znodes.ACLS, znodes.PREFIXED_ACLS])
        names = self._children_of([f"{root}/{t}" for root, found in types.items() for t in found])
        paths = [f"{parent}/{n}" for parent, found in names.items() for n in found]
        for path, result in self._gets(paths):
            if result is not None:
                pattern = "PREFIXED" if path.startswith(znodes.PREFIXED_ACLS + "/") else "LITERAL"
                acl = self._parse(znodes.parse_acls, path, result[0], pattern)
                if acl is not None:
                    self.snap.acls.append(acl)

    def _read_config_changes(self, names: list[str]) -> None:
        for path, result in self._gets([f"{znodes.CONFIG_CHANGES}/{n}" for n in names]):
            if result is not None:  # brokers purge them after 15 minutes
                change = self._parse(znodes.parse_config_change, path, result[0], znodes.stat_of(result[1]))
                if change is not None:
                    self.snap.config_changes.append(change)
