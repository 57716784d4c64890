from __future__ import annotations

from kafka_ops.remediation.throttles import listed_brokers


def test_listed_brokers_reads_kafkas_throttled_replica_lists() -> None:
    lists = {"leader.replication.throttled.replicas": "0:1,1:2", "follower.replication.throttled.replicas": "0:3"}
    assert listed_brokers(lists, ("t", 0), {1, 3}) == {1, 3}
    assert listed_brokers(lists, ("t", 1), {2, 3}) == {2}
    assert listed_brokers(lists, ("t", 2), {1}) == set()
    assert listed_brokers({"leader.replication.throttled.replicas": "*"}, ("t", 5), {4, 6}) == {4, 6}
