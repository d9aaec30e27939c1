"""The browser tests find Chromium on any machine, or fail saying how to install one.

The order is $INTROSPECTION_TEST_CHROMIUM, then chromium, chromium-browser,
google-chrome on PATH, then Playwright's own browser. The end-to-end cases run
a browser test in a child pytest whose PATH holds only a wrapper around this
machine's Chromium (the wrapper leaves a mark, so the test knows it was the one
launched), or nothing at all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.labelling.browser.chromium import ENV, NoChromium, find_chromium

CHILD_TEST = """
from tests.labelling.browser.conftest import browser  # noqa: F401 (the fixture)


def test_a_page_renders(browser):
    page = browser.new_page()
    page.set_content("<p id=x>ok</p>")
    assert page.text_content("#x") == "ok"
"""


def _executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_the_variable_comes_first(tmp_path: Path) -> None:
    named = _executable(tmp_path / "mine" / "chrome")
    _executable(tmp_path / "bin" / "chromium")
    found = find_chromium({ENV: str(named), "PATH": str(tmp_path / "bin")}, None)
    assert found == str(named)


@pytest.mark.parametrize("named", ["missing", "not-executable", "directory"])
def test_a_variable_naming_no_executable_is_an_error(tmp_path: Path, named: str) -> None:
    target = tmp_path / named
    if named == "not-executable":
        target.write_text("")
    elif named == "directory":
        target.mkdir()
    _executable(tmp_path / "bin" / "chromium")
    with pytest.raises(NoChromium, match=f"{ENV}={target} is not an executable file"):
        find_chromium({ENV: str(target), "PATH": str(tmp_path / "bin")}, None)


def test_path_is_searched_in_order(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    chrome = _executable(first / "google-chrome")
    browser = _executable(second / "chromium-browser")
    search = os.pathsep.join([str(first), str(second)])
    assert find_chromium({"PATH": search}, None) == str(browser)
    plain = _executable(second / "chromium")
    assert find_chromium({"PATH": search}, None) == str(plain)
    plain.unlink()
    browser.unlink()
    assert find_chromium({"PATH": search}, None) == str(chrome)


def test_playwrights_own_browser_is_the_last_resort(tmp_path: Path) -> None:
    own = _executable(tmp_path / "ms-playwright" / "chrome")
    assert find_chromium({"PATH": str(tmp_path / "empty")}, str(own)) == str(own)
    with pytest.raises(NoChromium, match="playwright install chromium"):
        find_chromium({"PATH": str(tmp_path / "empty")}, str(tmp_path / "not-installed"))


def _child_pytest(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    test = tmp_path / "child" / "test_child_browser.py"
    test.parent.mkdir(exist_ok=True)
    test.write_text(CHILD_TEST)
    base = {k: v for k, v in os.environ.items()
            if k not in ("PATH", ENV) and not k.startswith("PLAYWRIGHT")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(test),
         "--rootdir", str(test.parent)],
        cwd=test.parent, capture_output=True, text=True, timeout=120, check=False,
        env={**base, "PYTHONPATH": str(REPO), "PLAYWRIGHT_BROWSERS_PATH": str(tmp_path / "pw"),
             **env})


def _wrapper(path: Path, mark: Path) -> Path:
    """An executable that launches this machine's Chromium and leaves ``mark``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        own = playwright.chromium.executable_path
    real = find_chromium(os.environ, own)
    return _executable(path, f'#!/bin/sh\n: > "{mark}"\nPATH={os.environ["PATH"]} '
                             f'exec "{real}" "$@"\n')


@pytest.mark.parametrize("where", ["variable", "path"])
def test_a_browser_test_runs_with_the_chromium_found(tmp_path: Path, where: str) -> None:
    mark = tmp_path / "launched"
    bin_dir = tmp_path / "bin"
    if where == "variable":
        env = {ENV: str(_wrapper(tmp_path / "elsewhere" / "my-chrome", mark)),
               "PATH": str(bin_dir)}
    else:
        env = {"PATH": str(_wrapper(bin_dir / "chromium-browser", mark).parent)}
    result = _child_pytest(tmp_path, env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert mark.exists(), "the browser launched was not the one found"


def test_without_any_chromium_the_tests_fail_saying_how_to_install_one(tmp_path: Path) -> None:
    result = _child_pytest(tmp_path, {"PATH": str(tmp_path / "empty")})
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "1 error" in output and "skipped" not in output
    assert "found none" in output and "python -m playwright install chromium" in output
    assert "apt-get install chromium" in output and ENV in output
