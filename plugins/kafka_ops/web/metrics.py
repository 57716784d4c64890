"""`GET /metrics`: the lake's latest figures in the Prometheus text or OpenMetrics format.

The format follows the scrape's `Accept` header as prometheus-client's own handler does
(`choose_encoder`): OpenMetrics for Prometheus' default Accept, the 0.0.4 text format otherwise.
`?profile=` overrides `[web] metrics_profile` for one scrape.

Samples carry no timestamps. Snapshots are minutes apart: a sample stamped with its capture time
is already minutes old when scraped, so PromQL's 5-minute lookback would show gaps between
collections, and Prometheus rejects samples older than its head block and drops out-of-order
ones. Instead each source's capture time is a gauge (`kafka_ops_collected_timestamp_seconds`,
and `kafka_ops_data_age_seconds`), and a source older than `[web] metrics_max_age_minutes` is left
out (`kafka_ops_data_stale` 1), so stale figures are never presented as fresh.

Rendering is cached per (lake fingerprint, profile, format, which sources are stale): between two
commits a scrape renders only the small freshness part (`kafka_ops_up`, ages) and the change watches'
state (`kafka_ops_watch_*`, see `watch_metrics`).
A lake that cannot be read for any cluster answers 503 with the reason (header and body) and
`kafka_ops_up 0`; one cluster that cannot be read is `kafka_ops_cluster_up{cluster} 0` in a 200.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Query, Response
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder

from kafka_ops.settings import METRICS_PROFILES, WebSettings
from kafka_ops.sources.watch_status import WatchStatusStore
from kafka_ops.web.figures import cluster_figures, parts_of
from kafka_ops.web.lake_cache import ClusterView, LakeCache
from kafka_ops.web.profiles import PROFILES, freshness_metrics, own_metrics
from kafka_ops.web.watch_metrics import watch_metrics

Clock = Callable[[], datetime]
EOF = b"# EOF\n"


class _Families:
    """What prometheus-client's encoders collect from: a fixed list of metric families."""

    def __init__(self, families: Sequence[Metric]) -> None:
        self.families = families

    def collect(self) -> Sequence[Metric]:
        return self.families


class MetricsEndpoint:
    """Renders scrapes from a `LakeCache` (see the module docstring)."""

    def __init__(self, cache: LakeCache, web: WebSettings, clock: Clock | None = None) -> None:
        self.cache = cache
        self.web = web
        self.clock = clock or (lambda: datetime.now(UTC))
        self._lock = threading.Lock()
        self._rendered: dict[tuple[object, ...], bytes] = {}
        self.watches = WatchStatusStore(cache.lake.root)

    def scrape(self, profile: str | None, accept: str | None) -> Response:
        profile = profile or self.web.metrics_profile
        if profile not in PROFILES:
            raise HTTPException(400, f"unknown metrics profile {profile!r}: use one of {list(METRICS_PROFILES)}")
        encoder, content_type = choose_encoder(accept or "")
        now = self.clock()
        views, fingerprint = self.cache.views()
        max_age = self.web.metrics_max_age
        stale = tuple((v.cluster, s, p.stale) for v in views for s, p in parts_of(v, now, max_age).items())
        key = (fingerprint, profile, content_type, stale)
        with self._lock:
            body = self._rendered.get(key)
        if body is None:
            figures = [cluster_figures(v, now, max_age) for v in views]
            body = encoder(_Families([*own_metrics(figures), *PROFILES[profile](figures)]))
            with self._lock:
                # every profile and format scraped since the last commit; older renderings go
                self._rendered = {k: v for k, v in self._rendered.items() if k[0] == fingerprint and k[3] == stale}
                self._rendered[key] = body
        else:
            figures = [cluster_figures(v, now, max_age, parts_only=True) for v in views]
        lake_up = any(v.error is None for v in views)
        watches = watch_metrics(self.watches, self.cache.clusters)  # small documents, read on every scrape
        front = encoder(_Families([*freshness_metrics(figures, now, lake_up), *_errors(views), *watches]))
        if front.endswith(EOF):
            front = front[: -len(EOF)]
        headers = {}
        status = 200
        if not lake_up:
            status = 503
            headers["X-Kafka-Ops-Error"] = _header("; ".join(v.error or "" for v in views))
        return Response(front + body, status, headers=headers, media_type=content_type)


def _errors(views: Sequence[ClusterView]) -> list[Metric]:
    family = GaugeMetricFamily(
        "kafka_ops_lake_error_info",
        "1 for each cluster whose batches could not be read, with why.",
        labels=["cluster", "reason"],
    )
    for v in views:
        if v.error is not None:
            family.add_metric([v.cluster, v.error], 1)
    return [family]


def _header(text: str) -> str:
    return text.encode("ascii", "replace").decode().replace("\n", " ")[:1000]


def router(endpoint: MetricsEndpoint, dependencies: Sequence[Any] = ()) -> APIRouter:
    routes = APIRouter(tags=["Prometheus"], dependencies=list(dependencies))

    @routes.get("/metrics", response_class=Response, summary="Prometheus / OpenMetrics exposition")
    def metrics(
        profile: Annotated[str | None, Query(description=f"one of {list(METRICS_PROFILES)}")] = None,
        accept: Annotated[str | None, Header()] = None,
    ) -> Response:
        return endpoint.scrape(profile, accept)

    return routes
