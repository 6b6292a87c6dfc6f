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

    def open(self, url):
        """A new tab with every event domain on, navigated to ``url``; returns its session."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(f"{domain}.enable", session=session)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                  session=session)
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

    def screenshot(self, session, path):
        size = self.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": WIDTH, "height": size["height"], "scale": 1}
        png = self.send("Page.captureScreenshot",
                        {"format": "png", "captureBeyondViewport": True, "clip": clip},
                        session=session)["data"]
        Path(path).write_bytes(base64.b64decode(png))
        return size

    def pdf(self, session, path):
        data = self.send("Page.printToPDF", {"printBackground": True}, session=session)["data"]
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
