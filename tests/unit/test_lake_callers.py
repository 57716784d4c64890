"""Every reader and writer of the lake opens it through `lake.open` (`lake_of(settings)`,
`open_lake(root, fmt)`, `lake_at(root, fmt)`), so the `lake_format` setting reaches it: a module
that built `Lake(...)` itself would silently read or write Parquet on a Delta lake."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from kafka_ops.lake.open import add_lake_format_argument, lake_at

ROOT = Path(__file__).parents[2]
SOURCES = [ROOT / "plugins" / "kafka_ops", ROOT / "dags", ROOT / "spark_jobs"]
LAKE_PACKAGE = ROOT / "plugins" / "kafka_ops" / "lake"
ALLOWED = {
    # `kafka-ops lake as-of` is time travel, which only a Delta lake has: it opens one on purpose
    (ROOT / "plugins" / "kafka_ops" / "cli_lake.py", "DeltaLake"),
}


def constructions(path: Path) -> list[tuple[str, int]]:
    """(class, line) of every `Lake(...)` or `DeltaLake(...)` call in `path`."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name in ("Lake", "DeltaLake"):
            found.append((name, node.lineno))
    return found


def test_no_module_outside_the_lake_package_constructs_a_lake() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line} {name}(...)"
        for source in SOURCES
        for path in sorted(source.rglob("*.py"))
        if LAKE_PACKAGE not in path.parents
        for name, line in constructions(path)
        if (path, name) not in ALLOWED
    ]
    assert not offenders, f"open the lake with kafka_ops.lake.open (lake_of / open_lake / lake_at): {offenders}"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("lake = Lake(root)", [("Lake", 1)]),
        ("x = store.DeltaLake(root)", [("DeltaLake", 1)]),
        ("lake = lake_of(settings)\nLake.read", []),
    ],
)
def test_the_check_sees_direct_constructions(tmp_path: Path, code: str, expected: list[tuple[str, int]]) -> None:
    module = tmp_path / "m.py"
    module.write_text(code)
    assert constructions(module) == expected


def test_a_command_s_lake_format_defaults_to_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_OPS_CONFIG", raising=False)
    monkeypatch.setenv("KAFKA_OPS_LAKE_FORMAT", "delta")
    assert type(lake_at(tmp_path)).__name__ == "DeltaLake"
    assert type(lake_at(tmp_path, "parquet")).__name__ == "Lake"  # --lake-format wins
    parser = argparse.ArgumentParser()
    add_lake_format_argument(parser)
    assert parser.parse_args([]).lake_format is None
    assert parser.parse_args(["--lake-format", "delta"]).lake_format == "delta"
    with pytest.raises(SystemExit):
        parser.parse_args(["--lake-format", "orc"])
