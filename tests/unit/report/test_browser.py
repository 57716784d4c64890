"""The report as headless Chromium renders it: the DOM it builds, its console, a screenshot."""

from __future__ import annotations

import struct
from html.parser import HTMLParser
from pathlib import Path

import pytest

from kafka_ops.lake.store import Lake
from kafka_ops.report import write_report
from kafka_ops.report.browser import ENV, BrowserError, dump_dom, find_chromium, screenshot
from kafka_ops.report.html import CSP
from tests.unit.report import scenario
from tests.unit.report.scenario import NOW

needs_chromium = pytest.mark.skipif(
    find_chromium() is None,
    reason="no headless Chromium (chromium or chromium-browser on the PATH, or $KAFKA_OPS_CHROMIUM): "
    "apt-get install -y --no-install-recommends chromium fonts-dejavu-core",
)


class _Dom(HTMLParser):
    """Headings' text, and how many of each SVG element, as the browser serialised the document."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: dict[str, list[str]] = {"h1": [], "h2": [], "h3": []}
        self.counts: dict[str, int] = {}
        self.status = ""
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        key = f"{tag}.{found['class']}" if found.get("class") else tag
        self.counts[key] = self.counts.get(key, 0) + 1
        if tag in self.headings:
            self._in = tag
            self.headings[tag].append("")
        elif found.get("id") == "status":
            self._in = "status"

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in or (self._in == "status" and tag == "strong"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "status":
            self.status += data
        elif self._in is not None:
            self.headings[self._in][-1] += data


@needs_chromium
def test_the_report_renders_in_headless_chromium(lake: Lake, tmp_path: Path) -> None:
    page = write_report(scenario.build(lake), "c1", now=NOW)
    rendered = dump_dom(page)
    assert rendered.console == ()  # no script, and the page asked for nothing the CSP had to block
    dom = _Dom()
    dom.feed(rendered.dom)
    assert dom.headings["h1"] == ["Kafka health report: c1"]
    assert dom.status == "CRITICAL"
    assert dom.headings["h2"] == ["About the data", "Health gates", "Top problems", "Charts", "Top offenders"]
    assert dom.headings["h3"][:8] == [
        "Leaders and replicas per broker",
        "Under-replicated partitions over the last day",
        "ISR shrink events per broker",
        "Lag per consumer group over the last day",
        "Partitions per member of skewed groups",
        "Disk used and capacity per broker",
        "Days until the disk is full, per broker",
        "Bytes in and out per broker",
    ]
    assert dom.counts["svg.chart"] == 8
    # 3 brokers x 4 bars, 3 brokers x 2 bars, 2 members, 3 brokers x (used, capacity), 2 brokers filling up,
    # 3 brokers x (in as leader, in, out, network in capacity): every bar with a value is drawn
    assert dom.counts["rect.bar"] == 3 * 4 + 3 * 2 + 2 + 3 * 2 + 2 + 3 * 4
    # 4 snapshots x (under-replicated, offline) + 4 collections x 2 groups
    assert dom.counts["circle.point"] == 4 * 2 + 4 * 2

    png = screenshot(page, tmp_path / "report.png", width=1280, height=1600)
    assert png.console == ()
    header = (tmp_path / "report.png").read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", header[16:24]) == (1280, 1600)


@needs_chromium
def test_a_request_the_page_makes_shows_in_the_console(tmp_path: Path) -> None:
    """What keeps the check above honest: a blocked request is reported, so an empty console means none."""
    page = tmp_path / "fetches.html"
    page.write_text(
        f'<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="{CSP}"></head>'
        '<body><h1>x</h1><img src="http://127.0.0.1:9/logo.png"></body></html>'
    )
    (message,) = dump_dom(page).console
    assert "Loading the image 'http://127.0.0.1:9/logo.png' violates the following Content Security Policy" in message


def test_without_chromium_the_error_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, str(tmp_path / "no-such-chromium"))
    page = tmp_path / "p.html"
    page.write_text("<html></html>")
    assert find_chromium() is None
    with pytest.raises(BrowserError) as raised:
        dump_dom(page)
    assert str(raised.value) == (
        f"no Chromium found ($KAFKA_OPS_CHROMIUM={tmp_path}/no-such-chromium is not an executable): on Debian run "
        "`apt-get install -y --no-install-recommends chromium fonts-dejavu-core`"
    )
