"""`introspection doctor` as a user runs it: a real process, with keys set, unset and wrong.

Every run gets a clean environment (no key, browser or display from the shell
running the tests), a home of its own, and the stub runtime when it needs one.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.evaluation.old_ledger import write_old_ledger
from tests.runtime.stub_runtime import StubRuntime

TOKEN = "itk_doctor_sentinel_4c1e9a"
PLANTED = {
    "OPENAI_API_KEY": "sk-PLANTED-openai-7d2f01",
    "ANTHROPIC_API_KEY": "sk-ant-PLANTED-anthropic-93be44",
    # Credentials pasted into a base URL are secrets too: user info and query values.
    "OPENAI_BASE_URL": "http://planteduser:PLANTEDPASS@127.0.0.1:9/v1?api-key=PLANTEDQUERY",
}


def clean_env(home: Path, **env: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CONFIG_HOME": str(home / "cfg"),
            "XDG_CACHE_HOME": str(home / "cache"), "INTROSPECTION_HTTP_TIMEOUT": "5", **env}


def doctor(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "introspection_cli", "doctor", *args],
                          env=clean_env(home, **env), capture_output=True, text=True,
                          timeout=60, check=False, cwd=home)


def findings(result: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    return {f["topic"]: f for f in json.loads(result.stdout)["findings"]}


@pytest.fixture
def runtime() -> Iterator[StubRuntime]:
    stub = StubRuntime(TOKEN).start()
    yield stub
    stub.stop()


def test_nothing_wrong_is_exit_0(tmp_path: Path, runtime: StubRuntime) -> None:
    result = doctor(tmp_path, OPENAI_API_KEY=PLANTED["OPENAI_API_KEY"],
                    INTROSPECTION_API_URL=runtime.url, INTROSPECTION_TOKEN=TOKEN)
    assert result.returncode == 0, result.stdout
    assert result.stdout.endswith("\nno problems found\n")
    statuses = {line.split()[1]: line.split()[0] for line in result.stdout.splitlines()[:-2]
                if line and not line.startswith(" ")}
    assert statuses == {"python": "ok", "packages": "ok", "openai": "ok", "anthropic": "note",
                        "runtime": "ok", "cache": "ok", "exposure": "ok", "prices": "note",
                        "browser": "note"}
    assert f"ok       runtime    {runtime.url} answers: logged in as ada@example.com (Acme) " \
           "(token from INTROSPECTION_TOKEN)" in result.stdout


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_no_key_token_or_url_secret_is_ever_shown(tmp_path: Path, runtime: StubRuntime,
                                                  fmt: str) -> None:
    planted = {**PLANTED, "INTROSPECTION_API_URL": runtime.url, "INTROSPECTION_TOKEN": TOKEN}
    for env in (planted, {**planted, "INTROSPECTION_TOKEN": TOKEN + "-wrong"}):
        result = doctor(tmp_path, "--format", fmt, **env)
        shown = result.stdout + result.stderr
        for secret in [*PLANTED.values(), TOKEN, "planteduser", "PLANTEDPASS", "PLANTEDQUERY"]:
            if secret.startswith("http"):
                continue  # the URL itself is shown masked, checked part by part
            assert secret not in shown, (secret, env is planted)
        assert "http://***@127.0.0.1:9/v1?api-key=***" in shown


def test_keys_set_and_unset(tmp_path: Path) -> None:
    none = findings(doctor(tmp_path, "--format", "json"))
    assert (none["openai"]["status"], none["anthropic"]["status"]) == ("note", "note")
    assert none["model keys"]["status"] == "problem"
    assert "OPENAI_API_KEY=... or ANTHROPIC_API_KEY=..." in none["model keys"]["fix"]
    both = findings(doctor(tmp_path, "--format", "json", OPENAI_API_KEY="k1",
                           ANTHROPIC_API_KEY="k2"))
    assert "model keys" not in both
    assert both["openai"]["facts"] == {
        "key_variable": "OPENAI_API_KEY", "key_set": True, "base_url_variable":
        "OPENAI_BASE_URL", "base_url_set": False, "endpoint": "https://api.openai.com/v1"}
    blank = findings(doctor(tmp_path, "--format", "json", OPENAI_API_KEY="  "))
    assert blank["openai"]["facts"]["key_set"] is False


def test_a_base_url_that_is_not_http_is_a_problem(tmp_path: Path) -> None:
    result = doctor(tmp_path, "--format", "json", ANTHROPIC_API_KEY="k",
                    ANTHROPIC_BASE_URL="localhost:8080")
    assert result.returncode == 1
    found = findings(result)["anthropic"]
    assert found["status"] == "problem"
    assert found["fix"] == "set ANTHROPIC_BASE_URL to the server's base URL, or unset it"


def test_the_model_sdks_are_never_imported(tmp_path: Path) -> None:
    heavy = ("openai", "anthropic", "jinja2", "rich", "aiohttp", "pydantic")
    code = ("import sys\n"
            "from introspection_cli.cli.app import main\n"
            "try:\n"
            "    main(['doctor', '--format', 'json'])\n"
            "except SystemExit:\n"
            "    pass\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r}))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False, cwd=REPO, env=clean_env(tmp_path, OPENAI_API_KEY="k"))
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr


def test_the_cache_and_the_exposure_files_are_located(tmp_path: Path) -> None:
    cache = tmp_path / "my-cache"
    found = findings(doctor(tmp_path, "--format", "json", INTROSPECTION_CACHE_DIR=str(cache)))
    assert found["cache"]["status"] == "ok"
    assert found["cache"]["detail"] == f"{cache} (INTROSPECTION_CACHE_DIR)"
    ledger = cache / "evaluations.sqlite3"
    assert found["exposure"]["facts"] == {"recipe_file": "judges/<name>.exposure.jsonl",
                                          "ledger": str(ledger), "ledger_exists": False}
    assert found["exposure"]["detail"].startswith(
        "recorded in each recipe, beside its judge: judges/<name>.exposure.jsonl")
    assert "nothing to migrate" in found["exposure"]["detail"]
    write_old_ledger(cache, "helpful", "sha256:" + "b" * 64, [("c1", "test", "pass")])
    old = findings(doctor(tmp_path, "--format", "json", INTROSPECTION_CACHE_DIR=str(cache)))
    assert old["exposure"]["status"] == "note" and old["exposure"]["facts"]["ledger_exists"]
    assert (f"the evaluation ledger {ledger} keeps dev figures, and any test rows an earlier "
            "version recorded in it are migrated once") in old["exposure"]["detail"]
    default = findings(doctor(tmp_path, "--format", "json"))
    assert default["cache"]["facts"]["directory"] == str(tmp_path / "cache" / "introspection")
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    unusable = findings(doctor(tmp_path, "--format", "json",
                               INTROSPECTION_CACHE_DIR=str(blocked / "cache")))
    assert unusable["cache"]["status"] == "problem"
    assert f"{blocked} is not a directory" in unusable["cache"]["detail"]
    assert unusable["cache"]["fix"].startswith("set INTROSPECTION_CACHE_DIR to a directory")


def test_the_price_table_found_and_whether_it_parses(tmp_path: Path) -> None:
    table = tmp_path / "prices.toml"
    table.write_text('["gpt-5.6-luna"]\ninput = 1.25\ncached_input = 0.125\noutput = 10.0\n')
    good = findings(doctor(tmp_path, "--format", "json", INTROSPECTION_PRICES=str(table)))
    assert good["prices"]["status"] == "ok"
    assert good["prices"]["facts"]["models"] == ["gpt-5.6-luna"]
    table.write_text('["gpt-5.6-luna"]\ninput = "cheap"\n')
    bad = findings(doctor(tmp_path, "--format", "json", INTROSPECTION_PRICES=str(table)))
    assert bad["prices"]["status"] == "problem"
    assert str(table) in bad["prices"]["detail"] and "input" in bad["prices"]["detail"]
    assert bad["prices"]["facts"]["parses"] is False
    missing = findings(doctor(tmp_path, "--format", "json",
                              INTROSPECTION_PRICES=str(tmp_path / "nope.toml")))
    assert missing["prices"]["status"] == "problem"
    assert "unset INTROSPECTION_PRICES" in missing["prices"]["fix"]
    stored = tmp_path / "cfg" / "introspection" / "prices.toml"
    found = findings(doctor(tmp_path, "--format", "json"))
    assert found["prices"]["status"] == "note"
    assert found["prices"]["detail"].startswith(f"no price table at {stored}")


def fake_browser(tmp_path: Path) -> tuple[Path, Path]:
    """An executable that would leave a mark if anything started it."""
    mark = tmp_path / "browser-was-started"
    script = tmp_path / "fake-browser"
    script.write_text(f"#!/bin/sh\ntouch {mark}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, mark


def test_the_browser_is_looked_up_but_never_opened(tmp_path: Path) -> None:
    script, mark = fake_browser(tmp_path)
    for browser in (str(script), f"{script} %s &"):  # a foreground and a background command
        found = findings(doctor(tmp_path, "--format", "json", BROWSER=browser))["browser"]
        assert found["status"] == "ok"
        assert found["facts"] == {"found": True, "name": str(script)}
        assert found["detail"] == f"judges label opens {script}"
    assert not mark.exists()


def test_a_browser_command_that_does_not_exist_is_a_problem(tmp_path: Path) -> None:
    result = doctor(tmp_path, "--format", "json", BROWSER="no-such-browser-5e1")
    assert result.returncode == 1
    found = findings(result)["browser"]
    assert found["status"] == "problem" and "'no-such-browser-5e1'" in found["detail"]
    assert found["fix"] == "set BROWSER to a browser command on your PATH, or unset it"


def test_no_browser_at_all_is_only_a_note(tmp_path: Path) -> None:
    found = findings(doctor(tmp_path, "--format", "json"))["browser"]
    assert found["status"] == "note" and found["facts"] == {"found": False}


def test_an_unknown_format_is_a_usage_error(tmp_path: Path) -> None:
    result = doctor(tmp_path, "--format", "xml")
    assert result.returncode == 2 and result.stdout == ""
    assert "unknown format 'xml'; use one of: text, json" in result.stderr
