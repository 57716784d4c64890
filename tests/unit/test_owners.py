"""`[[owners]]`: who owns which topics and groups, refused at load when a key is wrong, and whose page a
page is."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_ops.errors import ConfigError
from kafka_ops.owners import Owner, owner_of, parse_owners
from kafka_ops.settings import load_settings

PAYMENTS = Owner("payments", ("slack_payments",), topics=(r"payments\..*", "orders"), groups=("billing-.*",))
SEARCH = Owner("search", ("slack_search",), topics=("search-.*", "orders"), groups=(".*",), clusters=("prod",))


def test_a_group_page_goes_to_its_group_owner_and_a_topic_page_to_the_one_owner_of_its_topics() -> None:
    owners = (PAYMENTS, SEARCH)
    assert owner_of(owners, group="billing-eu") == PAYMENTS
    assert owner_of(owners, group="anything") == SEARCH  # the first owner whose pattern matches wins
    assert owner_of(owners, topics=["payments.eu", "orders"]) == PAYMENTS  # `orders`: payments comes first
    assert owner_of(owners, topics=["payments.eu", "search-idx"]) is None  # two owners: the cluster's on-call
    assert owner_of(owners, topics=["payments.eu", "audit"]) is None  # a topic nobody owns
    assert owner_of(owners, topics=["payments"]) is None  # a whole-name match: `payments\..*` needs the dot
    assert owner_of(owners) is None  # a broker, the controller: the cluster's on-call
    assert SEARCH.on("prod") and not SEARCH.on("staging") and PAYMENTS.on("staging")


def test_owners_load_from_the_settings_and_apply_to_their_clusters(tmp_path: Path) -> None:
    path = tmp_path / "kafka-ops.toml"
    path.write_text(
        '[[clusters]]\nname = "prod"\n[[clusters]]\nname = "staging"\n'
        '[[owners]]\nname = "payments"\ntopics = ["payments\\\\..*"]\nalert_conn_ids = ["slack_payments"]\n'
        'clusters = ["prod"]\n'
    )
    settings = load_settings(path)
    assert settings.owners == (Owner("payments", ("slack_payments",), topics=(r"payments\..*",), clusters=("prod",)),)
    assert settings.owners_on("prod") == settings.owners and settings.owners_on("staging") == ()


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"topics": ["a"], "alert_conn_ids": ["s"]}, r"owners\[0\]\.name: a non-empty name without '/' is required"),
        ({"name": "a/b", "topics": ["a"], "alert_conn_ids": ["s"]}, r"owners\[0\]\.name"),
        ({"name": "p", "topics": ["a"]}, r"owners\[0\]\.alert_conn_ids: owner 'p' needs at least one alert"),
        ({"name": "p", "alert_conn_ids": ["s"]}, r"owners\[0\]: owner 'p' owns nothing"),
        ({"name": "p", "topics": ["a", "(b"], "alert_conn_ids": ["s"]},
         r"owners\[0\]\.topics\[1\]: '\(b' is not a regular expression"),
        ({"name": "p", "topics": ["orders topic"], "alert_conn_ids": ["s"]},
         r"owners\[0\]\.topics\[0\]: 'orders topic' matches no topic"),
        ({"name": "p", "groups": [""], "alert_conn_ids": ["s"]}, r"owners\[0\]\.groups: must be a list of non-empty"),
        ({"name": "p", "groups": ["g"], "alert_conn_ids": ["s", "s"]}, r"owners\[0\]\.alert_conn_ids: names one"),
        ({"name": "p", "groups": ["g"], "alert_conn_ids": ["s"], "clusters": ["nope"]},
         r"owners\[0\]\.clusters: 'nope' is not a cluster of these settings"),
        ({"name": "p", "groups": ["g"], "alert_conn_ids": ["s"], "team": "x"},
         r"owners\[0\]: unknown key\(s\) \['team'\]"),
    ],
)  # fmt: skip
def test_a_wrong_owner_is_refused_at_load_naming_the_key(entry: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_owners([entry], ["prod"])


def test_two_owners_of_one_name_are_refused() -> None:
    twice = [{"name": "p", "groups": ["g"], "alert_conn_ids": ["s"]}] * 2
    with pytest.raises(ConfigError, match="'owners': the name 'p' is given to two owners"):
        parse_owners(twice, ["prod"])
    with pytest.raises(ConfigError, match=r"'owners' must be an array of tables \(\[\[owners\]\]\)"):
        parse_owners({"name": "p"}, ["prod"])
