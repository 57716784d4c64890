"""The consumer groups without members, for the change watch: what the group coordinators notice when a
group's consumers all leave, or all die and their sessions expire.

One ListGroups per broker (each coordinator lists the groups it coordinates), asking only for the
groups in state Empty or Dead (KIP-518's state filter, Kafka 2.6+): a handful of requests whatever
the number of groups, and a list that changes only when a group loses or regains its last member (a
rebalance of a group that keeps members is not a change). The snapshot run such a change starts
collects the group at once, so a group that stopped is rated on Burrow's rules from the first
collection after it stopped, not from the next heartbeat.

A broker that does not answer, or an answer that cannot be decoded, makes the part `UNKNOWN` for this
poll (`change_digest.merged` keeps the previous value): a coordinator that cannot be asked is never a
change of its groups.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

from kafka.errors import KafkaError

from kafka_ops.model.cluster import CollectionIssue
from kafka_ops.sources import change_digest
from kafka_ops.sources.admin import UNREACHABLE

if TYPE_CHECKING:
    from kafka.admin import KafkaAdminClient

log = logging.getLogger(__name__)

MEMBERLESS_STATES = ("Empty", "Dead")
UNDECODABLE = (KeyError, TypeError, ValueError, AttributeError)


def memberless_groups(
    admin: KafkaAdminClient, selected: Callable[[str], bool] = lambda _: True
) -> tuple[Hashable, list[CollectionIssue]]:
    """The ids of the `selected` groups without members, as the part `change_digest.GROUPS_WITHOUT_MEMBERS`,
    and the issues met. Blocking (kafka-python)."""
    brokers = sorted(b.node_id for b in admin._manager.cluster.brokers())
    listed = []
    for broker in brokers:
        try:
            answer = admin.list_groups(broker_ids=[broker], states_filter=list(MEMBERLESS_STATES))
            listed += [str(g["group_id"]) for g in answer]
        except UNREACHABLE as e:  # told by the brokers' own parts (a broker gone), not as a group change
            log.debug("broker %s did not list its groups: %r", broker, e)
            return change_digest.UNKNOWN, []
        except (*UNDECODABLE, KafkaError) as e:
            issue = CollectionIssue(
                f"ListGroups of broker {broker}", f"answer cannot be used: {type(e).__name__}: {e}", "request"
            )
            return change_digest.UNKNOWN, [issue]
    return change_digest.groups_without_members_part(g for g in listed if selected(g)), []
