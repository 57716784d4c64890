"""The plugin on a real api-server: a real Prometheus scrapes `/kafka-ops/metrics` with a bearer token
(a Viewer's, as docs/operations.md sets Prometheus up) and PromQL gives the lag of a real lagging
group under each profile; a Burrow client's documented calls (httpx, the same read-only token) get
Burrow's shapes for the sandbox's groups.

The group: 100 records on a fresh topic, offset 10 committed by a real consumer that then leaves, a
group collection, 100 more records, a second collection (lag 190), then the real group detectors
(Spark): Burrow's STOP (no new commit while the lag grew) and ERR for the group.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from kafka import KafkaConsumer
from kafka.structs import OffsetAndMetadata, TopicPartition
from pyspark.sql import SparkSession

from kafka_ops.analysis.runner import analyse
from kafka_ops.detectors.registry import GROUP_DETECTORS
from kafka_ops.lake.open import open_lake
from kafka_ops.snapshot.publish import groups_to_lake
from kafka_ops.sources.groups.collector import KafkaTarget
from kafka_ops.thresholds import Thresholds
from sandbox import SandboxCluster
from tests.e2e.airflow_stack import REQUEST_TIMEOUT_S, AirflowUI, wait_until
from tests.e2e.conftest import APPROVED_CLUSTER
from tests.e2e.prometheus import PrometheusServer, ScrapeJob
from tests.integration.java_groups import FAST, make_topics, produce
from tests.unit.web.test_burrow import BURROW_STATUS, OFFSET_KEYS, PARTITION_KEYS

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.slow]

COMMITTED, BURST = 10, 100
LAG = 2 * BURST - COMMITTED
QUERIES = {  # each profile's per-partition lag, by its own names and labels
    "kafka-lag-exporter": 'kafka_consumergroup_group_lag{{group="{group}",topic="{topic}",partition="0"}}',
    "kminion": 'kminion_kafka_consumer_group_topic_partition_lag{{group_id="{group}",topic_name="{topic}",'
    'partition_id="0"}}',
    "kafka_exporter": 'kafka_consumergroup_lag{{consumergroup="{group}",topic="{topic}",partition="0"}}',
    "burrow": 'burrow_kafka_consumer_partition_lag{{consumer_group="{group}",topic="{topic}",partition="0"}}',
}


@dataclass(frozen=True)
class Lagging:
    group: str
    topic: str


@pytest.fixture(scope="module")
def lagging(airflow: AirflowUI, sandbox: SandboxCluster, spark: SparkSession) -> Lagging:
    run = uuid.uuid4().hex[:6]
    group, topic = f"metrics-{run}", f"metrics-{run}"
    make_topics(sandbox, {topic: 1}, messages=BURST)
    consumer = KafkaConsumer(bootstrap_servers=sandbox.bootstrap_servers, group_id=group, enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(COMMITTED, "", -1)})
    finally:
        consumer.close()
    lake, target = open_lake(airflow.lake_root), KafkaTarget(sandbox.bootstrap_servers, FAST)
    groups_to_lake(airflow.cluster, target, lake, include=group)
    produce(sandbox, {(topic, 0): BURST})
    snap, _ = groups_to_lake(airflow.cluster, target, lake, include=group)
    assert [o.lag for o in snap.offsets] == [LAG]
    detectors = [GROUP_DETECTORS["lag_status"], GROUP_DETECTORS["lag_time"]]
    analyse(spark, lake.root, airflow.cluster, detectors, Thresholds())
    return Lagging(group, topic)


@pytest.fixture
def prometheus(airflow: AirflowUI, tmp_path: Path) -> Iterator[PrometheusServer]:
    target = airflow.stack.url.removeprefix("http://")
    jobs = [ScrapeJob(p, target, "/kafka-ops/metrics", {"profile": [p]}) for p in QUERIES]
    server = PrometheusServer(tmp_path / "prometheus", jobs, airflow.stack.viewer_token())  # read-only
    try:
        yield server.start()
    finally:
        server.stop()


def test_prometheus_reads_the_lag_under_each_profile(
    airflow: AirflowUI, lagging: Lagging, prometheus: PrometheusServer
) -> None:
    assert httpx.get(f"{airflow.stack.url}/kafka-ops/metrics", timeout=REQUEST_TIMEOUT_S).status_code == 401  # no token
    for profile, query in QUERIES.items():
        promql = query.format(group=lagging.group, topic=lagging.topic)

        def scraped(promql: str = promql) -> list[dict[str, Any]]:
            return prometheus.query(promql)

        try:
            (series,) = wait_until(scraped, 60, f"Prometheus to scrape {promql}")
        except AssertionError as e:
            raise AssertionError(f"{e}\ntargets: {prometheus.targets()}\n{prometheus.log()}") from None
        assert series["metric"]["job"] == profile
        assert float(series["value"][1]) == LAG, promql
    ups = {u["metric"]["cluster"]: u["value"][1] for u in prometheus.query('kafka_ops_cluster_up{job="kminion"}')}
    assert ups == {airflow.cluster: "1", APPROVED_CLUSTER: "1"}  # both clusters of the settings


def burrow(airflow: AirflowUI, path: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {airflow.stack.viewer_token()}"}
    return httpx.get(f"{airflow.stack.url}/kafka-ops/v3/kafka{path}", headers=headers, timeout=REQUEST_TIMEOUT_S)


def test_burrow_client_calls(airflow: AirflowUI, lagging: Lagging) -> None:
    clusters = burrow(airflow, "").json()
    assert (clusters["error"], clusters["message"], sorted(clusters["clusters"])) == (
        False, "cluster list returned", sorted([airflow.cluster, APPROVED_CLUSTER]),
    )  # fmt: skip
    assert clusters["request"]["url"] == "/kafka-ops/v3/kafka"
    assert lagging.group in burrow(airflow, f"/{airflow.cluster}/consumer").json()["consumers"]

    for endpoint in ("status", "lag"):
        response = burrow(airflow, f"/{airflow.cluster}/consumer/{lagging.group}/{endpoint}")
        assert response.status_code == 200, response.text
        body = response.json()
        assert set(body) == set(BURROW_STATUS) and set(body["status"]) == set(BURROW_STATUS["status"])
        status = body["status"]
        assert (status["status"], status["partition_count"], status["totallag"]) == ("ERR", 1, LAG)
        (partition,) = status["partitions"]
        assert set(partition) == PARTITION_KEYS and set(partition["end"]) == OFFSET_KEYS
        assert (partition["topic"], partition["status"], partition["current_lag"]) == (lagging.topic, "STOP", LAG)
        assert partition["end"]["offset"] == COMMITTED and status["maxlag"] == partition

    unknown = burrow(airflow, f"/{airflow.cluster}/consumer/nobody-{lagging.group}/status")
    assert unknown.status_code == 404 and unknown.json()["status"]["status"] == "NOTFOUND"
    nowhere = burrow(airflow, "/nowhere/consumer")
    assert nowhere.status_code == 404 and nowhere.json()["error"] is True
    assert nowhere.json()["message"] == "cluster not found"
    assert httpx.get(f"{airflow.stack.url}/kafka-ops/v3/kafka", timeout=REQUEST_TIMEOUT_S).status_code == 401
