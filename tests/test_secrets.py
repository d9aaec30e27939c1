"""No secret ever leaves the process: every command, with sentinel keys and token.

One module-scoped scenario runs every command the CLI has, success and error paths,
as real subprocesses against the stub model servers and the stub runtime, then
searches every byte they could have left behind for each sentinel: stdout, stderr,
reports and output files, the cache directory (SQLite database, WAL and SHM
files), the config directory (except the credentials file, where the token
belongs) and the home directory. Each sentinel is searched raw, URL-encoded,
hex-encoded and base64-encoded at all three alignments (a secret inside a longer
base64 string, such as an encoded Authorization header, is still found).
"""

from __future__ import annotations

import base64
import contextlib
import json
import sqlite3
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.evaluation.conftest import GATED_JUDGE, UNGATED_JUDGE
from tests.evaluation.stub_model_server import StubModelServer
from tests.fixture.rowmaker import fixture_envelope
from tests.runtime.stub_runtime import StubRuntime, json_reply
from tests.support.http_stub import unused_port

# Characters that URL-encoding and base64 change, so each form is a distinct search.
OPENAI_KEY = "sk-SENTINEL+openai/key=7d1e0b"
ANTHROPIC_KEY = "sk-ant-SENTINEL+anthropic/key=3c9a"
WRONG_KEY = "sk-SENTINEL+rejected/key=5b2f"
TOKEN = "itk_SENTINEL+runtime/token=9f2c"
WRONG_TOKEN = "itk_SENTINEL+wrong/token=4e8d"
SENTINELS = (OPENAI_KEY, ANTHROPIC_KEY, WRONG_KEY, TOKEN, WRONG_TOKEN)

JUDGES = {
    "billing": ("openai", GATED_JUDGE.format(provider="openai")),
    "helpful": ("anthropic", UNGATED_JUDGE.format(provider="anthropic")),
}


def encoded_forms(secret: str) -> dict[str, bytes]:
    """Every form of ``secret`` worth searching for, by name."""
    raw = secret.encode()
    forms = {"raw": raw, "url": urllib.parse.quote(secret, safe="").encode(),
             "url-plus": urllib.parse.quote_plus(secret).encode(), "hex": raw.hex().encode()}
    for shift in range(3):
        for name, encode in (("base64", base64.b64encode), ("base64url", base64.urlsafe_b64encode)):
            # Encode behind `shift` filler bytes, keep only the characters that depend
            # on the secret alone: they appear in any base64 text containing it.
            encoded = encode(b"\0" * shift + raw)
            start = (shift * 4 + 2) // 3
            end = (len(raw) + shift) // 3 * 4
            forms[f"{name}@{shift}"] = encoded[start:end]
    return forms


def leaks(data: bytes) -> list[str]:
    """Which sentinels, in which form, ``data`` contains."""
    return [f"{secret} ({form})" for secret in SENTINELS
            for form, needle in encoded_forms(secret).items() if needle in data]


def row(conversation_id: str, text: str, expected: str, split: str | None) -> dict[str, object]:
    judge_input = {"conversation_id": conversation_id,
                   "events": [{"type": "message", "role": "user", "text": text},
                              {"type": "message", "role": "assistant", "text": "Looking."}]}
    return fixture_envelope(judge_input, expected=expected, split=split,
                            runtime_url="https://rt.example")


def write_recipe(root: Path, texts: list[tuple[str, str]]) -> Path:
    (root / "judges").mkdir(parents=True)
    (root / "SYSTEM.md").write_text("You are a support agent.\n", encoding="utf-8")
    lines = "".join(json.dumps(row(f"conv_{i}", text, expected, ("dev", "test", None)[i % 3]))
                    + "\n" for i, (text, expected) in enumerate(texts))
    for name, (_, yaml_text) in JUDGES.items():
        (root / "judges" / f"{name}.yaml").write_text(yaml_text, encoding="utf-8")
        (root / "judges" / f"{name}.calibration.jsonl").write_text(lines, encoding="utf-8")
    return root


@contextlib.contextmanager
def held_open(cache_dir: Path) -> Iterator[None]:
    """Keep a reader on every SQLite database in ``cache_dir`` (its WAL then outlives the CLI)."""
    connections = [sqlite3.connect(path) for path in cache_dir.iterdir()
                   if path.read_bytes()[:16] == b"SQLite format 3\0"]
    assert connections, f"no SQLite database in {cache_dir}"
    try:
        for connection in connections:
            connection.execute("SELECT count(*) FROM sqlite_master").fetchall()
        yield
    finally:
        for connection in connections:
            connection.close()


def closed_port_url() -> str:
    return f"http://127.0.0.1:{unused_port()}"


@dataclass
class Scenario:
    root: Path
    env: dict[str, str]
    runs: list[tuple[list[str], subprocess.CompletedProcess[str]]] = field(default_factory=list)
    snapshots: dict[str, bytes] = field(default_factory=dict)  # cache files, read mid-life

    def run(self, *args: str, expect: int, env: dict[str, str] | None = None,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        result = run_cli(list(args), cwd=self.root, env={**self.env, **(env or {})},
                         input_text=stdin)
        self.runs.append((list(args), result))
        assert result.returncode == expect, (args, result.stdout[-2000:], result.stderr[-2000:])
        assert "Traceback" not in result.stderr
        return result

    @property
    def credentials(self) -> Path:
        return self.root / "config" / "credentials.json"


def run_every_command(s: Scenario, openai: StubModelServer, runtime: StubRuntime) -> None:
    recipe = write_recipe(s.root / "recipe", [("refund VERDICT:pass", "pass"),
                                               ("invoice VERDICT:fail", "fail"),
                                               ("hello there", "not_applicable"),
                                               ("refund please VERDICT:fail", "pass")])
    failing = write_recipe(s.root / "failing", [("refund FAULT:500-always", "pass")])
    s.run("init", str(s.root / "scaffold"), expect=0)
    s.run("init", str(s.root / "scaffold"), expect=2)
    for fmt in ("text", "json", "github"):
        s.run("check", str(recipe), "--format", fmt, expect=0)
    for name in ("judge", "eval-report"):
        s.run("schema", name, expect=0)
    fast = ["--max-retries", "1", "--timeout", "5"]
    report = s.root / "out" / "report.json"
    s.run("judges", "eval", str(recipe), "--output", str(report), *fast, expect=0)
    for fmt in ("text", "json", "markdown"):
        s.run("judges", "eval", str(recipe), "--format", fmt, "--baseline", str(report),
              "--output", str(s.root / "out" / f"again-{fmt}.json"), *fast, expect=0)
    with held_open(s.root / "cache"):
        # New samples are new cache entries, written while another connection keeps
        # the database open, so the WAL and SHM files still exist when we read them.
        s.run("judges", "eval", str(recipe), "--samples", "3", *fast, expect=0)
        s.snapshots.update({p.name: p.read_bytes() for p in (s.root / "cache").iterdir()})
    for fmt in ("text", "json"):
        s.run("judges", "render", str(recipe), "billing", "--line", "1", "--format", fmt, expect=0)
    # A rejected key (401), and a provider that keeps failing (500 until retries run out).
    s.run("judges", "eval", str(recipe), "--no-cache", *fast, expect=2,
          env={"OPENAI_API_KEY": WRONG_KEY, "ANTHROPIC_API_KEY": WRONG_KEY})
    s.run("judges", "eval", str(failing), "--format", "json", "--output",
          str(s.root / "out" / "failing.json"), *fast, expect=3)

    ids = s.root / "ids.txt"
    ids.write_text("# export\nconv_01\nconv_02\nconv_99\n", encoding="utf-8")
    s.run("login", "--url", runtime.url, "--token-stdin", stdin=TOKEN + "\n", expect=0)
    assert leaks(s.credentials.read_bytes()), "the search must find the stored token"
    # doctor names each key and the login it finds, never their values; BROWSER is set
    # so that the shell running the tests cannot make the browser a problem.
    for fmt in ("text", "json"):
        s.run("doctor", "--format", fmt, expect=0, env={"BROWSER": sys.executable})
        s.run("doctor", "--format", fmt, expect=1, env={"INTROSPECTION_TOKEN": WRONG_TOKEN})
    get = ["conversations", "get", "--ids-file", str(ids)]
    fixtures = [*get, "--judge-fixtures", "--format", "json"]
    s.run(*fixtures, "--output", str(s.root / "out" / "export.jsonl"), expect=1)
    s.run(*fixtures, "--append-to",
          str(recipe / "judges" / "billing.calibration.jsonl"), expect=1)
    s.run(*get, expect=1)
    runtime.script(json_reply(401, {"error": {"message": "token revoked"}}))
    s.run(*fixtures, expect=2)
    runtime.script(*[json_reply(503, {"error": {"message": "busy"}}, Retry_After="0")] * 3)
    s.run(*fixtures, expect=3)
    s.run(*get, expect=3, env={"INTROSPECTION_API_URL": closed_port_url(),
                               "INTROSPECTION_TOKEN": TOKEN})
    s.run(*get, expect=1, env={"INTROSPECTION_TOKEN": TOKEN})
    s.run("login", "--url", runtime.url, "--token-stdin", stdin=WRONG_TOKEN + "\n", expect=2)
    s.run("logout", expect=0)
    s.run("logout", expect=0)
    assert openai.requests, "the eval runs must have reached the model stub"


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    root = tmp_path_factory.mktemp("secrets")
    (root / "out").mkdir()
    with StubModelServer(api_key=OPENAI_KEY) as openai, \
            StubModelServer(api_key=ANTHROPIC_KEY) as anthropic:
        runtime = StubRuntime(TOKEN).start()
        try:
            s = Scenario(root, {
                "OPENAI_API_KEY": OPENAI_KEY, "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
                "OPENAI_BASE_URL": openai.openai_url, "ANTHROPIC_BASE_URL": anthropic.anthropic_url,
                "INTROSPECTION_CACHE_DIR": str(root / "cache"),
                "INTROSPECTION_CONFIG_DIR": str(root / "config"),
                "HOME": str(root / "home"), "XDG_CONFIG_HOME": str(root / "home" / ".config"),
                "XDG_CACHE_HOME": str(root / "home" / ".cache"),
                "INTROSPECTION_HTTP_ATTEMPTS": "3", "INTROSPECTION_HTTP_MAX_WAIT": "0.05",
                "INTROSPECTION_HTTP_TIMEOUT": "5"})
            run_every_command(s, openai, runtime)
            yield s
        finally:
            runtime.stop()


def test_every_command_ran(scenario: Scenario) -> None:
    commands = {" ".join(args[:2]) for args, _ in scenario.runs}
    assert {"check " + str(scenario.root / "recipe"), "schema judge", "judges eval",
            "judges render", "login --url", "logout", "conversations get", "doctor --format",
            "init " + str(scenario.root / "scaffold")} <= commands
    assert {result.returncode for _, result in scenario.runs} == {0, 1, 2, 3}


def test_no_secret_in_any_output(scenario: Scenario) -> None:
    for args, result in scenario.runs:
        assert not leaks(result.stdout.encode()), ("stdout", args)
        assert not leaks(result.stderr.encode()), ("stderr", args)


def test_no_secret_in_any_file_left_behind(scenario: Scenario) -> None:
    files = [p for p in scenario.root.rglob("*") if p.is_file()]
    assert any(p.parent.name == "cache" or "cache" in p.parts for p in files)
    assert any(p.suffix == ".jsonl" and p.parent.name == "out" for p in files)
    for path in files:
        if path == scenario.credentials:
            continue  # the one place the token belongs (and it is gone after logout)
        assert not leaks(path.read_bytes()), path


def test_the_cache_holds_no_secret_including_wal_and_shm(scenario: Scenario) -> None:
    names = set(scenario.snapshots)
    assert any(name.endswith("-wal") for name in names), names
    assert any(name.endswith("-shm") for name in names), names
    wal = next(data for name, data in scenario.snapshots.items() if name.endswith("-wal"))
    assert len(wal) > 32, "the WAL should hold the new entries"
    for name, data in scenario.snapshots.items():
        assert not leaks(data), name
    assert not scenario.credentials.exists()


def test_the_search_finds_every_form() -> None:
    for secret in SENTINELS:
        for text in (f"x{secret}y", urllib.parse.quote(secret, safe=""),
                     urllib.parse.quote_plus(secret)):
            assert leaks(text.encode())
        for prefix in (b"", b"a", b"ab", b"Authorization: Bearer "):
            assert leaks(base64.b64encode(prefix + secret.encode() + b"!"))
            assert leaks(base64.urlsafe_b64encode(prefix + secret.encode()))
