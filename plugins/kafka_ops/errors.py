"""One exception hierarchy for the whole package.

Every error names what was wrong and where (znode path, topic, partition, field, Param), so an
operator can act on the message alone.
"""

from __future__ import annotations


class KafkaOpsError(Exception):
    """Root of every error this package raises on purpose."""


class ConfigError(KafkaOpsError):
    """A setting, connection or Param is missing or invalid."""


class ZnodeFormatError(KafkaOpsError):
    """A znode's content does not match the format Kafka writes."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class CollectionFailed(KafkaOpsError):
    """A collector could not produce a snapshot at all (unreachable, wrong chroot, auth)."""


class ZooKeeperUnreachable(CollectionFailed):
    """No ZooKeeper server answered within the timeout."""


class ZooKeeperProtocolError(ZooKeeperUnreachable):
    """A ZooKeeper server answered with bytes that are not ZooKeeper's protocol (a cut, empty or
    negative-length frame, a reply to no request, an error code ZooKeeper does not have): the message
    names the server and the request."""


class NotAKafkaChroot(CollectionFailed):
    """The ZooKeeper path holds no Kafka metadata."""


class ZooKeeperAuthFailed(CollectionFailed):
    """ZooKeeper refused the credentials, or they do not grant read access."""


class NotAKRaftCluster(CollectionFailed, ConfigError):
    """The KRaft source was pointed at brokers that run on ZooKeeper (a setting is wrong)."""


class NotZooKeeper(ZooKeeperUnreachable, ConfigError):
    """The ZooKeeper source was pointed at a Kafka listener (a broker or a KRaft controller): a setting is
    wrong, or the cluster runs on KRaft and has no ZooKeeper."""


class KafkaUnreachable(CollectionFailed):
    """No Kafka broker answered (bootstrap, metadata or a request timed out or was refused)."""


class KafkaProtocolError(KafkaUnreachable):
    """A Kafka broker or controller answered with bytes that are not Kafka's protocol, or with an answer
    missing what the request asked for (no topics, no partitions, a null array): the message names the
    peer and the request."""


class SparkUnreachable(KafkaOpsError):
    """The Spark master an analysis is submitted to does not answer: the message names the Airflow
    connection and the endpoints tried."""


class LakeError(KafkaOpsError):
    """The lake cannot be read or written as asked."""


class FormatError(KafkaOpsError):
    """A JSON document kafka-ops reads back (a stored plan, a progress document) is not in the format
    it writes: names the document, the field by its JSON path (`reassignments[3].target[1]`) and what
    was wrong. `what` says which kind of document it is not."""

    what = "not in the expected format"

    def __init__(self, document: str, field: str, problem: str) -> None:
        super().__init__(f"{document}: {self.what}: {f'{field}: ' if field else ''}{problem}")
        self.document = document
        self.field = field
        self.problem = problem


class PlanFormatError(FormatError, LakeError):
    """A stored plan (its `remediation_plans` row, or its JSON) cannot be read back as a `Plan`."""

    what = "not a plan kafka-ops stored (make a new plan with a dry run)"


class ProgressFormatError(FormatError, LakeError):
    """A plan's progress document (`_executions/<cluster>/<plan_id>.json`) is not one the executor wrote."""

    what = "not a progress document this executor wrote"


class JavaToolError(KafkaOpsError):
    """A Java tool kafka-ops needs could not do its part: Maven fetching Kafka's, Delta's or Hadoop's jars
    (`kafka_ops.jars`), or javac building kafka-ops' Java helpers (`kafka_ops.jvm`)."""


class SandboxError(KafkaOpsError):
    """The sandbox cluster could not be started, stopped or reached."""


class PlanError(KafkaOpsError):
    """A remediation request cannot be planned against this snapshot: the message names the
    request field (`topics`, `brokers`, `replication_factor`, ...) and what to change."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


class AlertError(KafkaOpsError):
    """An alert or the stored incident state is invalid (a notifier's connection is a `ConfigError`)."""


class AlertDeliveryFailed(AlertError):
    """A notifier could not deliver a notification (the message names the notifier and the HTTP
    status or SMTP error, never the webhook URL or routing key). `unavailable`: the service did not
    answer usefully even after retries (network error, 429, 5xx), so the rest of the run skips it.
    `report` carries what a dispatch did anyway, when the whole dispatch is reported as failed."""

    def __init__(self, message: str, *, unavailable: bool = False, report: object | None = None) -> None:
        super().__init__(message)
        self.unavailable = unavailable
        self.report = report


class ValidationFailed(KafkaOpsError):
    """Data did not meet its declared expectations; `failed` names them (stable expectation names,
    see `kafka_ops.validation.suites`)."""

    def __init__(self, message: str, failed: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.failed = failed


class SnapshotUntrusted(ValidationFailed):
    """A snapshot batch failed integrity validation, or was never validated: nothing may act on it.
    The message names the cluster, the snapshot and the failed expectations."""

    def __init__(self, cluster: str, snapshot_id: str, failed: tuple[str, ...], problem: str) -> None:
        super().__init__(f"snapshot {snapshot_id} of cluster {cluster} is untrusted: {problem}", failed)
        self.cluster = cluster
        self.snapshot_id = snapshot_id


class HealthGateFailed(ValidationFailed):
    """A health gate failed at a severity the caller refuses; the message names the gates, their
    severity and cause."""


# -- remediation executor (kafka_ops.remediation) -------------------------------------------------


class RemediationError(KafkaOpsError):
    """Applying a remediation plan to a cluster did not go as planned."""


class RemediationRefused(RemediationError):
    """A safety check refused to write (writes disabled, untrusted or stale base snapshot, a
    reassignment in flight, a recent controller change, offline partitions, ...). Nothing was
    written to the cluster; the message names the check, the partitions and what to do."""

    def __init__(self, plan_id: str | None, check: str, problem: str) -> None:
        super().__init__(f"{f'plan {plan_id}: ' if plan_id else ''}refused ({check}): {problem}")
        self.plan_id = plan_id
        self.check = check
        self.problem = problem


class RemediationFailed(RemediationError):
    """A write was rejected, or the cluster did not end up as planned; the message names the plan,
    the batch and the partitions. The execution's progress is kept, so a later run resumes."""


class PlanCancelled(RemediationFailed):
    """The plan was cancelled (by `kafka_ops.remediation.cancel`) while this run executed it: the
    run stopped before its next write. Its progress stays `cancelled`; it is never resumed."""


class ReassignmentStuck(RemediationFailed):
    """A submitted batch made no progress (no ISR change) for longer than allowed. It is still in
    flight: its throttles are kept; run again to keep waiting, or cancel the plan."""
