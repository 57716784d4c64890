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

Nothing is read or rendered on the scrape: a background refresher (`web.refresher`, one daemon thread
per app, started by the first scrape, stopped with the app or after ten idle minutes) lists the commit
logs every `REFRESH_SECONDS` (`LakeCache.views()`, which reads a cluster again only after a new commit),
reads the change watches' documents (`kafka_ops_watch_*`, see `watch_metrics`), renders every profile
and format scraped in the last `WANTED_FOR_S`, and swaps the result in at once (`Ready`). A scrape
serves the latest `Ready`: right after a commit, the previous one until the refresher has caught up
(up to `REFRESH_SECONDS` plus the read and render), its capture times and ages saying so. Only a
scrape with nothing ready renders inline: the first of the process (or after the refresher stopped
idle), and the first of a profile or format not scraped in the last `WANTED_FOR_S`.

What depends on "now" is computed at scrape time: `kafka_ops_up`, the capture times, ages and
staleness (`freshness_metrics`), and which rendering is served: each is keyed by the sources that were
stale when it was rendered, and the refresher renders both the set stale now and the set stale
`LOOKAHEAD` from now, so a source turning stale finds its rendering without it ready. A scrape whose
stale set has no rendering (the refresher fell behind by more than `LOOKAHEAD`) renders it inline.

A lake that cannot be read for any cluster answers 503 with the reason (header and body) and
`kafka_ops_up 0`; one cluster that cannot be read is `kafka_ops_cluster_up{cluster} 0` in a 200. The
refresher's read is the one scraped: a lake that turns unreadable is a 503 after its next cycle, never
the last good rendering. A refresher whose cycle raised, or that has not listed the lake for
`STALLED_AFTER_S` (or three of its intervals plus its longest cycle, if longer), answers the same
503 for every cluster with why, rather than serving what it read last as current.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Query, Response
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder

from kafka_ops.settings import METRICS_PROFILES, WebSettings
from kafka_ops.sources.watch_status import WatchStatusStore
from kafka_ops.web.figures import ClusterFigures, cluster_figures, parts_of
from kafka_ops.web.lake_cache import ClusterView, Fingerprint, LakeCache
from kafka_ops.web.profiles import PROFILES, freshness_metrics, own_metrics
from kafka_ops.web.refresher import Refresher
from kafka_ops.web.watch_metrics import watch_metrics

Clock = Callable[[], datetime]
Encoder = Callable[[Any], bytes]
EOF = b"# EOF\n"
REFRESH_SECONDS = 5.0
"""How often the refresher lists the commit logs: a commit is served at most this long after it lands,
plus its read and render (collections are minutes apart, Prometheus scrapes every 15 s)."""
LOOKAHEAD = timedelta(minutes=1)
"""How far ahead of "now" the refresher renders the sources' staleness (see the module docstring)."""
WANTED_FOR_S = 600.0
"""A profile or format not scraped for this long is no longer rendered by the refresher (its next scrape
renders it inline): one `?profile=` tried by hand does not cost a render per commit for ever."""
STALLED_AFTER_S = 60.0
"""A refresher that has not listed the lake for this long (or three intervals plus its longest cycle) is down."""
Stale = tuple[tuple[str, str, bool], ...]
"""(cluster, source, stale) of every source, as `parts_of` says at some instant."""
Wanted = tuple[str, str]
"""(profile, content type): what a scrape asked for."""


@dataclass(frozen=True)
class Ready:
    """What one refresh read and rendered: the views of one lake fingerprint, their renderings per
    (profile, content type, stale sources), and the change watches' families."""

    views: tuple[ClusterView, ...]
    fingerprint: Fingerprint
    watches: tuple[Metric, ...]
    renderings: Mapping[tuple[str, str, Stale], bytes]
    checked_at: float
    """When (monotonic seconds) the refresh began listing the lake."""
    seconds: float
    """How long the refresh took: listing, reading what changed, rendering."""


class _Families:
    """What prometheus-client's encoders collect from: a fixed list of metric families."""

    def __init__(self, families: Sequence[Metric]) -> None:
        self.families = families

    def collect(self) -> Sequence[Metric]:
        return self.families


class MetricsEndpoint:
    """Serves scrapes from what its refresher made ready from a `LakeCache` (see the module docstring).

    `refresh_seconds` None: no refresher, every scrape refreshes inline (lists the lake, reads what
    changed, renders what is not rendered yet): the cost of a scrape before the refresher, which the
    benchmark's baseline measures. `monotonic` times the refresher (tests give their own)."""

    def __init__(
        self,
        cache: LakeCache,
        web: WebSettings,
        clock: Clock | None = None,
        *,
        refresh_seconds: float | None = REFRESH_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cache = cache
        self.web = web
        self.clock = clock or (lambda: datetime.now(UTC))
        self.monotonic = monotonic
        self.watches = WatchStatusStore(cache.lake.root)
        self._lock = threading.Lock()
        self._wanted: dict[Wanted, tuple[Encoder, float]] = {}  # and when (monotonic) last scraped
        self._refreshing = threading.Lock()
        self._ready: Ready | None = None  # replaced whole under `_refreshing`; read as one reference
        self.refresher = (
            None
            if refresh_seconds is None
            else Refresher(self.refresh, refresh_seconds, name="kafka-ops-metrics-refresher", monotonic=monotonic)
        )

    @property
    def ready(self) -> Ready | None:
        """The latest refresh (None before the first scrape)."""
        return self._ready

    def close(self) -> None:
        """Stop the refresher (the app's shutdown); later scrapes refresh inline."""
        if self.refresher is not None:
            self.refresher.stop()

    def scrape(self, profile: str | None, accept: str | None) -> Response:
        profile = profile or self.web.metrics_profile
        if profile not in PROFILES:
            raise HTTPException(400, f"unknown metrics profile {profile!r}: use one of {list(METRICS_PROFILES)}")
        encoder, content_type = choose_encoder(accept or "")
        wanted = (profile, content_type)
        with self._lock:
            self._wanted[wanted] = (encoder, self.monotonic())
        ready = self._current(wanted)
        now = self.clock()
        down = self._down(ready)
        views: Sequence[ClusterView]
        if down is None:
            ready, body = self._body(ready, wanted, encoder, now)
            views, watches = ready.views, ready.watches
        else:
            views, watches = [ClusterView(c, error=down) for c in self.cache.clusters], ()
            body = _encode(self._figures(views, now), profile, encoder)  # no figures: nothing to wait for
        figures = [cluster_figures(v, now, self.web.metrics_max_age, parts_only=True) for v in views]
        lake_up = any(v.error is None for v in views)
        front = encoder(_Families([*freshness_metrics(figures, now, lake_up), *_errors(views), *watches]))
        if front.endswith(EOF):
            front = front[: -len(EOF)]
        headers = {}
        status = 200
        if not lake_up:
            status = 503
            headers["X-Kafka-Ops-Error"] = _header("; ".join(v.error or "" for v in views))
        return Response(front + body, status, headers=headers, media_type=content_type)

    def refresh(self, only: Wanted | None = None) -> Ready:
        """List the lake, read what changed, read the watches, render every wanted profile and format (`only`:
        that one, the others kept if the lake did not change) as of now and `LOOKAHEAD` from now, and make the
        result the one served."""
        with self._refreshing:
            started = self.monotonic()
            views, fingerprint = self.cache.views()
            watches = watch_metrics(self.watches, self.cache.clusters)  # small documents
            now = self.clock()
            stales = {self._stale(views, at): at for at in (now + LOOKAHEAD, now)}
            previous = self._ready
            recent = self._recent(started)
            same = previous.renderings if previous and previous.fingerprint == fingerprint else {}
            kept = {key: body for key, body in same.items() if key[2] in stales and key[:2] in recent}
            while True:
                wanted = {only: recent[only]} if only else recent
                kept = self._render_missing(views, stales, wanted, kept)
                recent = self._recent(started)
                # a profile first scraped while this refresh rendered is rendered before the swap
                if only is not None or recent.keys() <= wanted.keys():
                    break
            self._ready = Ready(tuple(views), fingerprint, tuple(watches), kept, started, self.monotonic() - started)
            return self._ready

    def _recent(self, now: float) -> dict[Wanted, Encoder]:
        """The profiles and formats scraped in the last `WANTED_FOR_S` seconds (the others are forgotten)."""
        with self._lock:
            self._wanted = {k: (e, at) for k, (e, at) in self._wanted.items() if now - at <= WANTED_FOR_S}
            return {k: e for k, (e, _) in self._wanted.items()}

    def _current(self, wanted: Wanted) -> Ready:
        """The latest `Ready`; refreshed inline when no refresher keeps it current (first scrape, idle restart)."""
        running = self.refresher is not None and self.refresher.ensure_running()
        ready = self._ready
        if running and ready is not None:
            return ready
        return self.refresh(wanted)

    def _down(self, ready: Ready) -> str | None:
        """Why what the refresher left must not be served (its last cycle failed, or it stalled), or None."""
        refresher = self.refresher
        if refresher is None:
            return None
        failure = refresher.failure
        if failure is not None and refresher.failed_at >= ready.checked_at:
            return f"refreshing the metrics from the lake at {self.cache.lake.root} failed: {failure}"
        since = self.monotonic() - ready.checked_at
        if since > max(STALLED_AFTER_S, 3 * (refresher.interval + refresher.longest_cycle_s)):
            return (
                f"the metrics refresher has not listed the lake at {self.cache.lake.root} for {since:.0f} s "
                f"(it lists it every {refresher.interval:g} s): what it read last is not served as current"
            )
        return None

    def _body(self, ready: Ready, wanted: Wanted, encoder: Encoder, now: datetime) -> tuple[Ready, bytes]:
        """The rendering of `wanted` for the sources stale at `now`, rendered inline when none is ready."""
        body = ready.renderings.get((*wanted, self._stale(ready.views, now)))
        if body is not None:
            return ready, body
        with self._refreshing:  # one render, whether this scrape's or the refresher's
            ready = self._ready or ready
            key = (*wanted, self._stale(ready.views, now))
            body = ready.renderings.get(key)
            if body is None:
                body = _encode(self._figures(ready.views, now), wanted[0], encoder)
                ready = replace(ready, renderings={**ready.renderings, key: body})
                self._ready = ready
            return ready, body

    def _render_missing(
        self,
        views: Sequence[ClusterView],
        stales: Mapping[Stale, datetime],
        wanted: Mapping[Wanted, Encoder],
        kept: Mapping[tuple[str, str, Stale], bytes],
    ) -> dict[tuple[str, str, Stale], bytes]:
        out = dict(kept)
        for stale, at in stales.items():
            figures: list[ClusterFigures] | None = None
            for (profile, content_type), encoder in wanted.items():
                if (profile, content_type, stale) not in out:
                    figures = figures if figures is not None else self._figures(views, at)
                    out[(profile, content_type, stale)] = _encode(figures, profile, encoder)
        return out

    def _figures(self, views: Sequence[ClusterView], at: datetime) -> list[ClusterFigures]:
        return [cluster_figures(v, at, self.web.metrics_max_age) for v in views]

    def _stale(self, views: Sequence[ClusterView], at: datetime) -> Stale:
        max_age = self.web.metrics_max_age
        return tuple((v.cluster, s, p.stale) for v in views for s, p in parts_of(v, at, max_age).items())


def _encode(figures: Sequence[ClusterFigures], profile: str, encoder: Encoder) -> bytes:
    return encoder(_Families([*own_metrics(figures), *PROFILES[profile](figures)]))


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
