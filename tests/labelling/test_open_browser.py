"""`judges label` opens the browser without waiting for it.

Python's webbrowser waits for a foreground browser command to exit (a terminal
browser such as lynx or w3m, or a plain ``BROWSER=command``). The browser must
still get the page: the server answers while the browser runs.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from tests.labelling.recipes import GATED_JUDGE, row, write_recipe

#: A foreground "browser": fetches the page it is given and writes down what it got.
_BROWSER = """\
import http.cookiejar, sys, urllib.error, urllib.request
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(
    http.cookiejar.CookieJar()))  # the page trades the token in its address for a cookie
try:
    with opener.open(sys.argv[1], timeout=5) as answer:
        got = str(answer.status)
except urllib.error.HTTPError as exc:
    got = f"HTTP {exc.code}"
except Exception as exc:
    got = type(exc).__name__
open(sys.argv[2], "w").write(got)
"""


def test_a_foreground_browser_gets_the_page(tmp_path: Path) -> None:
    recipe = write_recipe(tmp_path / "r", {"billing": (GATED_JUDGE, [row("c1", "refund")])})
    got = tmp_path / "got"
    script = tmp_path / "browser"
    (tmp_path / "browser.py").write_text(_BROWSER)
    script.write_text(f'#!/bin/sh\nexec {sys.executable} {tmp_path / "browser.py"} "$1" {got}\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("INTROSPECTION_") and k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    process = subprocess.Popen(
        [sys.executable, "-m", "introspection_cli", "judges", "label", str(recipe)],
        env={**env, "BROWSER": str(script)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        deadline = time.monotonic() + 30
        while not got.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert got.read_text() == "200", out + err
