"""Fuzzing every znode parser: the parser is the only gate between ZooKeeper and the lake.

For each parser, Hypothesis generates znodes shaped like the real one (Kafka's own document
with fields replaced by wrong types, numbers beyond Kafka's types, non-ASCII digits, lone
surrogates, deep nesting, fields dropped or added), byte-level mutations of the real document,
and raw random bytes. Two properties (without the checks of Kafka's types, 24,224 such inputs gave
400 untyped crashes and 484 documents accepted that then crashed the tables):

(a) the parser returns or raises `ZnodeFormatError` (naming the path), nothing else;
(b) what it returns, put into a full snapshot, builds every lake table; what it rejects
    builds as a `collection_issues` row.

Deterministic (`derandomize`, no example database) and a few seconds per parser.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_ops.sources.zookeeper import znodes
from tests.unit.znode_parsers import PARSERS, VALID, encode, outcome

FUZZ = settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

INT32 = 1 << 31
# Integers at and beyond the edges of Kafka's types, and any integer at all.
NUMBERS = st.one_of(
    st.integers(-INT32, INT32 - 1),
    st.sampled_from([INT32 - 1, INT32, -INT32, -INT32 - 1, 1 << 15, 1 << 16, 1 << 40, 1 << 63, -(1 << 63) - 1]),
    st.integers(-(1 << 70), 1 << 70),
)
# Strings that int() or str.isdigit() accept and Kafka does not, and text Parquet cannot hold.
TRICKY = st.sampled_from(
    ["\u00b2", "\u0663", "\uff11", "--5", "-", "", "+1", " 1", "1 ", "1_000", "0x10", "1e3", "NaN", "\ud800",
     "a\udfffb", str(INT32), str(1 << 63), str(-(1 << 63) - 1), "253402300800000", "9" * 30]
)  # fmt: skip
SURROGATES = st.text(st.characters(categories=["Cs"]), min_size=1, max_size=3)
STRINGS = st.one_of(
    st.text(max_size=12),
    TRICKY,
    SURROGATES,
    st.builds(lambda a, s, b: a + s + b, st.text(max_size=4), SURROGATES, st.text(max_size=4)),
    st.integers(-(1 << 66), 1 << 66).map(str),  # timestamps as Kafka writes them, in and out of range
    st.text(st.characters(categories=["Nd"]), min_size=1, max_size=4),  # digits of any script
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, st.floats(), STRINGS)
ANY_JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(STRINGS, inner, max_size=4)),
    max_leaves=12,
)
# Keys of maps (partition ids, config keys, listener names, feature names).
KEYS = st.one_of(STRINGS, st.integers(-5, 1 << 33).map(str))


def like(value: Any) -> st.SearchStrategy[Any]:
    """Values in the place of `value`: mostly of its kind (so many documents pass), or anything."""
    if isinstance(value, bool) or value is None:
        return ANY_JSON
    if isinstance(value, int):
        return st.one_of(NUMBERS, st.booleans(), st.floats(), STRINGS, ANY_JSON)
    if isinstance(value, str):
        return st.one_of(STRINGS, NUMBERS, ANY_JSON)
    if isinstance(value, list):
        element = like(value[0]) if value else ANY_JSON
        return st.one_of(st.lists(element, max_size=5), ANY_JSON)
    if isinstance(value, dict):
        sample = next(iter(value.values()), None)
        as_map = st.dictionaries(KEYS, like(sample) if sample is not None else ANY_JSON, max_size=4)
        return st.one_of(shaped(value), as_map, ANY_JSON)
    return ANY_JSON


@st.composite
def shaped(draw: st.DrawFn, doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` with up to three of its fields (or new ones) replaced by `like` values, or dropped."""
    out = dict(doc)
    keys = st.one_of(st.sampled_from(sorted(doc)), KEYS) if doc else KEYS
    for key in draw(st.lists(keys, max_size=3, unique=True)):
        if draw(st.integers(0, 4)) == 0:
            out.pop(key, None)
        else:
            out[key] = draw(like(doc.get(key)))
    return out


@st.composite
def serialized(draw: st.DrawFn, doc: dict[str, Any]) -> bytes:
    """JSON text: surrogates escaped (`\\ud800`, what a hand edit writes) or raw (invalid UTF-8)."""
    if draw(st.booleans()):
        return encode(doc)
    return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")


@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    """`data` with a few bytes replaced, inserted or cut."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(out)))
        cut = draw(st.integers(0, 3))
        out[at : at + cut] = draw(st.binary(max_size=4))
    return bytes(out)


@st.composite
def deeply_nested(draw: st.DrawFn, doc: dict[str, Any]) -> bytes:
    """A document whose body, or one of its fields, is nested hundreds to tens of thousands deep."""
    depth = draw(st.sampled_from([100, 900, 1000, 3000, 5000, 50_000]))
    opening, closing = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
    deep = opening * depth + b"1" + closing * depth
    if draw(st.booleans()):
        return deep
    field = draw(st.sampled_from(sorted(doc)))
    rest = encode({k: v for k, v in doc.items() if k != field})
    return rest[:-1] + b", " + json.dumps(field).encode() + b": " + deep + b"}"


def znode_bytes(name: str) -> st.SearchStrategy[bytes]:
    if name == "controller_epoch":  # a plain integer, not JSON
        text = st.one_of(NUMBERS.map(str), STRINGS)
        return st.one_of(
            text.map(lambda t: t.encode("utf-8", "surrogatepass")),
            st.binary(max_size=24),
            mutated_bytes(b"17"),
        )
    doc = VALID[name]
    return st.one_of(
        shaped(doc).flatmap(serialized),
        mutated_bytes(encode(doc)),
        deeply_nested(doc),
        ANY_JSON.flatmap(lambda v: st.just(encode(v))),
        st.binary(max_size=64),
    )


@pytest.mark.parametrize("name", sorted(PARSERS))
@FUZZ
@given(data=st.data())
def test_a_parser_returns_or_raises_a_format_error_and_what_it_returns_builds_every_table(
    name: str, data: st.DataObject
) -> None:
    outcome(PARSERS[name], data.draw(znode_bytes(name), label="znode"))


@pytest.mark.parametrize("name", sorted(VALID))
@FUZZ
@given(data=st.data())
def test_valid_documents_with_in_range_values_are_accepted(name: str, data: st.DataObject) -> None:
    """The gate is not too strict: any int32 where Kafka has an int32, any text where it has a string."""
    doc = VALID[name]
    field = data.draw(st.sampled_from(sorted(k for k in doc if k != "version")), label="field")
    value = doc[field]
    if isinstance(value, int) and field not in ("leader_recovery_state",):
        doc = {**doc, field: data.draw(st.integers(-INT32, INT32 - 1), label="int32")}
    elif isinstance(value, str) and field != "timestamp":
        doc = {**doc, field: data.draw(st.text(), label="text")}
    _, error = outcome(PARSERS[name], encode(doc))
    assert error is None, error


def test_every_parser_is_fuzzed() -> None:
    """A new `parse_*` in `znodes` joins `tests/unit/znode_parsers.py` (PARSERS, and VALID for JSON)."""
    parsers = {name for name in vars(znodes) if name.startswith("parse_")}
    missing = sorted(parsers - {f"parse_{name}" for name in PARSERS})
    assert not missing, f"not fuzzed: {missing}; add them to tests/unit/znode_parsers.py"
