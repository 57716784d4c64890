"""`kafka-ops silence add|list|end`: maintenance windows and silences from the command line
(`kafka_ops.silences`), stored with the cluster's alert state under the settings' lake root."""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime

from kafka_ops.alerting.silence_store import add_silence, end_silence, silences_of
from kafka_ops.errors import ConfigError, KafkaOpsError
from kafka_ops.settings import load_settings
from kafka_ops.silences import Silence, encode, new_silence, parse_duration


def add_silence_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    silence = verbs.add_parser(
        "silence",
        help="silence a cluster, brokers, topics or groups for a while (a maintenance window), list or end one",
    )
    actions = silence.add_subparsers(dest="action", required=True)
    add = actions.add_parser(
        "add",
        help="set a silence",
        description="Stop paging, for a while, the problems about what is named: nothing named silences the whole "
        "cluster (a maintenance window). A silenced problem is still recorded and shown as silenced in the report; "
        "if it still fires when the silence ends, it pages then.",
    )
    add.add_argument("--cluster", required=True, help="the cluster's name in the kafka-ops settings")
    add.add_argument("--broker", type=int, action="append", default=[], help="a broker id (repeat for more)")
    add.add_argument("--topic", action="append", default=[], help="a topic name or regular expression (repeatable)")
    add.add_argument("--group", action="append", default=[], help="a group id or regular expression (repeatable)")
    add.add_argument("--key", action="append", default=[], help="only this problem (an alert key; repeatable)")
    add.add_argument("--for", dest="duration", default=None, help="how long: 90m, 2h, 1d")
    add.add_argument("--until", default=None, help="or when it ends (ISO-8601 with a time zone)")
    add.add_argument("--start", default=None, help="when it starts (ISO-8601 with a time zone; default now)")
    add.add_argument("--reason", default=None, help="why, and whom to ask (required)")
    add.add_argument("--by", default=os.environ.get("USER", "cli"), help="who sets it (default $USER)")
    listing = actions.add_parser("list", help="the cluster's silences: active, future and recently ended")
    listing.add_argument("--cluster", required=True)
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    end = actions.add_parser("end", help="end a silence now (what it covered pages on the next run if it still fires)")
    end.add_argument("--cluster", required=True)
    end.add_argument("--id", required=True, help="the silence's id (silence list)")
    end.add_argument("--by", default=os.environ.get("USER", "cli"), help="who ends it (default $USER)")


def run_silence(args: argparse.Namespace) -> int:
    try:
        settings = load_settings()
        cluster = settings.cluster(args.cluster).name
        now = datetime.now(UTC)
        if args.action == "add":
            silence = add_silence(settings.lake_root, _new(args, cluster, now), now)
            print(silence.describe())
        elif args.action == "end":
            print(end_silence(settings.lake_root, cluster, args.id, now, args.by).describe())
        else:
            for s in silences_of(settings.lake_root, cluster):
                print(json.dumps(encode(s), sort_keys=True) if args.json else f"{_state(s, now):<7} {s.describe()}")
    except KafkaOpsError as e:
        print(f"kafka-ops: {e}", file=sys.stderr)
        return 2
    return 0


def _new(args: argparse.Namespace, cluster: str, now: datetime) -> Silence:
    starts_at = _time(args.start, "--start") if args.start else now
    if args.duration and args.until:
        raise ConfigError("silence add: give --for or --until, not both")
    ends_at: datetime | None
    if args.duration:
        ends_at = starts_at + parse_duration(args.duration, "silence add --for")
    else:
        ends_at = _time(args.until, "--until") if args.until else None
    return new_silence(
        cluster,
        starts_at=starts_at,
        ends_at=ends_at,
        reason=args.reason,
        created_by=args.by,
        brokers=args.broker,
        topics=args.topic,
        groups=args.group,
        keys=args.key,
    )


def _time(text: str, option: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"silence add {option}: {text!r} is not an ISO-8601 time") from None
    if value.utcoffset() is None:
        raise ConfigError(f"silence add {option}: {text!r} has no time zone (add Z or +02:00)")
    return value


def _state(silence: Silence, now: datetime) -> str:
    if silence.active(now):
        return "active"
    return "future" if now < silence.starts_at else "ended"
