"""How long the lake keeps what, and how its Delta tables are kept tidy: `[lake]` in the settings.

History is kept per commit log, and a commit log's retention applies to every table it commits
(`lake.schema.commit_table_of`), so a batch always expires as a whole:

    [lake]
    keep_snapshots_days = 35        # `snapshots` and the metadata tables it commits
    keep_groups_days = 35           # `group_snapshots` and the consumer-group tables
    keep_findings_days = 35         # `analysis_runs` and the findings tables
    keep_validations_days = 35      # `snapshot_validations` (at least the two above)
    keep_plans_days = "forever"     # `remediation_plans`
    keep_audit_days = "forever"     # `remediation_audit`
    keep_reports_days = 35          # `_reports`: HTML health reports (`latest.html` always stays)
    vacuum_retention_hours = 168    # Delta: files a newer version replaced are deleted this long after
    log_retention_hours = 168       # Delta: commit log entries (versions) kept this long
    compact_target_mb = 256         # Delta: compaction writes files up to this size

Light on purpose (no pyarrow, no deltalake): the settings import it at DAG parse time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from kafka_ops.errors import ConfigError
from kafka_ops.kafka_types import LONGEST_DAYS, longest, shown

FOREVER = "forever"
MIN_VACUUM_RETENTION_HOURS = 24
"""The shortest `vacuum_retention_hours` the settings accept (see `RetentionPolicy`)."""
LONGEST_HOURS = int(longest("hours"))
MOST_COMPACT_TARGET_MB = 1 << 20
"""1 TiB: a larger target file is no file size (delta-rs takes it in bytes, as a 64-bit integer)."""
_DAYS_KEYS = {  # the commit logs of lake.schema, by name (importing it would load pyarrow)
    "keep_snapshots_days": "snapshots",
    "keep_groups_days": "group_snapshots",
    "keep_findings_days": "analysis_runs",
    "keep_validations_days": "snapshot_validations",
    "keep_plans_days": "remediation_plans",
    "keep_audit_days": "remediation_audit",
}
_SIDE_DAYS_KEYS = {  # side folders (names starting with `_`) kept by age: `lake.retention.expire_reports`
    "keep_reports_days": "_reports",
}


@dataclass(frozen=True)
class RetentionPolicy:
    """What the lake keeps. `None` days: kept forever.

    `vacuum_retention_hours` is also how far back time travel reaches (`kafka-ops lake as-of`,
    an analysis as of a past time): a version's files are deleted that long after a newer version
    (a compaction, a retention delete) replaced them. The settings refuse less than
    `MIN_VACUUM_RETENTION_HOURS` and less than any cluster's analysis `history_hours`; a policy
    built in code may go lower (tests vacuum at 0)."""

    keep_snapshots_days: int | None = 35
    keep_groups_days: int | None = 35
    keep_findings_days: int | None = 35
    keep_validations_days: int | None = 35
    keep_plans_days: int | None = None
    keep_audit_days: int | None = None
    keep_reports_days: int | None = 35
    """HTML health reports (`_reports/<cluster>/<id>.html`), by the day each was written; as long as
    the findings they show by default. `latest.html` is never expired."""
    vacuum_retention_hours: int = 168
    log_retention_hours: int = 168
    """At least `vacuum_retention_hours`. Equal by default: a version older than the vacuum window
    has lost files, so time travel to it should find no version (a clear error) rather than one
    that cannot be read; longer keeps the table's history listed for audit."""
    compact_target_mb: int = 256

    def __post_init__(self) -> None:
        for key in [*_DAYS_KEYS, *_SIDE_DAYS_KEYS]:
            days = getattr(self, key)
            if days is not None and not _whole(days, 1, LONGEST_DAYS):
                raise ConfigError(
                    f"[lake] {key!r} must be a whole number of days from 1 to {LONGEST_DAYS} (100 years) "
                    f"or {FOREVER!r}, got {shown(days)}"
                )
        for key in ("vacuum_retention_hours", "log_retention_hours"):
            if not _whole(getattr(self, key), 0, LONGEST_HOURS):
                raise ConfigError(
                    f"[lake] {key!r} must be a whole number of hours from 0 to {LONGEST_HOURS} (100 years), "
                    f"got {shown(getattr(self, key))}"
                )
        if not _whole(self.compact_target_mb, 1, MOST_COMPACT_TARGET_MB):
            raise ConfigError(
                f"[lake] 'compact_target_mb' must be a whole number from 1 to {MOST_COMPACT_TARGET_MB}, "
                f"got {shown(self.compact_target_mb)}"
            )
        if self.log_retention_hours < self.vacuum_retention_hours:
            raise ConfigError(
                f"[lake] 'log_retention_hours' ({self.log_retention_hours}) must be at least 'vacuum_retention_hours' "
                f"({self.vacuum_retention_hours}): a version whose log entry is gone cannot be read back anyway"
            )
        validations = _as_days(self.keep_validations_days)
        for key in ("keep_snapshots_days", "keep_groups_days"):
            if validations < _as_days(getattr(self, key)):
                raise ConfigError(
                    f"[lake] 'keep_validations_days' ({self.keep_validations_days}) must be at least {key!r} "
                    f"({getattr(self, key)}): a kept batch without its validation row is untrusted"
                )

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], where: str, history_hours: float = 0) -> RetentionPolicy:
        """Parse a `[lake]` table ("forever" for days kept forever); every wrong value is refused
        naming its key. Snapshots, groups and `vacuum_retention_hours` must cover `history_hours`
        (the longest analysis history of the clusters); the vacuum, `MIN_VACUUM_RETENTION_HOURS` too."""
        if not isinstance(values, Mapping):
            raise ConfigError(f"{where}: [lake] must be a table of settings")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"{where}: [lake] unknown setting(s) {unknown} (known: {sorted(known)})")
        parsed: dict[str, Any] = {
            key: None if key in {**_DAYS_KEYS, **_SIDE_DAYS_KEYS} and value == FOREVER else value
            for key, value in values.items()
        }
        try:
            policy = cls(**parsed)
        except ConfigError as e:
            raise ConfigError(f"{where}: {e}") from None
        for key in ("keep_snapshots_days", "keep_groups_days"):
            if _as_days(getattr(policy, key)) * 24 < history_hours:
                raise ConfigError(
                    f"{where}: [lake] {key!r} ({getattr(policy, key)} days) is shorter than the analysis history "
                    f"a cluster reads (history_hours = {history_hours:g}): the analysis would lose its history"
                )
        floor = max(MIN_VACUUM_RETENTION_HOURS, history_hours)
        if policy.vacuum_retention_hours < floor:
            raise ConfigError(
                f"{where}: [lake] 'vacuum_retention_hours' must be at least {floor:g} (the longest analysis "
                f"history_hours, and never under {MIN_VACUUM_RETENTION_HOURS}): an analysis or a time-travel read "
                f"needs the files of the version it reads, got {policy.vacuum_retention_hours}"
            )
        return policy

    def keep_days(self, commit_table: str) -> int | None:
        """Days of history kept for `commit_table` and the tables it commits (None: forever)."""
        for key, table in _DAYS_KEYS.items():
            if table == commit_table:
                days: int | None = getattr(self, key)
                return days
        return None  # a commit log this policy does not know is never deleted


def _whole(value: object, least: int, most: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and least <= value <= most


def _as_days(days: int | None) -> float:
    return float("inf") if days is None else float(days)
