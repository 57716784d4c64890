"""The parts of a KRaft snapshot beside brokers, topics and the quorum: finalized features, dynamic
configs, which brokers Kafka cordons, client quotas and ACL counts, in the same shapes the ZooKeeper
source gives them.

Each reader sends a fixed number of requests (one per broker for broker configs), whatever the
number of topics; topic configs come with the partition pages (one DescribeConfigs per page, sent
by the collector while it walks the pages: `topic_configs.request`, read by `read_configs`). A
broker that does not serve one of them raises kafka-python's error, which the collector records as
a `CollectionIssue`.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from kafka.admin import (
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ConfigResource,
    ConfigResourceType,
    KafkaAdminClient,
    ResourcePatternFilter,
    ResourceType,
)
from kafka.admin._configs import ConfigSourceType
from kafka.errors import KafkaError, SecurityDisabledError
from kafka.protocol.admin.client_quotas import DescribeClientQuotasRequest

from kafka_ops.model.cluster import (
    AclResource,
    ClusterSnapshot,
    CollectionIssue,
    ConfigOverride,
    FeatureZnode,
    QuotaConfig,
)
from kafka_ops.sources.admin import settled
from kafka_ops.sources.kraft.topic_configs import topic_overrides

DEFAULT_ENTITY = "<default>"
CORDONED_LOG_DIRS = "cordoned.log.dirs"
"""KIP-1066 (Kafka 4.3+): log dirs that take no new replica; `*` is every one of the broker's."""
_DYNAMIC_BROKER = ConfigSourceType.DYNAMIC_BROKER_CONFIG.value
_DYNAMIC_DEFAULT_BROKER = ConfigSourceType.DYNAMIC_DEFAULT_BROKER_CONFIG.value
_CORDON_KEYS = {CORDONED_LOG_DIRS, "log.dirs", "log.dir"}
"""What `cordons_every_log_dir` reads of a broker's configs."""
# AclAuthorizer's znode names for resource types, so both sources fill `acls` alike
_RESOURCE_NAMES = {
    ResourceType.TOPIC: "Topic",
    ResourceType.GROUP: "Group",
    ResourceType.CLUSTER: "Cluster",
    ResourceType.TRANSACTIONAL_ID: "TransactionalId",
    ResourceType.DELEGATION_TOKEN: "DelegationToken",
    ResourceType.USER: "User",
}
# DescribeClientQuotas' entity types, as `/config/<type>s` names them
_QUOTA_PATHS = {"user": "users", "client-id": "clients", "ip": "ips"}


def read_features(admin: KafkaAdminClient, snap: ClusterSnapshot) -> None:
    """Finalized features (ApiVersions v3+), `metadata.version` on its own. With ELR finalized
    (`eligible.leader.replicas.version` ≥ 1), a partition reported without ELR has an empty one."""
    finalized = {
        name: {"min_version": levels["finalized"][0], "max_version": levels["finalized"][1]}
        for name, levels in admin.describe_features().items()
        if "finalized" in levels
    }
    snap.feature = FeatureZnode(status=None, features=finalized)
    snap.metadata_version = finalized.get("metadata.version", {}).get("max_version")
    if finalized.get("eligible.leader.replicas.version", {}).get("max_version", 0) >= 1:
        for tp, state in snap.partition_states.items():
            if state.elr is None or state.last_known_elr is None:
                elr, last_known = state.elr or (), state.last_known_elr or ()
                snap.partition_states[tp] = replace(state, elr=elr, last_known_elr=last_known)


def read_configs(admin: KafkaAdminClient, snap: ClusterSnapshot, topic_pending: list[Any]) -> None:
    """Dynamic overrides (entity types `topic` and `broker`), as `/config/topics/<t>` and
    `/config/brokers/<id|<default>>` hold them on ZooKeeper: topic overrides from `topic_pending`
    (the DescribeConfigs the collector sent page by page, still in flight, as `(broker id, future)`:
    each answer is read as it comes and let go, see `topic_configs`; the list is emptied), each
    broker's from that broker, and the cluster-wide default. (Kafka 4 with ELR writes the cluster
    default `min.insync.replicas` itself, so the analysis knows it instead of assuming it.)

    Each broker's answer also sets its `Broker.cordoned` (see `cordons_every_log_dir`), from the
    effective `cordoned.log.dirs` whatever its source (static or dynamic)."""
    manager = admin._manager
    brokers = manager.call_soon(_broker_configs, admin, sorted(snap.brokers))  # answered meanwhile
    overrides, issues = manager.run(_topic_overrides_as_answered, topic_pending)
    snap.configs.extend(overrides)
    snap.issues.extend(issues)
    per_entity: dict[str, dict[str, str]] = defaultdict(dict)
    for name, response in manager.run(lambda: brokers).items():
        if isinstance(response, BaseException):  # a broker going down costs its own configs only
            problem = f"{type(response).__name__}: {response}"
            snap.issues.append(CollectionIssue(f"DescribeConfigs broker {name or DEFAULT_ENTITY}", problem, "request"))
            continue
        for result in response.results:  # read off the response: some 350 configs a broker, a few kept
            broker = result.resource_name
            cordon_keys: dict[str, dict[str, Any]] = {}
            for c in result.configs:
                if c.config_source == _DYNAMIC_BROKER and broker:
                    per_entity[broker][c.name] = c.value
                elif c.config_source == _DYNAMIC_DEFAULT_BROKER:
                    per_entity[DEFAULT_ENTITY][c.name] = c.value
                if c.name in _CORDON_KEYS:
                    cordon_keys[c.name] = {"value": c.value}
            if broker and int(broker) in snap.brokers:
                cordoned = cordons_every_log_dir(cordon_keys)
                snap.brokers[int(broker)] = replace(snap.brokers[int(broker)], cordoned=cordoned)
    for entity in sorted(per_entity):
        snap.configs.append(ConfigOverride("broker", entity, per_entity[entity]))


async def _broker_configs(admin: KafkaAdminClient, broker_ids: list[int]) -> dict[str, Any]:
    """Each broker's configs from that broker, and the cluster-wide default (resource name "", which
    kafka-python's describe_configs refuses to send), all in flight at once: broker name -> the raw
    answer, or the exception in its place."""
    pending = {
        str(b): admin._manager.send(
            admin._describe_configs_request([ConfigResource(ConfigResourceType.BROKER, str(b))], False), node_id=b
        )
        for b in broker_ids
    }
    pending[""] = admin._manager.send(
        admin._describe_configs_request([ConfigResource(ConfigResourceType.BROKER, "")], False)
    )
    return dict(zip(pending, await settled(pending.values()), strict=True))


async def _topic_overrides_as_answered(pending: list[Any]) -> tuple[list[ConfigOverride], list[CollectionIssue]]:
    """`topic_overrides` of each `(broker id, future)`'s answer as it comes, each let go once read (some 40
    config entries a topic: freed while the next answer is awaited, not all at the end)."""
    overrides: list[ConfigOverride] = []
    issues: list[CollectionIssue] = []
    while pending:
        node, future = pending.pop(0)
        found, problems = topic_overrides(await settled([future]), "any broker" if node is None else f"broker {node}")
        overrides.extend(found)
        issues.extend(problems)
    return sorted(overrides, key=lambda o: o.entity_name), issues


def cordons_every_log_dir(configs: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether a broker's DescribeConfigs answer cordons it whole: `cordoned.log.dirs` is `*`, or names
    every dir of its `log.dirs` (else `log.dir`), compared as normalized paths. A broker with some dirs
    cordoned still takes replicas on the others. Kafka enforces the config from metadata.version
    4.3-IV0 (level 30) on; below that it can only be static and is taken as the operator's intent."""
    cordoned = _listed(configs, CORDONED_LOG_DIRS)
    if "*" in cordoned:
        return True
    log_dirs = _listed(configs, "log.dirs") or _listed(configs, "log.dir")
    return bool(cordoned) and bool(log_dirs) and log_dirs <= cordoned


def _listed(configs: Mapping[str, Mapping[str, Any]], key: str) -> set[str]:
    value = (configs.get(key) or {}).get("value") or ""
    return {d if d == "*" else posixpath.normpath(d) for d in (part.strip() for part in value.split(",")) if d}


def read_quotas(admin: KafkaAdminClient, snap: ClusterSnapshot) -> None:
    """Every client-quota entity (DescribeClientQuotas, no filter), named as `/config/changes`
    names it on ZooKeeper (`users/alice/clients/app%202`), so lag findings match them alike."""
    response = admin._manager.run(admin._manager.send, DescribeClientQuotasRequest(components=[], strict=False))
    if response.error_code:
        raise KafkaError(f"DescribeClientQuotas failed: error {response.error_code}: {response.error_message}")
    for entry in response.entries or ():
        names = {e.entity_type: e.entity_name if e.entity_name is not None else DEFAULT_ENTITY for e in entry.entity}
        if not names.keys() <= _QUOTA_PATHS.keys():
            continue  # an entity type this release does not know
        order = [t for t in ("user", "client-id", "ip") if t in names]
        path = "/".join(f"{_QUOTA_PATHS[t]}/{sanitize(names[t])}" for t in order)
        snap.quotas.append(
            QuotaConfig(
                entity_path=path,
                user=names.get("user"),
                client_id=names.get("client-id"),
                ip=names.get("ip"),
                quotas={v.key: v.value for v in entry.values},
            )
        )


def sanitize(name: str) -> str:
    """Kafka's `Sanitizer.sanitize` (a quota entity's znode name): URL encoding, `*` as `%2A`."""
    if name == DEFAULT_ENTITY:
        return name
    return quote(name, safe="").replace("~", "%7E")


def read_acls(admin: KafkaAdminClient, snap: ClusterSnapshot) -> None:
    """ACL entries per resource pattern, counted as on ZooKeeper (no authorizer: none)."""
    everything = ACLFilter(
        principal=None,
        host=None,
        operation=ACLOperation.ANY,
        permission_type=ACLPermissionType.ANY,
        resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY),
    )
    try:
        acls, _ = admin.describe_acls(everything)
    except SecurityDisabledError:
        return
    counted: dict[tuple[str, str, str], list[Any]] = {}
    for acl in acls:
        pattern = acl.resource_pattern
        key = (
            _RESOURCE_NAMES.get(pattern.resource_type, pattern.resource_type.name),
            pattern.pattern_type.name,
            pattern.resource_name,
        )
        allow, deny, principals = counted.setdefault(key, [0, 0, set()])
        counted[key] = [
            allow + (acl.permission_type == ACLPermissionType.ALLOW),
            deny + (acl.permission_type == ACLPermissionType.DENY),
            principals | {acl.principal},
        ]
    for (kind, pattern_type, name), (allow, deny, principals) in sorted(counted.items()):
        snap.acls.append(AclResource(kind, pattern_type, name, allow, deny, len(principals)))
