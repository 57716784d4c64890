"""The services' documented request formats, as checks over what our real test servers received.

Slack incoming webhooks (api.slack.com/messaging/webhooks, Block Kit reference): a JSON object
with `text` and/or `blocks`; at most 50 blocks; `header` holds `plain_text` of at most 150
characters; a `section` has `text` (at most 3000) and/or `fields` (at most 10, each at most
2000); a `context` has 1-10 `elements`.

PagerDuty Events API v2 (developer.pagerduty.com, "Send an Alert Event"): `routing_key`,
`event_action` in trigger/acknowledge/resolve, `dedup_key` at most 255 characters; a trigger
needs `payload` with `summary` (1-1024), `source`, `severity` in critical/error/warning/info,
optional `timestamp` (ISO-8601), `component`, `group`, `class`, `custom_details` (object);
optional `links` [{href, text}], `images`, `client`, `client_url`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

SLACK_TOP_LEVEL = {"text", "blocks", "attachments", "thread_ts", "mrkdwn", "username", "icon_emoji", "icon_url"}
SLACK_TEXT_TYPES = {"plain_text", "mrkdwn"}
PD_TOP_LEVEL = {"routing_key", "event_action", "dedup_key", "payload", "images", "links", "client", "client_url"}
PD_PAYLOAD = {"summary", "source", "severity", "timestamp", "component", "group", "class", "custom_details"}
PD_SEVERITIES = {"critical", "error", "warning", "info"}


def check_slack_message(body: Any) -> None:
    assert isinstance(body, dict)
    assert set(body) <= SLACK_TOP_LEVEL, set(body) - SLACK_TOP_LEVEL
    assert isinstance(body.get("text"), str) and body["text"].strip()
    blocks = body["blocks"]
    assert isinstance(blocks, list) and 1 <= len(blocks) <= 50
    for block in blocks:
        kind = block["type"]
        assert kind in {"header", "section", "context", "divider"}, kind
        if kind == "header":
            assert set(block) == {"type", "text"}
            assert block["text"]["type"] == "plain_text"
            assert 1 <= len(block["text"]["text"]) <= 150
        elif kind == "section":
            assert "text" in block or "fields" in block
            if "text" in block:
                _text_object(block["text"], 3000)
            for item in block.get("fields", []):
                _text_object(item, 2000)
            assert len(block.get("fields", [])) <= 10
        elif kind == "context":
            assert 1 <= len(block["elements"]) <= 10
            for element in block["elements"]:
                _text_object(element, 3000)


def _text_object(obj: Any, limit: int) -> None:
    assert obj["type"] in SLACK_TEXT_TYPES
    assert isinstance(obj["text"], str) and 1 <= len(obj["text"]) <= limit
    assert set(obj) <= {"type", "text", "emoji", "verbatim"}


def check_pagerduty_event(body: Any) -> None:
    assert isinstance(body, dict)
    assert set(body) <= PD_TOP_LEVEL, set(body) - PD_TOP_LEVEL
    assert isinstance(body["routing_key"], str) and body["routing_key"]
    assert body["event_action"] in {"trigger", "acknowledge", "resolve"}
    assert isinstance(body["dedup_key"], str) and 1 <= len(body["dedup_key"]) <= 255
    if body["event_action"] != "trigger":
        assert set(body) == {"routing_key", "event_action", "dedup_key"}
        return
    payload = body["payload"]
    assert set(payload) <= PD_PAYLOAD, set(payload) - PD_PAYLOAD
    assert isinstance(payload["summary"], str) and 1 <= len(payload["summary"]) <= 1024
    assert isinstance(payload["source"], str) and payload["source"]
    assert payload["severity"] in PD_SEVERITIES
    assert datetime.fromisoformat(payload["timestamp"]).tzinfo is not None
    for name in ("component", "group", "class"):
        assert isinstance(payload.get(name, ""), str)
    assert isinstance(payload.get("custom_details", {}), dict)
    for link in body.get("links", []):
        assert set(link) == {"href", "text"} and link["href"].startswith("http")
