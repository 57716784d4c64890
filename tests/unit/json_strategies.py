"""Hypothesis strategies for JSON a reader of untrusted input is given: any JSON value, values at and
beyond the edges of Kafka's types, and a valid document with a few fields broken.

`mutated(documents)` starts from one of `documents` (what kafka-ops writes) and applies one to three
edits anywhere in it: a field replaced by a wrong value, a key dropped or added, an array element
dropped or duplicated. `texts_of(documents)` gives raw text: that JSON, cut short or byte-flipped,
nested far too deep, or random text and bytes. Shared by the fuzz tests of plans, progress
documents, stored plan rows and Params.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FUZZ = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

INT32 = 2**31
INTEGERS = st.one_of(
    st.integers(-3, 10),
    st.sampled_from([INT32 - 1, INT32, -INT32 - 1, 2**15, 2**63 - 1, 2**63, -(2**63) - 1, 10**30]),
    st.integers(),
)
FLOATS = st.one_of(st.sampled_from([0.0, 1.0, 2.5, -0.0, 1e300]), st.floats())
TEXTS = st.one_of(
    st.sampled_from(["", "orders", "t", ".", "..", "a" * 250, "a b", "²", "٣", "--5", "1", "-1", "true", "null",
                     "\ud800", "x\udfff", "2026-11-21T07:30:00+00:00", "2026-13-01", "any"]),
    st.text(max_size=12),
    st.text(st.characters(categories=["Cs"]), min_size=1, max_size=2),
)  # fmt: skip
SCALARS = st.one_of(st.none(), st.booleans(), INTEGERS, FLOATS, TEXTS)
JSON: st.SearchStrategy[Any] = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXTS, inner, max_size=4), max_leaves=12
)


def nested(depth: int, leaf: Any = 0) -> Any:
    """`leaf` inside `depth` arrays: deeper than any document kafka-ops writes."""
    for _ in range(depth):
        leaf = [leaf]
    return leaf


VALUES = st.one_of(JSON, st.builds(nested, st.sampled_from([100, 5000])))


@st.composite
def mutated(draw: st.DrawFn, documents: list[Any]) -> Any:
    """One of `documents`, with one to three random edits (module docstring)."""
    doc = copy.deepcopy(draw(st.sampled_from(documents)))
    for _ in range(draw(st.integers(1, 3))):
        doc = _edit(draw, doc)
    return doc


def _edit(draw: st.DrawFn, node: Any) -> Any:
    if isinstance(node, dict) and node and draw(st.integers(0, 3)):
        key = draw(st.sampled_from(sorted(node)))
        op = draw(st.sampled_from(["descend", "descend", "drop", "add"]))
        if op == "drop":
            del node[key]
        elif op == "add":
            node[draw(TEXTS)] = draw(VALUES)
        else:
            node[key] = _edit(draw, node[key])
        return node
    if isinstance(node, list) and node and draw(st.integers(0, 3)):
        i = draw(st.integers(0, len(node) - 1))
        op = draw(st.sampled_from(["descend", "descend", "drop", "twice"]))
        if op == "drop":
            del node[i]
        elif op == "twice":
            node.append(node[i])  # shared: a deep copy of `nested(5000)` would overflow the stack
        else:
            node[i] = _edit(draw, node[i])
        return node
    return draw(VALUES)


@st.composite
def texts_of(draw: st.DrawFn, documents: st.SearchStrategy[Any]) -> str | bytes:
    """Raw text around JSON `documents`: the JSON itself, cut short, a byte changed, nested too
    deep, random text (lone surrogates included) or random bytes (not UTF-8)."""
    kind = draw(st.sampled_from(["json", "json", "cut", "flip", "deep", "text", "bytes"]))
    if kind == "text":
        return draw(st.text(st.characters(categories=["Cs", "Nd", "Ps", "Pe", "Po", "Ll"]), max_size=40))
    if kind == "bytes":
        return draw(st.binary(max_size=40))
    if kind == "deep":
        return "[" * draw(st.sampled_from([1000, 100_000])) + "]" * draw(st.sampled_from([0, 100_000]))
    try:
        text = json.dumps(draw(documents)).encode()
    except RecursionError:  # a document with `nested(5000)` in it: its text, written by hand
        text = b"[" * 5000 + b"]" * 5000
    if kind == "cut":
        return text[: draw(st.integers(0, max(0, len(text) - 1)))]
    if kind == "flip" and text:
        i = draw(st.integers(0, len(text) - 1))
        return text[:i] + bytes([draw(st.integers(0, 255))]) + text[i + 1 :]
    return text
