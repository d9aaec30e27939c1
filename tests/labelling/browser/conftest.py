"""A real headless Chromium driven by Playwright, and screenshot artifacts.

The browser is the one :func:`~tests.labelling.browser.chromium.find_chromium`
finds ($INTROSPECTION_TEST_CHROMIUM, then chromium, chromium-browser or
google-chrome on PATH, then Playwright's own), launched with the flags that
keep it off the network; without one the tests fail saying how to install it.
Screenshots go to $INTROSPECTION_TEST_ARTIFACTS, else to a temporary
directory; the path is printed at the end of the run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.labelling.browser.chromium import FLAGS, NoChromium, find_chromium

_ARTIFACTS: list[Path] = []


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Module-scoped on purpose: while Playwright's sync API is started, its event loop
    counts as running in this thread, and any later test calling asyncio.run() fails."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        try:
            executable = find_chromium(os.environ, playwright.chromium.executable_path)
        except NoChromium as exc:
            pytest.fail(str(exc), pytrace=False)
        launched = playwright.chromium.launch(executable_path=executable, args=FLAGS,
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
