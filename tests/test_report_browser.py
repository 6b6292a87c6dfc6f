"""The HTML report in a real browser: headless Chromium, driven over the DevTools protocol.

How errors are caught: Chromium is started with ``--remote-debugging-pipe``, which speaks the
DevTools protocol as NUL-terminated JSON over file descriptors 3 and 4, so the standard
library is enough (no websocket client, no scraping of Chromium's log output, whose stderr is
full of unrelated "ERROR" lines about D-Bus). The test subscribes to Runtime (console calls,
uncaught exceptions), Log (browser-side errors such as failed loads) and Network (every
request), loads the report from a file:// URL, then asks the page about its figures, takes a
full-page screenshot and prints it to PDF. A canary page with deliberate errors proves that
the harness sees what it is meant to see.

Skipped, with the reason, where no Chromium is installed (``apt-get install chromium``).
Screenshots are written under tmp_path and copied to $GPURANK_TEST_ARTIFACTS when set.
"""

import base64
import fcntl
import json
import os
import queue
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from gpurank.engine.report import SECTIONS, write_report
from test_report import ALL_FIGURES, analysis_inputs


def _find_chromium():
    for name in ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM = _find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium not found (/usr/bin/chromium or chromium on PATH); "
           "install it with: apt-get install chromium",
)
TIMEOUT = 60.0
WIDTH = 1280


class Browser:
    """A headless Chromium controlled over --remote-debugging-pipe."""

    def __init__(self, profile_dir):
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire_fds():  # in the child: fd 3 = commands in, fd 4 = replies out
            a = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-dev-shm-usage", "--hide-scrollbars",
                "--remote-debugging-pipe", f"--user-data-dir={profile_dir}", "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     close_fds=False, preexec_fn=wire_fds)
        os.close(to_child_r)
        os.close(from_child_w)
        self._next_id = 0
        self._messages = queue.Queue()
        self.events = []
        threading.Thread(target=self._reader, daemon=True).start()
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()  # drain only

    def _reader(self):
        buf = b""
        while True:
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                self._messages.put(None)
                return
            buf += chunk
            *whole, buf = buf.split(b"\0")
            for raw in whole:
                self._messages.put(json.loads(raw))

    def send(self, method, params=None, session=None):
        """Send one command and return its result; events seen meanwhile go to .events."""
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self._messages.get(timeout=max(0.1, deadline - time.monotonic()))
            if reply is None:
                raise RuntimeError(f"chromium exited (code {self.proc.poll()}) during {method}")
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method, session=None):
        deadline = time.monotonic() + TIMEOUT
        while True:
            for e in self.events:
                if e["method"] == method and (session is None or e.get("sessionId") == session):
                    return e
            msg = self._messages.get(timeout=max(0.1, deadline - time.monotonic()))
            if msg is None:
                raise RuntimeError("chromium exited while waiting for " + method)
            if "method" in msg:
                self.events.append(msg)

    def open(self, url, *, width=WIDTH, height=900, media=None):
        """A new tab with every event domain on, ``width`` x ``height`` CSS pixels (and the
        CSS ``media`` type, e.g. "print", when given), navigated to ``url``; returns its
        session."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(f"{domain}.enable", session=session)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                  session=session)
        if media:
            self.send("Emulation.setEmulatedMedia", {"media": media}, session=session)
        self.events.clear()
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session)
        self.send("Runtime.evaluate", {"expression": "1", "awaitPromise": True},
                  session=session)  # let pending console events arrive
        return session

    def evaluate(self, session, expression):
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True}, session=session)
        if "exceptionDetails" in r:
            raise RuntimeError(f"page script failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def errors(self):
        """Console errors, uncaught exceptions and browser-side error log entries."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append("uncaught: " + d.get("exception", {}).get("description", d["text"]))
            elif e["method"] == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
                out.append("console." + p["type"] + ": "
                           + " ".join(str(a.get("value", a.get("description", "")))
                                      for a in p["args"]))
            elif e["method"] == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.append(f"log ({p['entry']['source']}): {p['entry']['text']}")
        return out

    def requests(self):
        """URLs the page asked for (data: URIs do not go through the network stack)."""
        return [e["params"]["request"]["url"] for e in self.events
                if e["method"] == "Network.requestWillBeSent"]

    def mouse(self, session, kind, x, y):
        """A mouse event at viewport point (x, y): "mouseMoved", or "click" (press, release)."""
        if kind == "click":
            for t in ("mousePressed", "mouseReleased"):
                self.send("Input.dispatchMouseEvent", {"type": t, "x": x, "y": y,
                                                       "button": "left", "clickCount": 1},
                          session=session)
        else:
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y},
                      session=session)
        self.evaluate(session, "new Promise(r => requestAnimationFrame(() => r(1)))")

    def type_text(self, session, selector, text):
        """Focus ``selector`` and type ``text`` as keyboard input."""
        self.evaluate(session, f"document.querySelector({json.dumps(selector)}).focus()")
        self.send("Input.insertText", {"text": text}, session=session)
        self.evaluate(session, "new Promise(r => requestAnimationFrame(() => r(1)))")

    def center(self, session, selector):
        """Viewport coordinates of the centre of ``selector``, scrolled into view."""
        return self.evaluate(session, f"""(() => {{
            const el = document.querySelector({json.dumps(selector)});
            el.scrollIntoView({{block: "center"}});
            const r = el.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")

    def screenshot(self, session, path):
        size = self.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": WIDTH, "height": size["height"], "scale": 1}
        png = self.send("Page.captureScreenshot",
                        {"format": "png", "captureBeyondViewport": True, "clip": clip},
                        session=session)["data"]
        Path(path).write_bytes(base64.b64decode(png))
        return size

    def pdf(self, session, path):
        data = self.send("Page.printToPDF", {"printBackground": True,
                                             "preferCSSPageSize": True},
                         session=session)["data"]
        Path(path).write_bytes(base64.b64decode(data))

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:  # noqa: BLE001 - it may already be gone
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)


@pytest.fixture
def browser(tmp_path):
    b = Browser(tmp_path / "chromium-profile")
    try:
        yield b
    finally:
        b.close()


def _keep_artifact(path):
    dest = os.environ.get("GPURANK_TEST_ARTIFACTS")
    if dest:
        Path(dest).mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, Path(dest) / Path(path).name)


_FIGURE_INFO = """
Array.from(document.querySelectorAll('figure[data-figure]')).map(f => {
  const img = f.querySelector('img');
  return {name: f.dataset.figure, count: f.querySelectorAll('img, svg').length,
          complete: img.complete, natural: img.naturalWidth * img.naturalHeight,
          width: img.getBoundingClientRect().width,
          height: img.getBoundingClientRect().height,
          caption: (f.querySelector('figcaption') || {}).textContent || ''};
})
"""


def test_harness_sees_errors(browser, tmp_path):
    canary = tmp_path / "canary.html"
    canary.write_text("<!DOCTYPE html><html><body><img src='http://127.0.0.1:9/x.png'>"
                      "<script>console.error('canary error'); undefinedFunction();</script>"
                      "</body></html>", encoding="utf-8")
    browser.open(canary.as_uri())
    errors = "\n".join(browser.errors())
    assert "console.error: canary error" in errors
    assert "uncaught: ReferenceError: undefinedFunction is not defined" in errors
    assert "http://127.0.0.1:9/x.png" in browser.requests()


def test_report_in_chromium(browser, tmp_path):
    table, summary = analysis_inputs()
    path = write_report(table, summary, tmp_path / "report.html")
    session = browser.open(path.as_uri())

    assert browser.errors() == []
    assert [u for u in browser.requests() if not u.startswith(("file:", "data:"))] == []

    headings = browser.evaluate(session, "Array.from(document.querySelectorAll('section > h2'))"
                                         ".map(h => h.textContent)")
    assert headings == [title for _, title in SECTIONS]
    figs = browser.evaluate(session, _FIGURE_INFO)
    assert {f["name"] for f in figs} == ALL_FIGURES
    for f in figs:
        assert f["count"] == 1, f
        assert f["complete"] and f["natural"] > 0, f"figure {f['name']} did not decode"
        assert 250 < f["width"] <= WIDTH and f["height"] > 150, f
        assert f["caption"].strip(), f
    # nothing sticks out sideways on a laptop-width window except scrollable tables
    overflow = browser.evaluate(session, "document.querySelector('main').scrollWidth "
                                         "<= document.querySelector('main').clientWidth")
    assert overflow

    shot = tmp_path / "report-screenshot.png"
    size = browser.screenshot(session, shot)
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 50_000
    assert size["height"] > 2_000
    _keep_artifact(shot)

    pdf = tmp_path / "report-print.pdf"
    browser.pdf(session, pdf)
    assert pdf.read_bytes().startswith(b"%PDF") and pdf.stat().st_size > 50_000
    _keep_artifact(pdf)


# -- no clipped element, on a laptop screen and on paper -------------------------------------
#: A4 is 210 mm wide; the report's @page margins are 14 mm: 182 mm of content, at the 96 CSS
#: pixels per inch Chromium prints with.
A4_CONTENT_PX = round(182 / 25.4 * 96)
LAPTOP = (1366, 768)

_OUTSIDE = """
(() => {
  const W = document.documentElement.clientWidth, out = [], seen = [];
  document.querySelectorAll('figure, figure img, table, canvas, .explorer, section, main, '
                            + 'th, td').forEach(el => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return;  // not displayed (e.g. hidden in print)
    seen.push(el.tagName);
    if (r.left < -0.5 || r.right > W + 0.5)
      out.push([el.tagName, el.id || el.className || '', Math.round(r.left),
                Math.round(r.right), W]);
  });
  // a table wider than its scrolling wrapper is clipped too
  document.querySelectorAll('.table-wrap').forEach(w => {
    if (w.getBoundingClientRect().width > 0 && w.scrollWidth > w.clientWidth + 0.5)
      out.push(['table-wrap', (w.querySelector('table') || {}).id || '', w.scrollWidth,
                w.clientWidth, W]);
  });
  return {out: out, tables: seen.filter(t => t === 'TABLE').length,
          figures: seen.filter(t => t === 'FIGURE').length,
          canvases: seen.filter(t => t === 'CANVAS').length,
          pageScroll: document.documentElement.scrollWidth - W};
})()
"""


def stress_inputs():
    """An analysis whose text is long: model and provider names, a prediction basis."""
    import numpy as np
    from gpurank.engine import Engine
    from gpurank.engine.summary import build_summary
    from tables import config_table

    t = config_table(300, seed=4)
    long = {a: f"Vendor {a} accelerator, liquid-cooled HBM3e board revision {i}"
            for i, a in enumerate(sorted(t["accelerator"].unique()))}
    t["accelerator"] = t["accelerator"].map(long)
    rng = np.random.default_rng(0)
    t["provider"] = rng.choice(["Typical rate (catalog)",
                                "A provider with a rather long registered company name"],
                               len(t))
    result = Engine(backend="cpu").analyze(t, n_estimators=10, clusters="auto",
                                           k_range=(2, 5))
    summary = build_summary(result)
    for i, r in enumerate(summary["top"]):
        r["prediction_basis"] = "fitted" if i % 2 else "borrowed:H100"
    return result.table, summary


@pytest.fixture(scope="module")
def stress_report(tmp_path_factory):
    table, summary = stress_inputs()
    return write_report(table, summary, tmp_path_factory.mktemp("stress") / "report.html"), \
        summary


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    """The report of a small simulated sweep, as ``gpurank demo`` draws it."""
    from gpurank.engine import Engine
    from gpurank.engine.sources.sweep.simulate import simulate
    from gpurank.engine.summary import build_summary

    result = Engine(backend="cpu").analyze(simulate(3000, seed=0), n_estimators=10,
                                           clusters="auto", k_range=(2, 6))
    summary = build_summary(result)
    for i, r in enumerate(summary["top"]):
        r["prediction_basis"] = "fitted" if i % 3 else "borrowed:H100"
    return write_report(result.table, summary, tmp_path_factory.mktemp("demo") / "report.html")


@pytest.mark.parametrize("media, size", [("screen", LAPTOP), ("print", (A4_CONTENT_PX, 1123))],
                         ids=["laptop-1366x768", "print-A4"])
@pytest.mark.parametrize("which", ["demo", "long-text"])
def test_nothing_is_clipped(browser, demo_report, stress_report, media, size, which):
    path = stress_report[0] if which == "long-text" else demo_report
    session = browser.open(path.as_uri(), width=size[0], height=size[1], media=media)
    assert browser.errors() == []
    found = browser.evaluate(session, _OUTSIDE)
    assert found["out"] == [], found["out"]
    assert found["pageScroll"] <= 0
    assert found["figures"] == len(ALL_FIGURES) and found["tables"] >= 6
    assert found["canvases"] == (1 if media == "screen" else 0)  # print: the static figures


def test_prints_on_a4(browser, stress_report, tmp_path):
    path, _ = stress_report
    session = browser.open(path.as_uri(), width=A4_CONTENT_PX, media="print")
    pdf = tmp_path / "report-a4.pdf"
    browser.pdf(session, pdf)
    raw = pdf.read_bytes()
    assert raw.startswith(b"%PDF") and raw.count(b"/Type /Page\n") + raw.count(
        b"/Type /Page\r") + raw.count(b"/Type /Page ") + raw.count(b"/Type /Page/") >= 3
    boxes = set(re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", raw))
    assert boxes and all(abs(float(w) - 595.3) < 2 and abs(float(h) - 841.9) < 2
                         for w, h in boxes), boxes
    _keep_artifact(pdf)


# -- the interactive view and the ranking table ----------------------------------------------
_CHART = "Chart.getChart(document.querySelector('[data-explorer] canvas'))"


def test_interactive_view(browser, stress_report):
    path, summary = stress_report
    session = browser.open(path.as_uri(), width=LAPTOP[0], height=LAPTOP[1])
    assert browser.errors() == []
    state = browser.evaluate(session, """(() => {
        const root = document.querySelector('[data-explorer]');
        const data = JSON.parse(document.getElementById('explorer-data').textContent);
        const c = root.querySelector('canvas'), ctx = c.getContext('2d');
        const px = ctx.getImageData(0, 0, c.width, c.height).data;
        let ink = 0;
        for (let i = 3; i < px.length; i += 4) if (px[i] > 0) ink++;
        return {hidden: root.hidden, drawn: Number(root.dataset.drawn), shown: data.shown,
                ink: ink, width: c.getBoundingClientRect().width,
                x: root.querySelector('[data-axis=x]').value,
                y: root.querySelector('[data-axis=y]').value};
    })()""")
    assert not state["hidden"] and state["drawn"] == state["shown"] > 100
    assert state["ink"] > 5_000 and state["width"] > 600  # the chart drew
    inside = browser.evaluate(session, f"""(() => {{
        const ch = {_CHART}, a = ch.chartArea;
        return [0, 1, 2].map(d => ch.getDatasetMeta(d).data.filter(el =>
            el.x >= a.left - 1 && el.x <= a.right + 1 && el.y >= a.top - 1
            && el.y <= a.bottom + 1).length);
    }})()""")
    assert sum(inside) == state["drawn"]  # every point lies in the plot area
    assert inside[0] == len(summary["top"])  # the top rows, highlighted
    assert (state["x"], state["y"]) == ("cost_usd", "time_to_train_min")

    # hover the #1 configuration: its setup appears in the detail panel
    point = browser.evaluate(session, f"""(() => {{
        const ch = {_CHART};
        ch.canvas.scrollIntoView({{block: "center"}});
        const data = JSON.parse(document.getElementById('explorer-data').textContent);
        const meta = ch.getDatasetMeta(0);
        const k = ch.data.datasets[0].data.findIndex(p => data.rank[p.i] === 1);
        const r = ch.canvas.getBoundingClientRect();
        return [r.left + meta.data[k].x, r.top + meta.data[k].y];
    }})()""")
    browser.mouse(session, "mouseMoved", *point)
    detail = browser.evaluate(session, "document.querySelector('[data-detail]').textContent")
    top = summary["top"][0]
    assert detail.startswith(f"#1 {top['n_accelerators']} x {top['accelerator']}"), detail
    assert f"TOPSIS {top['topsis_score']:.4f}" in detail
    tooltip = browser.evaluate(session, f"{_CHART}.tooltip.getActiveElements().length")
    assert tooltip >= 1

    # other axes: the chart is redrawn on them, with the log switch following the data
    browser.evaluate(session, """(() => {
        const s = document.querySelector('[data-axis=x]');
        s.value = 'scaling_efficiency'; s.dispatchEvent(new Event('change')); })()""")
    axes = browser.evaluate(session, f"[{_CHART}.options.scales.x.title.text, "
                                     f"{_CHART}.options.scales.x.type, "
                                     "document.querySelector('[data-log=x]').checked]")
    assert axes[0].startswith("scaling efficiency, higher is better")
    assert axes[1] == ("logarithmic" if axes[2] else "linear")
    browser.evaluate(session, """(() => {
        const b = document.querySelector('[data-log=y]');
        b.checked = !b.checked; b.dispatchEvent(new Event('change')); })()""")
    assert browser.evaluate(session, f"{_CHART}.options.scales.y.type") in ("linear",
                                                                           "logarithmic")
    assert browser.errors() == []


_ROWS = """Array.from(document.querySelectorAll('#ranking-table tbody tr'))
  .filter(r => !r.hidden).map(r => r.cells[0].textContent)"""


def _column(browser, session, heading):
    return browser.evaluate(session, f"""Array.from(document.querySelectorAll(
        '#ranking-table thead th')).findIndex(th => th.textContent.startsWith({json.dumps(
        heading)}))""")


def test_ranking_table_sorts_and_filters(browser, stress_report):
    path, summary = stress_report
    session = browser.open(path.as_uri(), width=LAPTOP[0], height=LAPTOP[1])
    ranks = [str(r["rank"]) for r in summary["top"]]
    assert browser.evaluate(session, _ROWS) == ranks

    j = _column(browser, session, "TOPSIS")
    assert j > 0
    head = f"#ranking-table thead th:nth-child({j + 1})"
    browser.mouse(session, "click", *browser.center(session, head))
    by_score = sorted(summary["top"], key=lambda r: (r["topsis_score"], r["rank"]))
    assert browser.evaluate(session, _ROWS) == [str(r["rank"]) for r in by_score]
    assert browser.evaluate(session, f"document.querySelector('{head}')"
                                     ".getAttribute('aria-sort')") == "ascending"
    browser.mouse(session, "click", *browser.center(session, head))
    assert browser.evaluate(session, _ROWS) == ranks  # descending: the ranking again

    k = _column(browser, session, "configuration")
    browser.mouse(session, "click", *browser.center(
        session, f"#ranking-table thead th:nth-child({k + 1})"))
    texts = browser.evaluate(session, f"""Array.from(document.querySelectorAll(
        '#ranking-table tbody tr')).map(r => r.cells[{k}].textContent.toLowerCase())""")
    assert texts == sorted(texts)

    # filter: only the rows holding every word stay
    word = "fitted"
    browser.type_text(session, ".table-filter input", word)
    expected = [str(r["rank"]) for r in summary["top"] if r["prediction_basis"] == word]
    assert sorted(browser.evaluate(session, _ROWS), key=int) == expected
    assert browser.evaluate(session, "document.querySelector('.table-filter span')"
                                     ".textContent") == f"{len(expected)} of {len(ranks)} rows"
    browser.evaluate(session, """(() => { const i = document.querySelector('.table-filter input');
        i.value = ''; i.dispatchEvent(new Event('input')); })()""")
    assert len(browser.evaluate(session, _ROWS)) == len(ranks)
    assert browser.errors() == []
