"""A real headless Chromium (Debian's package) driven by Playwright, and screenshot artifacts.

Chromium is launched from /usr/bin/chromium with the flags that keep it off
the network (`.ci/run` installs the package); Playwright's own browser
download is never used. Screenshots go to $INTROSPECTION_TEST_ARTIFACTS, else
to a temporary directory; the path is printed at the end of the run.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]
_ARTIFACTS: list[Path] = []


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Module-scoped on purpose: while Playwright's sync API is started, its event loop
    counts as running in this thread, and any later test calling asyncio.run() fails."""
    from playwright.sync_api import sync_playwright

    assert shutil.which(CHROMIUM), (f"{CHROMIUM} is missing: install Debian's chromium "
                                    "package (`bash .ci/run` does)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS,
                                              headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser context 80 columns wide (about 660 CSS pixels of text)."""
    context = browser.new_context(viewport={"width": 660, "height": 900})
    opened = context.new_page()
    yield opened
    context.close()


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    configured = os.environ.get("INTROSPECTION_TEST_ARTIFACTS")
    directory = Path(configured) if configured else tmp_path_factory.mktemp("screenshots")
    directory.mkdir(parents=True, exist_ok=True)
    _ARTIFACTS.append(directory)
    return directory


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for directory in _ARTIFACTS:
        terminalreporter.write_line(f"labelling app screenshots: {directory}")
