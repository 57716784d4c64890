"""Set, end and list a cluster's silences (`kafka_ops.silences`), kept in its alert state document
(`state_store.IncidentStore`) under the same lock as its incidents: a silence set while a run dispatches is
in force from the next run on, and neither can overwrite the other."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from kafka_ops.alerting.incidents import ClusterState
from kafka_ops.alerting.state_store import IncidentStore
from kafka_ops.errors import ConfigError
from kafka_ops.silences import Silence, kept

log = logging.getLogger(__name__)


def add_silence(lake_root: str | os.PathLike[str], silence: Silence, at: datetime) -> Silence:
    """Store `silence` (in force from its `starts_at`); returns it."""
    _update(lake_root, silence.cluster, at, lambda silences: (*silences, silence))
    log.info("cluster %s: %s", silence.cluster, silence.describe())
    return silence


def end_silence(lake_root: str | os.PathLike[str], cluster: str, silence_id: str, at: datetime, by: str) -> Silence:
    """End silence `silence_id` of `cluster` at `at` (a problem it covered pages on the next run if it still
    fires); `ConfigError` naming the id when the cluster has no such silence."""
    ended: list[Silence] = []

    def end(silences: tuple[Silence, ...]) -> tuple[Silence, ...]:
        found = [s for s in silences if s.id == silence_id]
        if not found:
            known = ", ".join(s.id for s in silences) or "none"
            raise ConfigError(f"cluster {cluster!r} has no silence {silence_id!r} (its silences: {known})")
        ended[:] = [found[0].ended(at, by)]
        return tuple(ended[0] if s.id == silence_id else s for s in silences)

    _update(lake_root, cluster, at, end)
    log.info("cluster %s: silence %s ended by %s", cluster, silence_id, by)
    return ended[0]


def silences_of(lake_root: str | os.PathLike[str], cluster: str) -> tuple[Silence, ...]:
    """Every silence of `cluster` still kept (active, future, or recently ended), by start."""
    state, _ = IncidentStore(lake_root).load(cluster)
    return state.silences


def _update(
    lake_root: str | os.PathLike[str],
    cluster: str,
    at: datetime,
    change: Callable[[tuple[Silence, ...]], tuple[Silence, ...]],
) -> None:
    store = IncidentStore(lake_root)
    with store.exclusive(cluster):
        state, _ = store.load(cluster)

        def changed(latest: ClusterState) -> ClusterState:
            return replace(latest, silences=kept(change(latest.silences), at))

        store.save(changed(state), merge=changed)
