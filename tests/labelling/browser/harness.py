"""Run `introspection judges label` as a real process, and talk to it over real HTTP."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.hostile.harness import drop_dac


def _interruptible() -> None:
    """Ctrl-C reaches the server as in a terminal, even when the test run itself was
    started in the background (a shell then ignores SIGINT for it and its children)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _obeying_modes() -> None:
    _interruptible()
    drop_dac()


_URL = re.compile(r"Open (http://127\.0\.0\.1:(\d+)/\?token=(\S+))")


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class LabelApp:
    """A running labelling server (``judges label --no-open``) started by a test."""

    process: subprocess.Popen[str]
    url: str
    port: int
    token: str
    startup: list[str] = field(default_factory=list)
    csrf: str | None = None

    @classmethod
    def start(cls, recipe: Path, *args: str, timeout: float = 30,
              honour_permissions: bool = False) -> LabelApp:
        """Start the server; ``honour_permissions`` makes it obey file modes although the
        tests run as root (see :func:`tests.hostile.harness.drop_dac`)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("INTROSPECTION_")}
        process = subprocess.Popen(
            [sys.executable, "-m", "introspection_cli", "judges", "label", str(recipe),
             "--no-open", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env, preexec_fn=_obeying_modes if honour_permissions else _interruptible)
        assert process.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
            found = _URL.search(line)
            if found:
                return cls(process, found.group(1), int(found.group(2)), found.group(3), lines)
        process.kill()
        _, err = process.communicate()
        raise AssertionError(f"the server did not print its address: {lines} {err}")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> tuple[int, str, str]:
        """Ctrl-C, as a user would; returns (exit code, rest of stdout, stderr)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        out, err = self.process.communicate(timeout=30)
        return self.process.returncode, out, err

    def wait(self) -> tuple[int, str, str]:
        """Wait for the server to stop by itself (after a signal the test sent)."""
        out, err = self.process.communicate(timeout=30)
        return self.process.returncode, out, err

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=30)

    # -- plain HTTP, for the security tests and for writes without a browser ------------

    def request(self, method: str, path: str, *, body: Any = None, cookie: bool = True,
                host: str | None = None, origin: str | None = "same", csrf: str | None = "same",
                content_type: str = "application/json") -> Answer:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Host": host or f"127.0.0.1:{self.port}"}
        if cookie:
            headers["Cookie"] = f"introspection_label_{self.port}={self.token}"
        data = None
        if method == "POST":
            if origin is not None:
                headers["Origin"] = self.base if origin == "same" else origin
            if csrf is not None:
                headers["X-CSRF-Token"] = self.session_csrf() if csrf == "same" else csrf
            data = json.dumps(body if body is not None else {}).encode()
            headers["Content-Type"] = content_type
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        answer = Answer(response.status, {k.lower(): v for k, v in response.getheaders()},
                        response.read())
        connection.close()
        return answer

    def session_csrf(self) -> str:
        if self.csrf is None:
            answer = self.request("GET", "/api/session")
            assert answer.status == 200, answer.body
            self.csrf = answer.json()["csrf"]
        return self.csrf

    def row(self, line: int) -> dict[str, Any]:
        answer = self.request("GET", f"/api/row/{line}")
        assert answer.status == 200, answer.body
        result: dict[str, Any] = answer.json()
        return result

    def label(self, line: int, **values: Any) -> Answer:
        version = self.row(line)["version"]
        return self.request("POST", "/api/label", body={"line": line, "version": version,
                                                        **values})


def path_of(url: str) -> str:
    return urlsplit(url).path
