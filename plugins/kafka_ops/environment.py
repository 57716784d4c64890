"""Environment variables a block changes, put back as they were after it."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager


@contextmanager
def restored(names: Iterable[str]) -> Iterator[None]:
    """Run a block, then give each of `names` back the value it had before it (unset if it was unset),
    whatever the block set."""
    before = {name: os.environ.get(name) for name in names}
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
