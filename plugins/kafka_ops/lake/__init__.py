"""The lake: table schemas, atomic publish, committed reads. Parquet (`store.Lake`, the default)
or Delta Lake (`delta_store.DeltaLake`, same API); `open.open_lake` / `open.lake_of` pick by format.

`Lake` and `Batch` are imported lazily so that light modules (settings, names) can be
imported at DAG parse time without loading pyarrow.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Batch", "Lake"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kafka_ops.lake import store  # noqa: PLC0415 - lazy on purpose

        return getattr(store, name)
    raise AttributeError(name)
