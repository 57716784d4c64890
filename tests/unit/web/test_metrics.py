"""`/metrics` on a lake written by the real writers: every profile's names, labels and types, the
content negotiation, staleness, the cache, a lake that cannot be read, and the refresher that makes
each commit's rendering ready before the scrape (a lake turning unreadable, a failed or stalled refresh)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from kafka_ops.lake.open import lake_of
from kafka_ops.settings import ClusterConfig
from kafka_ops.sources.watch_status import WatchStatusStore
from kafka_ops.web import lake_cache
from kafka_ops.web.app import build_app
from kafka_ops.web.figures import ClusterFigures
from kafka_ops.web.lake_cache import LakeCache
from kafka_ops.web.metrics import MetricsEndpoint
from kafka_ops.web.profiles import PROFILES
from tests.unit.web import lakes

OPENMETRICS = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
KMINION_CAPTURE = Path(__file__).parents[2] / "fixtures" / "peer-captures" / "kminion-2.3.5-metrics.json"
KMINION_OWN_PROCESS = {
    "kminion_kafka_requests_sent_total", "kminion_kafka_requests_received_total", "kminion_kafka_sent_bytes_total",
    "kminion_kafka_received_bytes_total", "kminion_log_messages_total",
    "kminion_exporter_offset_consumer_records_consumed_total",
}  # fmt: skip
"""KMinion's counters about its own process (its requests, bytes and log lines): nothing of the cluster."""
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(client: TestClient, profile: str | None = None) -> tuple[Samples, dict[str, str]]:
    response = client.get("/metrics", params={"profile": profile} if profile else {})
    assert response.status_code == 200, response.text
    samples: Samples = {}
    types = {}
    for family in text_string_to_metric_families(response.text):
        types[family.name] = family.type
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples, types


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def caught_up(client: TestClient) -> None:
    """Wake the app's metrics refresher and wait until it has listed, read and rendered the lake as it is now."""
    assert client.app.state.metrics.refresher.refreshed(timeout=120)  # type: ignore[attr-defined]


def groups_at(samples: Samples) -> float:
    return value(samples, "kafka_ops_collected_timestamp_seconds", cluster="c1", source="groups")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    lakes.build(tmp_path / "lake")
    with TestClient(build_app(lakes.settings(tmp_path / "lake"), clock=lambda: lakes.NOW)) as client:
        yield client  # then the app's shutdown stops its refresher


def test_kafka_lag_exporter_names_and_labels(client: TestClient) -> None:
    samples, types = scrape(client)  # the default profile
    owner = {"cluster_name": "c1", "group": "stable", "topic": "orders", "member_host": "/10.0.0.1",
             "consumer_id": "m-a", "client_id": "client-a"}  # fmt: skip
    assert value(samples, "kafka_consumergroup_group_lag", partition="0", **owner) == 280
    assert value(samples, "kafka_consumergroup_group_offset", partition="0", **owner) == 120
    assert value(samples, "kafka_consumergroup_group_lag_seconds", partition="0", **owner) == 7200
    assert value(samples, "kafka_consumergroup_group_lag", partition="1", **owner) == 0
    group = {"cluster_name": "c1", "group": "stable"}
    assert value(samples, "kafka_consumergroup_group_max_lag", is_simple_consumer="false", **group) == 280
    assert value(samples, "kafka_consumergroup_group_max_lag_seconds", is_simple_consumer="false", **group) == 7200
    assert value(samples, "kafka_consumergroup_group_sum_lag", **group) == 280
    assert value(samples, "kafka_consumergroup_group_topic_sum_lag", topic="orders", **group) == 280
    assert value(samples, "kafka_partition_latest_offset", cluster_name="c1", topic="orders", partition="0") == 400
    assert {types[n] for n in types if n.startswith("kafka_")} == {"gauge"}


def test_kminion_names_and_labels(client: TestClient) -> None:
    samples, _ = scrape(client, "kminion")
    g = {"cluster": "c1", "group_id": "stable"}
    assert value(samples, "kminion_kafka_consumer_group_topic_partition_lag", topic_name="orders", partition_id="0",
                 **g) == 280  # fmt: skip
    assert value(samples, "kminion_kafka_consumer_group_topic_lag", topic_name="orders", **g) == 280
    assert value(samples, "kminion_kafka_consumer_group_topic_offset_sum", topic_name="orders", **g) == 170
    assert value(samples, "kminion_kafka_consumer_group_members", **g) == 2
    assert value(samples, "kminion_kafka_consumer_group_info", protocol="range", protocol_type="consumer",
                 state="Stable", coordinator_id="2", **g) == 1  # fmt: skip
    # KMinion's per-topic assignment series, with its label sets (plus cluster), as KMinion 2.3.5 serves them
    assert value(samples, "kminion_kafka_consumer_group_topic_assigned_partitions", topic_name="orders", **g) == 3
    assert value(samples, "kminion_kafka_consumer_group_topic_members", topic_name="orders", **g) == 2
    analytics = {"cluster": "c1", "group_id": "analytics"}
    assert value(samples, "kminion_kafka_consumer_group_topic_members", topic_name="orders", **analytics) == 1
    # KMinion emits empty_members only above 0: analytics has a member holding nothing, stable none
    assert value(samples, "kminion_kafka_consumer_group_empty_members", **analytics) == 1
    assert not [
        k for k in samples if k[0] == "kminion_kafka_consumer_group_empty_members" and ("group_id", "stable") in k[1]
    ]
    assert value(samples, "kminion_kafka_topic_high_water_mark_sum", cluster="c1", topic_name="orders") == 450
    assert not any(name.startswith("kafka_consumergroup") for name, _ in samples)


def test_kminion_cluster_broker_topic_and_log_dir_series(client: TestClient) -> None:
    """KMinion's series about the cluster from the metadata snapshot (s4: brokers 1 and 2 serve, 1 the
    controller; ZooKeeper, so no version) and the log start offsets from the group collection."""
    samples, _ = scrape(client, "kminion")
    c = {"cluster": "c1"}
    info = {"cluster_version": "", "broker_count": "2", "controller_id": "1", "cluster_id": lakes.CLUSTER_ID}
    assert value(samples, "kminion_kafka_cluster_info", **info, **c) == 1
    for broker, rack, controller in ((1, "rack-a", "true"), (2, "rack-b", "false")):
        address = {"broker_id": str(broker), "address": "127.0.0.1", "port": str(9000 + broker), "rack_id": rack}
        assert value(samples, "kminion_kafka_broker_info", is_controller=controller, **address, **c) == 1
        # every replica's bytes, a future one (moving between log dirs) included, as DescribeLogDirs lists them
        size = value(samples, "kminion_kafka_broker_log_dir_size_total_bytes", **address, **c)
        assert size == lakes.BROKER_BYTES[broker]
    assert len([k for k in samples if k[0] == "kminion_kafka_broker_info"]) == 2  # broker 3 is down
    orders = {"topic_name": "orders", "partition_count": "3", "replication_factor": "3"}
    assert value(samples, "kminion_kafka_topic_info", cleanup_policy="delete", **orders, **c) == 1  # Kafka's default
    solo = {"topic_name": "solo", "partition_count": "1", "replication_factor": "1"}
    assert value(samples, "kminion_kafka_topic_info", cleanup_policy="compact", **solo, **c) == 1  # its override
    sizes = {dict(k[1])["topic_name"]: v for k, v in samples.items() if k[0].endswith("topic_log_dir_size_total_bytes")}
    assert sizes == {"orders": sum(lakes.BROKER_BYTES.values())}  # solo's only replica is on broker 3, down
    for (topic, partition), start in lakes.START_OFFSETS.items():
        low = {"topic_name": topic, "partition_id": str(partition)}
        assert value(samples, "kminion_kafka_topic_partition_low_water_mark", **low, **c) == start
    assert value(samples, "kminion_kafka_topic_low_water_mark_sum", topic_name="orders", **c) == 100


def test_kminion_serves_every_cluster_series_of_the_real_kminion_with_its_labels(client: TestClient) -> None:
    """Every name the real KMinion 2.3.5 served about a live cluster's state (tests/fixtures/peer-captures),
    each with KMinion's label set plus `cluster`; beyond them only `empty_members`, which KMinion serves
    only above 0 (no member of the captured groups was empty)."""
    captured: dict[str, set[frozenset[str]]] = {}
    for name, labels, _ in json.loads(KMINION_CAPTURE.read_text())["samples"]:
        captured.setdefault(name, set()).add(frozenset(labels) | {"cluster"})
    samples, _ = scrape(client, "kminion")
    served: dict[str, set[frozenset[str]]] = {}
    for name, labels in samples:
        if name.startswith("kminion_"):
            served.setdefault(name, set()).add(frozenset(k for k, _ in labels))
    about_the_cluster = {name: sets for name, sets in captured.items() if name not in KMINION_OWN_PROCESS}
    assert len(about_the_cluster) == 17
    assert {name: served.get(name) for name in about_the_cluster} == about_the_cluster
    assert set(served) - set(captured) == {"kminion_kafka_consumer_group_empty_members"}


def test_burrow_names_labels_and_codes(client: TestClient) -> None:
    """Burrow 1.9.5's series and label sets (plus nothing: Burrow has its own `cluster` label): a group's
    status code and total lag, every evaluated partition's lag, and a partition's committed offset and
    status code only once its window is complete, as Burrow serves them."""
    samples, _ = scrape(client, "burrow")
    stable, analytics = {"cluster": "c1", "consumer_group": "stable"}, {"cluster": "c1", "consumer_group": "analytics"}
    assert value(samples, "burrow_kafka_consumer_status", **stable) == 3  # ERR
    assert value(samples, "burrow_kafka_consumer_status", **analytics) == 1  # OK
    assert value(samples, "burrow_kafka_consumer_lag_total", **stable) == 280
    assert value(samples, "burrow_kafka_consumer_partition_lag", topic="orders", partition="0", **stable) == 280
    # stable's windows are not full (0.4): no offset nor status yet, as Burrow; analytics' are
    offsets = {
        dict(labels)["consumer_group"] for name, labels in samples if name == "burrow_kafka_consumer_current_offset"
    }
    assert offsets == {"analytics"}
    assert value(samples, "burrow_kafka_consumer_current_offset", topic="orders", partition="0", **analytics) == 400
    assert value(samples, "burrow_kafka_topic_partition_status", topic="orders", partition="0", **analytics) == 1
    assert value(samples, "burrow_kafka_topic_partition_offset", cluster="c1", topic="orders", partition="0") == 400
    names = {name for name, _ in samples if name.startswith("burrow_")}
    assert names == {"burrow_kafka_consumer_status", "burrow_kafka_consumer_lag_total",
                     "burrow_kafka_consumer_partition_lag", "burrow_kafka_consumer_current_offset",
                     "burrow_kafka_topic_partition_status", "burrow_kafka_topic_partition_offset"}  # fmt: skip


def test_kafka_exporter_names_and_labels(client: TestClient) -> None:
    samples, _ = scrape(client, "kafka_exporter")
    g = {"cluster": "c1", "consumergroup": "stable", "topic": "orders"}
    assert value(samples, "kafka_consumergroup_lag", partition="0", **g) == 280
    assert value(samples, "kafka_consumergroup_current_offset", partition="0", **g) == 120
    assert value(samples, "kafka_consumergroup_lag_sum", **g) == 280
    assert value(samples, "kafka_consumergroup_members", cluster="c1", consumergroup="stable") == 2
    tp = {"cluster": "c1", "topic": "orders", "partition": "0"}
    assert value(samples, "kafka_topic_partition_under_replicated_partition", **tp) == 1
    assert value(samples, "kafka_topic_partition_in_sync_replica", **tp) == 2
    assert value(samples, "kafka_topic_partition_replicas", **tp) == 3
    assert value(samples, "kafka_topic_partition_leader", cluster="c1", topic="solo", partition="0") == -1
    assert value(samples, "kafka_topic_partitions", cluster="c1", topic="orders") == 2


def test_own_metrics_come_with_every_profile(client: TestClient) -> None:
    for profile in ("kafka-lag-exporter", "kminion", "kafka_exporter", "burrow"):
        samples, _ = scrape(client, profile)
        assert value(samples, "kafka_ops_up") == 1
        assert value(samples, "kafka_ops_cluster_up", cluster="c1") == 1
        assert value(samples, "kafka_ops_partition_status_code", cluster="c1", group="stable", topic="orders",
                     partition="0") == 4  # STOP  # fmt: skip
        assert value(samples, "kafka_ops_group_status_code", cluster="c1", group="stable") == 3  # ERR
        assert value(samples, "kafka_ops_partition_lag_seconds", cluster="c1", group="stable", topic="orders",
                     partition="0", method="extrapolated") == 7200  # fmt: skip
        assert value(samples, "kafka_ops_under_replicated_partitions", cluster="c1") == 2
        assert value(samples, "kafka_ops_offline_partitions", cluster="c1") == 1
        assert value(samples, "kafka_ops_controller_epoch", cluster="c1") == 4
        assert value(samples, "kafka_ops_leader_imbalanced_brokers", cluster="c1") == 1
        assert value(samples, "kafka_ops_reassignments_in_flight", cluster="c1") == 1
        assert value(samples, "kafka_ops_reassignments_stuck", cluster="c1") == 1
        groups_at = lakes.scenario.COLLECTIONS["g4"][0]
        assert value(samples, "kafka_ops_collected_timestamp_seconds", cluster="c1", source="groups") == (
            groups_at.timestamp()
        )
        assert value(samples, "kafka_ops_data_age_seconds", cluster="c1", source="groups") == 60
        assert value(samples, "kafka_ops_data_stale", cluster="c1", source="groups") == 0


def test_content_negotiation_as_prometheus_client(client: TestClient) -> None:
    plain = client.get("/metrics")
    assert plain.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert not plain.text.endswith("# EOF\n")
    open_metrics = client.get("/metrics", headers={"Accept": OPENMETRICS})
    assert open_metrics.headers["content-type"].startswith("application/openmetrics-text; version=1.0.0")
    assert open_metrics.text.endswith("# EOF\n") and open_metrics.text.count("# EOF") == 1
    assert "kafka_consumergroup_group_lag{" in open_metrics.text


def test_stale_sources_are_left_out(tmp_path: Path) -> None:
    lakes.build(tmp_path / "lake")
    settings = lakes.settings(tmp_path / "lake")
    client = TestClient(build_app(settings, clock=lambda: lakes.NOW + timedelta(hours=1)))
    samples, _ = scrape(client)
    assert value(samples, "kafka_ops_data_stale", cluster="c1", source="groups") == 1
    assert value(samples, "kafka_ops_data_age_seconds", cluster="c1", source="groups") == 3660
    assert not [name for name, _ in samples if name.startswith("kafka_consumergroup") or "lag" in name]
    assert value(samples, "kafka_ops_cluster_up", cluster="c1") == 1


def test_an_unknown_profile_is_a_400(client: TestClient) -> None:
    response = client.get("/metrics", params={"profile": "jmx_exporter"})
    assert response.status_code == 400
    assert "unknown metrics profile 'jmx_exporter'" in response.text


def test_a_lake_that_cannot_be_read_is_a_503_with_the_reason(tmp_path: Path) -> None:
    client = TestClient(build_app(lakes.settings(tmp_path / "nowhere"), clock=lambda: lakes.NOW))
    response = client.get("/metrics")
    assert response.status_code == 503
    assert "no lake at" in response.headers["x-kafka-ops-error"]
    families = {f.name: f for f in text_string_to_metric_families(response.text)}
    assert [s.value for s in families["kafka_ops_up"].samples] == [0]
    assert [s.value for s in families["kafka_ops_cluster_up"].samples] == [0]
    (error,) = families["kafka_ops_lake_error_info"].samples
    assert error.labels["cluster"] == "c1" and "no lake at" in error.labels["reason"]
    assert "kafka_consumergroup_group_lag{" not in response.text


def test_a_corrupt_batch_is_that_cluster_down_not_a_crash(tmp_path: Path) -> None:
    lake = lakes.build(tmp_path / "lake")
    (offsets,) = Path(lake.base, "group_offsets", "cluster=c1").rglob("g4.parquet")
    offsets.write_bytes(b"not parquet")
    response = TestClient(build_app(lakes.settings(tmp_path / "lake"), clock=lambda: lakes.NOW)).get("/metrics")
    assert response.status_code == 503
    assert "cannot read" in response.headers["x-kafka-ops-error"] and "group_offsets" in response.text


def test_the_lake_is_read_once_per_commit(tmp_path: Path) -> None:
    lake = lakes.build(tmp_path / "lake")
    app = build_app(lakes.settings(tmp_path / "lake"), clock=lambda: lakes.NOW)
    client = TestClient(app)
    first, _ = scrape(client)
    shutil.rmtree(Path(lake.base, "group_members"))  # not a commit log: unseen until the next commit
    second, _ = scrape(client)
    assert second == first
    lakes.scenario.publish_findings(lake, "g3", "group_snapshots", {})  # a new commit (an older analysis)
    caught_up(client)
    third, _ = scrape(client)
    owner = {"cluster_name": "c1", "group": "stable", "topic": "orders", "partition": "0", "member_host": "",
             "consumer_id": "", "client_id": ""}  # fmt: skip
    assert value(third, "kafka_consumergroup_group_lag", **owner) == 280  # read again: no members now


def test_one_unreadable_cluster_leaves_the_others_served(tmp_path: Path) -> None:
    lake = lakes.build(tmp_path / "lake")
    lakes.scenario.publish_findings(lake, "g4", "group_snapshots", lakes.group_findings(), cluster="c2")
    (offsets,) = Path(lake.base, "analysis_runs", "cluster=c2").rglob("g4.analysis.parquet")
    offsets.write_bytes(b"not parquet")
    settings = lakes.settings(tmp_path / "lake")
    settings = dataclasses.replace(settings, clusters=(*settings.clusters, ClusterConfig("c2")))
    response = TestClient(build_app(settings, clock=lambda: lakes.NOW)).get("/metrics")
    assert response.status_code == 200
    samples = {(s.name, tuple(sorted(s.labels.items()))): s for f in text_string_to_metric_families(response.text)
               for s in f.samples}  # fmt: skip
    assert samples[("kafka_ops_up", ())].value == 0
    assert samples[("kafka_ops_cluster_up", (("cluster", "c1"),))].value == 1
    assert samples[("kafka_ops_cluster_up", (("cluster", "c2"),))].value == 0
    (error,) = [s for (name, _), s in samples.items() if name == "kafka_ops_lake_error_info"]
    assert error.labels["cluster"] == "c2" and "g4.analysis.parquet" in error.labels["reason"]
    lags = [s for (name, _), s in samples.items() if name == "kafka_consumergroup_group_lag"]
    assert {s.labels["cluster_name"] for s in lags} == {"c1"} and max(s.value for s in lags) == 280


def test_findings_without_a_needed_column_name_it(tmp_path: Path) -> None:
    lake = lakes.build(tmp_path / "lake")
    findings = lakes.group_findings()
    findings["lag_status_groups"] = [
        {k: v for k, v in r.items() if k != "status"} for r in findings["lag_status_groups"]
    ]
    lakes.scenario.publish_findings(lake, "g4", "group_snapshots", findings)  # the analysis again, an old writer
    response = TestClient(build_app(lakes.settings(tmp_path / "lake"), clock=lambda: lakes.NOW)).get("/metrics")
    assert response.status_code == 503
    assert (
        "lag_status_groups of batch g4.analysis (cluster 'c1', dt=2026-11-21) lacks column(s) ['status']"
        in (response.headers["x-kafka-ops-error"])
    )


def test_each_profile_is_rendered_once_per_commit(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    rendered: list[str] = []
    for name, profile in list(PROFILES.items()):
        monkeypatch.setitem(PROFILES, name, lambda figures, n=name, p=profile: rendered.append(n) or p(figures))
    for _ in range(2):
        for name in ("kafka-lag-exporter", "kminion", "kafka_exporter", "burrow"):
            scrape(client, name)
    assert rendered == ["kafka-lag-exporter", "kminion", "kafka_exporter", "burrow"]


REFRESHER = "kafka-ops-metrics-refresher"


def spy_on_the_lake(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads that list the commit logs, read a cluster or read a watch document, from now on."""
    seen: list[str] = []

    def spied(read: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            seen.append(threading.current_thread().name)
            return read(*args, **kwargs)

        return call

    monkeypatch.setattr(lake_cache, "read_cluster", spied(lake_cache.read_cluster))
    monkeypatch.setattr(LakeCache, "_fingerprint", spied(LakeCache._fingerprint))
    monkeypatch.setattr(WatchStatusStore, "read", spied(WatchStatusStore.read))
    return seen


def test_a_scrape_after_a_commit_reads_nothing_once_the_refresher_caught_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = lakes.build(tmp_path / "lake")
    with TestClient(build_app(lakes.settings(tmp_path / "lake"), clock=lambda: lakes.NOW)) as client:
        before, _ = scrape(client)  # the process' first scrape: read and rendered inline
        reads = spy_on_the_lake(monkeypatch)
        at = lakes.NOW - timedelta(seconds=30)
        lakes.publish_collection(lake, "g5", at)
        caught_up(client)
        assert REFRESHER in reads  # the refresher listed the lake and read the cluster again
        reads.clear()
        after, _ = scrape(client)
        assert [name for name in reads if name != REFRESHER] == []  # nothing on the request path
    assert groups_at(before) == lakes.scenario.COLLECTIONS["g4"][0].timestamp()
    assert groups_at(after) == at.timestamp()
    assert value(after, "kafka_ops_data_age_seconds", cluster="c1", source="groups") == 30


def test_a_new_commit_is_served_once_the_refresher_ran_by_itself(tmp_path: Path) -> None:
    """No one wakes the refresher: it finds the commit on its own listing, and until its rendering is
    ready scrapes serve the previous commit with that commit's capture time and age, never a mix."""
    lake = lakes.build(tmp_path / "lake")
    app = build_app(lakes.settings(tmp_path / "lake"), clock=lambda: lakes.NOW, refresh_seconds=0.05)
    with TestClient(app) as client:
        scrape(client)
        at = lakes.NOW - timedelta(seconds=30)
        lakes.publish_collection(lake, "g5", at)
        served: list[float] = []
        deadline = time.monotonic() + 120
        while not served or served[-1] != at.timestamp():
            assert time.monotonic() < deadline, f"the new commit was not served in 120 s: {served[-3:]}"
            samples, _ = scrape(client)
            served.append(groups_at(samples))
            age = value(samples, "kafka_ops_data_age_seconds", cluster="c1", source="groups")
            assert age == lakes.NOW.timestamp() - served[-1]
            time.sleep(0.01)
    assert set(served) <= {lakes.scenario.COLLECTIONS["g4"][0].timestamp(), at.timestamp()}


def test_a_lake_that_turns_unreadable_is_up_0_not_the_old_figures(tmp_path: Path) -> None:
    lakes.build(tmp_path / "lake")
    with TestClient(build_app(lakes.settings(tmp_path / "lake"), clock=lambda: lakes.NOW)) as client:
        samples, _ = scrape(client)
        assert value(samples, "kafka_ops_up") == 1
        shutil.rmtree(tmp_path / "lake")  # the lake's volume unmounted, say
        caught_up(client)
        response = client.get("/metrics")
    assert response.status_code == 503
    assert "no lake at" in response.headers["x-kafka-ops-error"]
    families = {f.name: f for f in text_string_to_metric_families(response.text)}
    assert [s.value for s in families["kafka_ops_up"].samples] == [0]
    assert [s.value for s in families["kafka_ops_cluster_up"].samples] == [0]
    assert "kafka_consumergroup_group_lag{" not in response.text and "kafka_ops_data_age_seconds{" not in response.text


def test_a_refresh_that_fails_is_a_503_with_why_until_one_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = lakes.build(tmp_path / "lake")
    with TestClient(build_app(lakes.settings(tmp_path / "lake"), clock=lambda: lakes.NOW)) as client:
        scrape(client)

        def broken(figures: list[ClusterFigures]) -> list[Any]:
            if any(f.up for f in figures):
                raise RuntimeError("a profile that cannot render this commit")
            return []

        monkeypatch.setitem(PROFILES, "kafka-lag-exporter", broken)
        lakes.publish_collection(lake, "g5", lakes.NOW - timedelta(seconds=30))
        caught_up(client)
        failed = client.get("/metrics")
        monkeypatch.undo()
        caught_up(client)
        samples, _ = scrape(client)
    assert failed.status_code == 503
    assert "failed: RuntimeError: a profile that cannot render this commit" in failed.headers["x-kafka-ops-error"]
    assert "kafka_ops_up 0.0" in failed.text and "kafka_consumergroup_group_lag{" not in failed.text
    assert value(samples, "kafka_ops_up") == 1
    assert groups_at(samples) == (lakes.NOW - timedelta(seconds=30)).timestamp()


def test_a_refresher_that_stalled_is_a_503_not_what_it_read_last(tmp_path: Path) -> None:
    """A refresher stuck (a listing that never returns) leaves its last rendering: past 60 s without a
    listing it is not served; the next listing serves again."""
    lakes.build(tmp_path / "lake")
    settings = lakes.settings(tmp_path / "lake")
    ticks = [1000.0]
    endpoint = MetricsEndpoint(
        LakeCache(lake_of(settings), ["c1"]), settings.web, lambda: lakes.NOW, refresh_seconds=20,
        monotonic=lambda: ticks[0],
    )  # fmt: skip
    try:
        assert endpoint.scrape(None, None).status_code == 200
        ticks[0] += 59
        assert endpoint.scrape(None, None).status_code == 200
        ticks[0] += 2
        stalled = endpoint.scrape(None, None)
        assert endpoint.refresher is not None and endpoint.refresher.refreshed(timeout=120)
        assert endpoint.scrape(None, None).status_code == 200
    finally:
        endpoint.close()
    assert stalled.status_code == 503
    assert "has not listed the lake" in stalled.headers["x-kafka-ops-error"]
    assert b"kafka_ops_up 0.0" in stalled.body and b"kafka_consumergroup_group_lag{" not in stalled.body


def test_the_refresher_starts_with_the_first_scrape_and_stops_with_the_app(tmp_path: Path) -> None:
    lakes.build(tmp_path / "lake")
    app = build_app(lakes.settings(tmp_path / "lake"), clock=lambda: lakes.NOW)
    with TestClient(app) as client:
        assert app.state.metrics.refresher.thread is None  # nothing runs before a scrape
        scrape(client)
        thread = app.state.metrics.refresher.thread
        assert thread is not None and thread.is_alive() and thread.daemon
    assert not thread.is_alive()


def test_a_profile_not_scraped_for_ten_minutes_is_no_longer_rendered(tmp_path: Path) -> None:
    """One `?profile=` tried by hand does not cost a render per commit for ever."""
    lakes.build(tmp_path / "lake")
    settings = lakes.settings(tmp_path / "lake")
    ticks = [1000.0]
    endpoint = MetricsEndpoint(
        LakeCache(lake_of(settings), ["c1"]), settings.web, lambda: lakes.NOW, refresh_seconds=20,
        monotonic=lambda: ticks[0],
    )  # fmt: skip
    try:
        endpoint.scrape(None, None)
        endpoint.scrape("kminion", None)
        rendered = []
        for at in (1400.0, 1700.0):  # Prometheus goes on scraping the default profile only
            ticks[0] = at
            assert endpoint.refresher is not None and endpoint.refresher.refreshed(timeout=120)
            assert endpoint.scrape(None, None).status_code == 200
            assert endpoint.ready is not None
            rendered.append({profile for profile, _, _ in endpoint.ready.renderings})
    finally:
        endpoint.close()
    assert rendered == [{"kafka-lag-exporter", "kminion"}, {"kafka-lag-exporter"}]  # kminion: 700 s unscraped


def test_a_source_turning_stale_is_left_out_at_once_without_a_render_on_the_scrape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refresher renders the sources stale now and a minute from now: when g4 (collected a minute
    before NOW) passes the 30-minute `metrics_max_age`, its rendering without the groups is ready."""
    lakes.build(tmp_path / "lake")
    now = [lakes.NOW + timedelta(minutes=28, seconds=30)]
    rendered_by: list[str] = []
    profile = PROFILES["kafka-lag-exporter"]

    def spied(figures: list[ClusterFigures]) -> list[Any]:
        rendered_by.append(threading.current_thread().name)
        return profile(figures)

    monkeypatch.setitem(PROFILES, "kafka-lag-exporter", spied)
    with TestClient(build_app(lakes.settings(tmp_path / "lake"), clock=lambda: now[0])) as client:
        fresh, _ = scrape(client)  # the first: rendered inline, for now and for a minute from now
        rendered_by.clear()
        now[0] = lakes.NOW + timedelta(minutes=29, seconds=30)
        stale, _ = scrape(client)
    assert [name for name in rendered_by if name != REFRESHER] == []
    assert value(fresh, "kafka_ops_data_stale", cluster="c1", source="groups") == 0
    assert value(fresh, "kafka_consumergroup_group_lag", cluster_name="c1", group="stable", topic="orders",
                 partition="0", member_host="/10.0.0.1", consumer_id="m-a", client_id="client-a") == 280  # fmt: skip
    assert value(stale, "kafka_ops_data_stale", cluster="c1", source="groups") == 1
    assert value(stale, "kafka_ops_data_age_seconds", cluster="c1", source="groups") == 30.5 * 60
    assert not [name for name, _ in stale if name.startswith("kafka_consumergroup")]


def test_open_incidents_and_the_ones_a_silence_holds_are_served(tmp_path: Path) -> None:
    from kafka_ops.alerting.dispatch import dispatch  # noqa: PLC0415
    from kafka_ops.alerting.log_sink import LogNotifier  # noqa: PLC0415
    from kafka_ops.alerting.silence_store import add_silence  # noqa: PLC0415
    from kafka_ops.silences import new_silence  # noqa: PLC0415
    from tests.unit.alerting.alerts import HOUR, broker_down  # noqa: PLC0415

    root = tmp_path / "lake"
    lakes.build(root)
    now = lakes.NOW
    add_silence(str(root), new_silence("c1", starts_at=now - HOUR, ends_at=now + HOUR, reason="swap", created_by="a",
                                       brokers=[3]), now)  # fmt: skip
    firing = [broker_down("c1", key="no_broker_down", brokers=(3,)), broker_down("c1", key="offline")]
    sink = LogNotifier("log", tmp_path / "o")
    dispatch("c1", firing, now - HOUR / 2, lake_root=str(root), notifiers=[sink], reminder=HOUR)
    with TestClient(build_app(lakes.settings(root), clock=lambda: now)) as client:
        samples, _ = scrape(client)
    assert value(samples, "kafka_ops_alert_firing", cluster="c1", key="offline", severity="critical") == 1
    assert value(samples, "kafka_ops_alert_firing", cluster="c1", key="no_broker_down", severity="critical") == 1
    assert value(samples, "kafka_ops_alert_silenced", cluster="c1", key="no_broker_down", severity="critical") == 1
    assert (
        "kafka_ops_alert_silenced",
        (("cluster", "c1"), ("key", "offline"), ("severity", "critical")),
    ) not in samples
    assert value(samples, "kafka_ops_silences_active", cluster="c1") == 1
    assert value(samples, "kafka_ops_alerts_firing", cluster="c1", severity="critical") == 2


def test_remediation_plans_per_lifecycle_state_and_the_oldest_awaiting_approval(tmp_path: Path) -> None:
    from kafka_ops.remediation import AuditLog, save_plan  # noqa: PLC0415
    from tests.unit.remediation.clusters import rf2_plan  # noqa: PLC0415

    root = tmp_path / "lake"
    lakes.build(root)
    lake = lake_of(lakes.settings(root))
    waiting = dataclasses.replace(rf2_plan(), cluster="c1", plan_id="00000000000000a1")
    planned = dataclasses.replace(rf2_plan(), cluster="c1", plan_id="00000000000000a2")
    for plan in (waiting, planned):
        save_plan(lake, plan, created_by="ana", created_at=lakes.NOW - timedelta(hours=1))
    AuditLog(lake, waiting, "admin_api", "ana").record("approve", "requested", at=lakes.NOW - timedelta(minutes=10))
    with TestClient(build_app(lakes.settings(root), clock=lambda: lakes.NOW)) as client:
        samples, _ = scrape(client)
    assert value(samples, "kafka_ops_remediations", cluster="c1", state="awaiting_approval") == 1
    assert value(samples, "kafka_ops_remediations", cluster="c1", state="planned") == 1
    assert value(samples, "kafka_ops_remediations", cluster="c1", state="done") == 0
    assert value(samples, "kafka_ops_remediation_awaiting_approval_seconds", cluster="c1") == 600
