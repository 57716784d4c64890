"""Burrow's v3 read-only API on the web tests' lake, against Burrow's documented response shapes
(linkedin/Burrow wiki "http-request-consumer-group-status" and core/internal/httpserver/structs.go)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from kafka_ops.lake.open import open_lake
from kafka_ops.web.app import build_app
from tests.unit.report import scenario
from tests.unit.web import lakes

# Burrow's documented answer to GET /v3/kafka/(cluster)/consumer/(group)/status (its wiki), quoted
BURROW_STATUS: dict[str, Any] = {
    "error": False,
    "message": "consumer group status returned",
    "status": {
        "cluster": "clustername", "group": "groupname", "status": "WARN", "complete": 1.0,
        "maxlag": {"complete": 1, "current_lag": 0, "end": {"lag": 25, "offset": 2542, "timestamp": 1511780580382},
                   "owner": "", "partition": 0, "start": {"lag": 20, "offset": 2526, "timestamp": 1511200836090},
                   "status": "WARN", "topic": "topicA"},
        "partitions": [],
        "partition_count": 1,
        "totallag": 0,
    },
    "request": {"url": "/v3/kafka/clustername/consumer/groupname/status", "host": "responding.host.example.com"},
}  # fmt: skip
# Burrow's source adds to a partition `client_id` (PartitionStatus) and to an offset `observedAt` (ConsumerOffset)
PARTITION_KEYS = set(BURROW_STATUS["status"]["maxlag"]) | {"client_id"}
OFFSET_KEYS = set(BURROW_STATUS["status"]["maxlag"]["end"]) | {"observedAt"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    root = tmp_path_factory.mktemp("burrow") / "lake"
    lakes.build(root)
    return TestClient(build_app(lakes.settings(root), clock=lambda: lakes.NOW))


def test_cluster_and_consumer_lists(client: TestClient) -> None:
    body = client.get("/v3/kafka").json()
    assert body == {"error": False, "message": "cluster list returned", "clusters": ["c1"],
                    "request": {"url": "/v3/kafka", "host": socket.gethostname()}}  # fmt: skip
    consumers = client.get("/v3/kafka/c1/consumer").json()
    assert consumers["consumers"] == ["analytics", "fresh", "stable"]
    assert consumers["message"] == "consumer list returned" and consumers["error"] is False


def test_status_shape_is_burrows(client: TestClient) -> None:
    body = client.get("/v3/kafka/c1/consumer/stable/status").json()
    assert set(body) == set(BURROW_STATUS) and set(body["status"]) == set(BURROW_STATUS["status"])
    assert body["request"]["url"] == "/v3/kafka/c1/consumer/stable/status"
    status = body["status"]
    assert (status["status"], status["partition_count"], status["totallag"]) == ("ERR", 2, 280)
    assert [p["status"] for p in status["partitions"]] == ["STOP"]  # /status: the partitions not OK
    maxlag = status["maxlag"]
    assert set(maxlag) == PARTITION_KEYS and set(maxlag["end"]) == OFFSET_KEYS
    assert (maxlag["topic"], maxlag["partition"], maxlag["current_lag"]) == ("orders", 0, 280)
    assert (maxlag["owner"], maxlag["client_id"]) == ("/10.0.0.1", "client-a")
    # Burrow's end: the last commit, at its own time, with the lag at that time (80), not the current 280
    assert (maxlag["end"]["offset"], maxlag["end"]["lag"]) == (120, 80)
    assert maxlag["end"]["timestamp"] == int(lakes.scenario.COLLECTIONS["g2"][0].timestamp() * 1000)
    assert set(maxlag["start"]) == OFFSET_KEYS and (maxlag["start"]["offset"], maxlag["start"]["lag"]) == (90, 10)
    assert maxlag["start"]["timestamp"] == int(lakes.scenario.COLLECTIONS["g1"][0].timestamp() * 1000)


def test_lag_lists_every_partition(client: TestClient) -> None:
    status = client.get("/v3/kafka/c1/consumer/stable/lag").json()["status"]
    assert [(p["partition"], p["status"]) for p in status["partitions"]] == [(0, "STOP"), (1, "OK")]
    for p in status["partitions"]:
        assert set(p) == PARTITION_KEYS


def test_unknown_group_is_burrows_notfound(client: TestClient) -> None:
    response = client.get("/v3/kafka/c1/consumer/nobody/status")
    assert response.status_code == 404
    assert response.json()["status"] == {
        "cluster": "c1", "group": "nobody", "status": "NOTFOUND", "complete": 1.0,
        "partitions": [], "partition_count": 0, "maxlag": None, "totallag": 0,
    }  # fmt: skip


def test_unknown_cluster_is_burrows_error(client: TestClient) -> None:
    response = client.get("/v3/kafka/nowhere/consumer")
    assert response.status_code == 404
    body = response.json()
    assert (body["error"], body["message"], body["request"]["url"]) == (True, "cluster not found",
                                                                        "/v3/kafka/nowhere/consumer")  # fmt: skip
    assert client.get("/v3/kafka/nowhere/consumer/g/lag").status_code == 404


def test_a_lake_that_cannot_be_read_is_a_503_in_burrows_error_shape(tmp_path: Path) -> None:
    client = TestClient(build_app(lakes.settings(tmp_path / "nowhere")))
    response = client.get("/v3/kafka/c1/consumer/stable/status")
    assert response.status_code == 503
    assert response.json()["error"] is True and "no lake at" in response.json()["message"]


def test_a_group_id_holding_a_slash_is_reachable(tmp_path: Path) -> None:
    """The server decodes `%2F` before routing: `team%2Fstable/status` must still reach group `team/stable`."""
    lake = scenario.build(open_lake(tmp_path / "lake", "parquet"), analyse=False)
    renamed = {
        t: [{**r, "group_id": f"team/{r['group_id']}"} for r in rows] for t, rows in lakes.group_findings().items()
    }
    scenario.publish_findings(lake, "g4", "group_snapshots", renamed)
    client = TestClient(build_app(lakes.settings(tmp_path / "lake"), clock=lambda: lakes.NOW))
    for sent in ("team%2Fstable", "team/stable"):
        status = client.get(f"/v3/kafka/c1/consumer/{sent}/status").json()["status"]
        assert (status["group"], status["status"]) == ("team/stable", "ERR"), sent
    assert client.get("/v3/kafka/c1/consumer/team%2Fstable/lag").json()["status"]["partition_count"] == 2
    assert client.get("/v3/kafka/c1/consumer/team%2Fnobody/status").json()["status"]["status"] == "NOTFOUND"
    unknown = client.get("/v3/kafka/c1/consumer/team%2Fstable/offsets")
    assert (unknown.status_code, unknown.json()["message"]) == (404, "request not found")
