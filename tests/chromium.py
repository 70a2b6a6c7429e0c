"""Headless Chromium for the tests of the catalog page, with the standard library only.

``dom_check`` loads a copy of a page with a small script put first in its ``<head>`` (before
the page's own Content-Security-Policy, which therefore does not apply to it). The script
records every error event (a script error or a resource that fails to load) and every
``console.error`` / ``console.warn``, and once the page has loaded writes what it found —
the sections, the contents' links, every image's ``naturalWidth`` — as JSON into the DOM,
which ``chromium --dump-dom`` prints. Console messages Chromium logs itself (a refused
resource, a policy violation) are read from its log on stderr as well.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

NAMES = ("chromium", "chromium-browser", "google-chrome")
TIMEOUT_S = 120
RESULT_ID = "dcnsim-check"

PROBE = """<script>
(function () {
  var errors = [];
  window.addEventListener('error', function (e) {
    var t = e.target;
    if (t && t !== window && t.tagName) {
      errors.push('failed to load <' + t.tagName.toLowerCase() + '> '
                  + String(t.src || t.href || '').slice(0, 60));
    } else {
      errors.push('script error: ' + e.message);
    }
  }, true);
  ['error', 'warn'].forEach(function (level) {
    var original = console[level];
    console[level] = function () {
      errors.push('console.' + level + ': ' + Array.prototype.join.call(arguments, ' '));
      original.apply(console, arguments);
    };
  });
  document.addEventListener('securitypolicyviolation', function (e) {
    errors.push('policy violation: ' + e.violatedDirective + ' ' + e.blockedURI);
  });
  window.addEventListener('load', function () {
    var all = function (selector) {
      return Array.prototype.slice.call(document.querySelectorAll(selector));
    };
    var result = {
      sections: all('section.experiment').map(function (s) {
        return {id: s.getAttribute('data-id'), anchor: s.id,
                verdict: s.getAttribute('data-verdict')};
      }),
      contents: all('#contents a[href^="#"]').map(function (a) {
        return a.getAttribute('href').slice(1);
      }),
      images: all('img').map(function (i) {
        var section = i.closest('section');
        return {section: section ? section.getAttribute('data-id') : null, alt: i.alt,
                complete: i.complete, width: i.naturalWidth, height: i.naturalHeight};
      }),
      errors: errors
    };
    var pre = document.createElement('pre');
    pre.id = '""" + RESULT_ID + """';
    pre.textContent = JSON.stringify(result);
    document.body.appendChild(pre);
  });
})();
</script>"""

# "[pid:tid:time:INFO:CONSOLE:3] "message", source: ..." (older builds: "CONSOLE(3)]")
_CONSOLE = re.compile(r":CONSOLE(:\d+|\(\d+\))\]")


def find() -> str | None:
    """The Chromium executable, or None."""
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    exe = find()
    assert exe is not None, "chromium is not installed (scripts/test-all.sh installs it)"
    command = [exe, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
               "--disable-extensions", "--disable-dev-shm-usage", "--hide-scrollbars",
               "--force-device-scale-factor=1", f"--user-data-dir={profile}", *args]
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": "disabled:"}
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S,
                          check=False, env=env)


def dom_check(page: Path, work: Path) -> dict[str, Any]:
    """Load ``page`` in headless Chromium and return what the probe found (``sections``,
    ``contents``, ``images``, ``errors``; Chromium's own console lines are added to
    ``errors``)."""
    work.mkdir(parents=True, exist_ok=True)
    text = page.read_text(encoding="utf-8")
    head = re.search(r"<head[^>]*>", text, re.IGNORECASE)
    assert head is not None, "the page has no <head>"
    probed = work / "probed.html"
    probed.write_text(text[:head.end()] + PROBE + text[head.end():], encoding="utf-8")
    proc = _run(["--enable-logging=stderr", "--v=0", "--virtual-time-budget=20000",
                 "--dump-dom", probed.as_uri()], work / "profile")
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = re.search(rf'<pre id="{RESULT_ID}">(.*?)</pre>', proc.stdout, re.DOTALL)
    assert found is not None, "the probe did not run: " + proc.stderr[-2000:]
    result: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    result["errors"] += [line for line in proc.stderr.splitlines() if _CONSOLE.search(line)]
    return result


def screenshot(page: Path, png: Path, width: int, height: int) -> None:
    """A ``width`` x ``height`` screenshot of the top of ``page``."""
    proc = _run([f"--window-size={width},{height}", f"--screenshot={png}", page.as_uri()],
                png.parent / "profile")
    assert proc.returncode == 0 and png.exists(), proc.stderr[-2000:]
