from __future__ import annotations

import pytest

from kafka_ops.errors import PlanError
from kafka_ops.planning.placement import kafka_assignment, rack_alternated, spread, spread_kept

JAVADOC_RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def test_rack_alternated_matches_kafkas_javadoc() -> None:
    assert rack_alternated(JAVADOC_RACKS) == [0, 3, 1, 5, 4, 2]
    nine = {b: f"rack{b // 3 + 1}" for b in range(9)}
    assert rack_alternated(nine) == [0, 3, 6, 1, 4, 7, 2, 5, 8]


def test_rack_alternated_without_racks_is_the_ids_in_order() -> None:
    assert rack_alternated({3: None, 1: None, 2: None}) == [1, 2, 3]


def test_rack_aware_assignment_matches_kafkas_javadoc() -> None:
    # AdminUtils javadoc: 6 partitions RF 3 over the rack-alternated list, then partition 6 shifts
    placed = kafka_assignment(JAVADOC_RACKS, 7, 3, start_index=0, shift=0)
    assert placed == {0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3],
                      6: [0, 4, 2]}  # fmt: skip


def test_rack_unaware_assignment_matches_kafkas_javadoc_table() -> None:
    placed = kafka_assignment(dict.fromkeys(range(5)), 10, 3, start_index=0, shift=0)
    assert placed[0] == [0, 1, 2]
    assert placed[4] == [4, 0, 1]
    assert placed[5] == [0, 2, 3]  # second round: followers shifted by one
    assert placed[9] == [4, 1, 2]


def test_kafka_assignment_refuses_what_kafka_refuses() -> None:
    with pytest.raises(PlanError, match="brokers: not all brokers have rack information"):
        kafka_assignment({1: "a", 2: None}, 1, 1, start_index=0, shift=0)
    with pytest.raises(PlanError, match="replication_factor: 3 is larger than the 2 available brokers"):
        kafka_assignment({1: "a", 2: "b"}, 1, 3, start_index=0, shift=0)
    with pytest.raises(PlanError, match="partitions: must be larger than 0"):
        kafka_assignment({1: "a"}, 0, 1, start_index=0, shift=0)


def test_spread_rule() -> None:
    rack_of = {1: "a", 2: "a", 3: "b"}
    assert spread([1, 2], rack_of) == 1
    assert spread([1, 3, 9], rack_of) == 3  # an unknown broker counts as its own rack
    assert spread_kept(before=2, after=2, replication_factor=3, racks_available=2)
    assert not spread_kept(before=2, after=1, replication_factor=2, racks_available=2)
    assert spread_kept(before=3, after=2, replication_factor=2, racks_available=3)  # RF going down
