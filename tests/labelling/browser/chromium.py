"""Which Chromium the browser tests drive, on any machine.

In order: the executable ``$INTROSPECTION_TEST_CHROMIUM`` names; the first of
``chromium``, ``chromium-browser``, ``google-chrome`` on ``PATH``; Playwright's
own browser (``python -m playwright install chromium``). Without any, the
tests fail with :data:`HOW_TO_INSTALL`, never skip.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

ENV = "INTROSPECTION_TEST_CHROMIUM"
ON_PATH = ("chromium", "chromium-browser", "google-chrome")
#: Flags that keep the browser off the network and working as root in a container.
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HOW_TO_INSTALL = (
    "the browser tests need Chromium or Chrome and found none: set "
    f"{ENV}=/path/to/chromium, put one of {', '.join(ON_PATH)} on PATH (Debian/Ubuntu: "
    "`apt-get install chromium`; `bash .ci/run` does), or install Playwright's own with "
    "`python -m playwright install chromium`")


class NoChromium(Exception):
    """No browser to run the browser tests with; the message says how to get one."""


def find_chromium(environ: Mapping[str, str], playwright_browser: str | None) -> str:
    """The executable to launch: from ``environ`` (its variable, then its ``PATH``), else
    ``playwright_browser`` (Playwright's own, when it is installed).

    A variable naming something that is not an executable file is an error, not a
    reason to look elsewhere: the run would drive another browser than the one asked for.
    """
    named = environ.get(ENV, "").strip()
    if named:
        if not (os.path.isfile(named) and os.access(named, os.X_OK)):
            raise NoChromium(f"{ENV}={named} is not an executable file; point it at "
                             "Chromium or Chrome, or unset it")
        return named
    for name in ON_PATH:
        found = shutil.which(name, path=environ.get("PATH", os.defpath))
        if found:
            return found
    if playwright_browser and os.path.isfile(playwright_browser):
        return playwright_browser
    raise NoChromium(HOW_TO_INSTALL)
