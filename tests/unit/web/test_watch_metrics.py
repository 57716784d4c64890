"""`kafka_ops_watch_*` on `/metrics`: each cluster's change watch as it recorded itself in the lake, read by
the metrics refresher."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from kafka_ops.sources.watch_status import WatchStatus, WatchStatusStore
from kafka_ops.web.app import build_app
from tests.unit.web import lakes
from tests.unit.web.test_metrics import caught_up, scrape, value


def test_a_watch_backing_off_and_one_watching(tmp_path: Path) -> None:
    lakes.build(tmp_path / "lake")
    store = WatchStatusStore(tmp_path / "lake")
    with TestClient(build_app(lakes.settings(tmp_path / "lake"), clock=lambda: lakes.NOW)) as client:
        samples, _ = scrape(client)
        assert not [name for name, _ in samples if name.startswith("kafka_ops_watch")]  # no watch ran yet

        store.write("c1", WatchStatus("backing_off", "2026-11-28T08:00:00+00:00", failures=5, backoff_s=16.0,
                                      error="ZooKeeperUnreachable: no server answered", events=2,
                                      last_event_at="2026-11-28T07:59:00+00:00", issues=1))  # fmt: skip
        caught_up(client)  # the refresher reads the documents, not the scrape
        samples, _ = scrape(client)
        assert value(samples, "kafka_ops_watch_up", cluster="c1") == 0
        assert value(samples, "kafka_ops_watch_failures", cluster="c1") == 5
        assert value(samples, "kafka_ops_watch_backoff_seconds", cluster="c1") == 16
        assert value(samples, "kafka_ops_watch_events", cluster="c1") == 2
        assert value(samples, "kafka_ops_watch_issues", cluster="c1") == 1
        assert (
            value(samples, "kafka_ops_watch_last_event_timestamp_seconds", cluster="c1") == 1795852740
        )  # 2026-11-28T07:59:00Z

        store.write("c1", WatchStatus("watching", "2026-11-28T08:01:00+00:00"))
        caught_up(client)
        samples, _ = scrape(client)
        assert value(samples, "kafka_ops_watch_up", cluster="c1") == 1
        assert value(samples, "kafka_ops_watch_backoff_seconds", cluster="c1") == 0


def test_a_watch_document_that_cannot_be_read_is_said(tmp_path: Path) -> None:
    lakes.build(tmp_path / "lake")
    Path(WatchStatusStore(tmp_path / "lake").path("c1")).parent.mkdir(parents=True)
    Path(WatchStatusStore(tmp_path / "lake").path("c1")).write_text("{not json")
    client = TestClient(build_app(lakes.settings(tmp_path / "lake"), clock=lambda: lakes.NOW))
    response = client.get("/metrics")
    assert response.status_code == 200
    assert 'kafka_ops_watch_status_error_info{cluster="c1"' in response.text
