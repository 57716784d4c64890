"""Which consumer groups a cluster's settings select (`groups_include`, `groups_exclude`): what the group
collection collects and the change watch watches. No client: the change watch builds it at DAG parse time."""

from __future__ import annotations

import re

from kafka_ops.errors import ConfigError


def _pattern(kind: str, value: str | None) -> re.Pattern[str] | None:
    if value is None:
        return None
    try:
        return re.compile(value)
    except re.error as e:
        raise ConfigError(f"group {kind} pattern {value!r} is not a valid regular expression: {e}") from None


class GroupSelection:
    """The group ids a cluster's settings select: those matching `include` (a regular expression matched
    against the whole id; none: every id) and not matching `exclude`."""

    def __init__(self, include: str | None = None, exclude: str | None = None) -> None:
        self.include = _pattern("include", include)
        self.exclude = _pattern("exclude", exclude)

    def __call__(self, group_id: str) -> bool:
        if self.include is not None and not self.include.fullmatch(group_id):
            return False
        return self.exclude is None or not self.exclude.fullmatch(group_id)
