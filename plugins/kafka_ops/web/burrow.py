"""A read-only subset of Burrow's v3 HTTP API, in Burrow's response shapes, from the lake.

Shapes as linkedin/Burrow writes them (core/internal/httpserver/structs.go, kafka.go, and
core/protocol/evaluator.go): every answer has `error`, `message` and `request` {`url`, `host`};

* `GET /v3/kafka`: `clusters`, the configured cluster names ("cluster list returned");
* `GET /v3/kafka/<cluster>/consumer`: `consumers`, the groups of the latest collection ("consumer
  list returned"); an unknown cluster is Burrow's error shape (`error` true, "cluster not found", 404);
* `GET /v3/kafka/<cluster>/consumer/<group>/status` and `/lag` (a group id holding `/` too, sent
  as `%2F` or as is): `status`, Burrow's
  `ConsumerGroupStatus` ("consumer status returned"): cluster, group, status (OK, WARN, ERR),
  complete, partitions (`/status`: those not OK; `/lag`: all), partition_count, maxlag (the
  partition with the largest current lag), totallag. A group Burrow does not know is answered as
  Burrow does: 404, status NOTFOUND, complete 1, no partitions, maxlag null.

The statuses are the `lag_status` detector's (Burrow's rules over sampled collections, see
`kafka_ops.detectors.lag_status`). Where the lake cannot tell what Burrow keeps, a field says so
instead of inventing a value: a partition's `start` (Burrow's oldest stored commit) is null, `end`
is the current commit (`timestamp`: when it was first observed, `observedAt`: the collection's
capture time, both in ms) and `owner`/`client_id` come from the latest group collection. A lake
that cannot be read is Burrow's error shape with a 503 and the reason.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from kafka_ops.web.lake_cache import ClusterView, LakeCache

Row = dict[str, Any]


def request_info(request: Request) -> dict[str, str]:
    return {"url": request.url.path, "host": socket.gethostname()}


def error(request: Request, status_code: int, message: str) -> JSONResponse:
    """Burrow's `httpResponseError`."""
    return JSONResponse({"error": True, "message": message, "request": request_info(request)}, status_code)


def _ms(value: datetime | None) -> int:
    return 0 if value is None else int(value.timestamp() * 1000)


class BurrowApi:
    """Answers the Burrow requests from a `LakeCache`."""

    def __init__(self, cache: LakeCache) -> None:
        self.cache = cache

    def view(self, cluster: str) -> ClusterView | None:
        views, _ = self.cache.views()
        return next((v for v in views if v.cluster == cluster), None)

    def clusters(self, request: Request) -> JSONResponse:
        body = {"error": False, "message": "cluster list returned", "clusters": list(self.cache.clusters)}
        return JSONResponse({**body, "request": request_info(request)})

    def consumers(self, request: Request, cluster: str) -> JSONResponse:
        view = self.view(cluster)
        if view is None:
            return error(request, 404, "cluster not found")
        if view.error is not None:
            return error(request, 503, view.error)
        groups = sorted({r["group_id"] for r in (view.groups.rows("consumer_groups") if view.groups else None) or []})
        body = {"error": False, "message": "consumer list returned", "consumers": groups}
        return JSONResponse({**body, "request": request_info(request)})

    def status(self, request: Request, cluster: str, group: str, *, show_all: bool) -> JSONResponse:
        view = self.view(cluster)
        if view is not None and view.error is not None:
            return error(request, 503, view.error)
        status = group_status(view, group, show_all=show_all) if view is not None else None
        code = 200
        if status is None:
            code = 404
            status = {"cluster": cluster, "group": group, "status": "NOTFOUND", "complete": 1.0, "partitions": [],
                      "partition_count": 0, "maxlag": None, "totallag": 0}  # fmt: skip
        body = {"error": False, "message": "consumer status returned", "status": status}
        return JSONResponse({**body, "request": request_info(request)}, code)


def group_status(view: ClusterView, group: str, *, show_all: bool) -> Row | None:
    """Burrow's `ConsumerGroupStatus` of `group` from the latest group analysis, or None when it has none."""
    analysis = view.group_analysis
    if analysis is None:
        return None
    row = next((r for r in analysis.rows("lag_status_groups") or [] if r["group_id"] == group), None)
    if row is None:
        return None
    owners = _owners(view)
    partitions = [
        _partition(p, analysis.captured_at, owners)
        for p in sorted(analysis.rows("lag_status_partitions") or [], key=lambda p: (p["topic"], p["partition"]))
        if p["group_id"] == group
    ]
    maxlag = None
    for p in partitions:
        if maxlag is None or p["current_lag"] > maxlag["current_lag"]:
            maxlag = p
    return {
        "cluster": view.cluster,
        "group": group,
        "status": row["status"],
        "complete": float(row.get("complete") or 0.0) if partitions else 0.0,
        "partitions": partitions if show_all else [p for p in partitions if p["status"] != "OK"],
        "partition_count": len(partitions),
        "maxlag": maxlag,
        "totallag": sum(p["current_lag"] for p in partitions),
    }


def _owners(view: ClusterView) -> dict[tuple[str, str, int], tuple[str, str]]:
    owners = {}
    for m in (view.groups.rows("group_members") if view.groups else None) or []:
        for tp in m.get("assigned_partitions") or []:
            owners[(m["group_id"], tp["topic"], tp["partition"])] = (m.get("host") or "", m.get("client_id") or "")
    return owners


def _partition(p: Row, observed: datetime, owners: dict[tuple[str, str, int], tuple[str, str]]) -> Row:
    """Burrow's `PartitionStatus` of one `lag_status_partitions` row: `start` and `end` are the window's
    first and last commits, each with its time and its lag at that time (`lag_status`: from the commit
    log; in a window of samples, when the offset was first observed); findings from before these were
    kept give the current offset as `end` and no `start`."""
    host, client_id = owners.get((p["group_id"], p["topic"], p["partition"]), ("", ""))
    last = p.get("last_commit_offset")
    end = None
    if last is not None:
        end = _offset(last, p.get("last_commit_at"), observed, p.get("last_commit_lag"))
    elif p.get("committed_offset") is not None:
        end = _offset(p["committed_offset"], p.get("last_commit_at"), observed, p.get("lag_end"))
    first = p.get("first_commit_offset")
    start = _offset(first, p.get("first_commit_at"), observed, p.get("lag_start")) if first is not None else None
    return {
        "topic": p["topic"],
        "partition": p["partition"],
        "owner": host,
        "client_id": client_id,
        "status": p["status"],
        "start": start,
        "end": end,
        "current_lag": max(0, p.get("lag") or 0),
        "complete": float(p.get("complete") or 0.0),
    }


def _offset(offset: int, at: datetime | None, observed: datetime, lag: int | None) -> Row:
    """Burrow's `ConsumerOffset`: a commit, its time, when it was seen, and the lag at its time."""
    return {"offset": offset, "timestamp": _ms(at), "observedAt": _ms(observed), "lag": lag or 0}


def router(api: BurrowApi, dependencies: Sequence[Any] = ()) -> APIRouter:
    routes = APIRouter(prefix="/v3/kafka", tags=["Burrow v3 (read-only)"], dependencies=list(dependencies))

    @routes.get("", summary="List clusters")
    def clusters(request: Request) -> JSONResponse:
        return api.clusters(request)

    @routes.get("/{cluster}/consumer", summary="List consumer groups")
    def consumers(request: Request, cluster: str) -> JSONResponse:
        return api.consumers(request, cluster)

    @routes.get("/{cluster}/consumer/{group}/status", summary="Group status: partitions not OK")
    def status(request: Request, cluster: str, group: str) -> JSONResponse:
        return api.status(request, cluster, group, show_all=False)

    @routes.get("/{cluster}/consumer/{group}/lag", summary="Group status: every partition")
    def lag(request: Request, cluster: str, group: str) -> JSONResponse:
        return api.status(request, cluster, group, show_all=True)

    @routes.get("/{cluster}/consumer/{group_and_verb:path}", summary="The same, for a group id holding '/'")
    def slashed(request: Request, cluster: str, group_and_verb: str) -> JSONResponse:
        # the server decodes %2F before routing, so `team%2Forders/status` arrives as team/orders/status:
        # the verb is the last segment, the group all before it
        group, _, verb = group_and_verb.rpartition("/")
        if not group or verb not in ("status", "lag"):
            return error(request, 404, "request not found")
        return api.status(request, cluster, group, show_all=verb == "lag")

    return routes
