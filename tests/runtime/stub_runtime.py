"""A stub introspection runtime: stdlib HTTP on 127.0.0.1, the three SPEC §3.3 endpoints.

Faults are scripted per request (``runtime.script(...)``: the next requests get
these answers before normal service resumes) or per conversation
(``tampered``: wrong snapshot_hash; ``mismatched``: judge_input names another
conversation). Every request is recorded so tests can assert what was sent,
and how many requests were made at all.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import rfc8785

from tests.fixture.rowmaker import fixture_envelope


def snapshot_hash(judge_input: Any) -> str:
    """SPEC §2.2, computed independently of the code under test."""
    return "sha256:" + hashlib.sha256(rfc8785.dumps(judge_input)).hexdigest()


def judge_input_for(conversation_id: str) -> dict[str, Any]:
    """A small, realistic judge_input (non-ASCII text included on purpose)."""
    return {
        "conversation_id": conversation_id,
        "events": [
            {"type": "message", "role": "user", "text": f"Refund for {conversation_id}? €49.50"},
            {"type": "tool", "name": "lookup_invoice", "input": {"invoice_id": "INV-2291"},
             "output": {"amount": 49.5, "charges": 2}, "status": "ok"},
            {"type": "message", "role": "assistant", "text": "Refund RF-118 opened — 5–7 days."},
        ],
    }


def make_fixture(conversation_id: str, runtime_url: str) -> dict[str, Any]:
    """A judge_fixture row exactly as the runtime exports it (SPEC §2.1)."""
    judge_input = judge_input_for(conversation_id)
    # The stub hashes with its own rfc8785 call, independent of the CLI's fast path.
    return fixture_envelope(judge_input, runtime_url=runtime_url,
                            source_extra={"deployment_id": "dep_7f3a",
                                          "recipe": "customer-support"},
                            snapshot=snapshot_hash(judge_input))


@dataclass
class Reply:
    """One scripted answer: a status, headers and a raw body; ``hang`` never answers;
    ``then`` serves the request normally after running ``before`` (a concurrent edit)."""

    status: int = 200
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False
    before: Callable[[], None] | None = None


@dataclass
class Recorded:
    method: str
    path: str
    authorization: str | None
    body: bytes


class StubRuntime:
    """The server's state; ``url`` is where it listens."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.known: set[str] = {f"conv_{n:02d}" for n in range(1, 31)}
        self.tampered: set[str] = set()
        self.mismatched: set[str] = set()
        self.whoami = {"user": {"email": "ada@example.com"}, "org": {"name": "Acme"}}
        self.requests: list[Recorded] = []
        self._script: deque[Reply] = deque()
        self.release = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def start(self) -> StubRuntime:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies``, in order, then serve normally."""
        self._script.extend(replies)

    def export_paths(self) -> list[str]:
        return [r.path for r in self.requests if r.path.endswith("/export")]

    # -- request handling ---------------------------------------------------------------

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Reply:
        self.requests.append(Recorded(method, path, headers.get("authorization"), body))
        if self._script:
            reply = self._script.popleft()
            if reply.before is None:
                return reply
            reply.before()
        if headers.get("authorization") != f"Bearer {self.token}":
            return _json(401, {"error": {"message": "invalid token"}})
        if method == "GET" and path == "/v1/whoami":
            return _json(200, self.whoami)
        if method == "POST" and path in ("/v1/judge-fixtures/export", "/v1/conversations/export"):
            ids = json.loads(body)["conversation_ids"]
            if len(ids) > 20:
                return _json(400, {"error": {"message": "at most 20 conversation ids"}})
            return _json(200, self._export(path, ids))
        return _json(404, {"error": {"message": f"no route {method} {path}"}})

    def _export(self, path: str, ids: list[str]) -> dict[str, Any]:
        items: list[dict[str, Any]] = []
        errors: list[dict[str, str]] = []
        for conversation_id in ids:
            if conversation_id not in self.known:
                errors.append({"conversation_id": conversation_id, "code": "not_found",
                               "message": "no such conversation"})
            elif path == "/v1/conversations/export":
                items.append({"conversation_id": conversation_id, "events": copy.deepcopy(
                    judge_input_for(conversation_id)["events"])})
            else:
                items.append(self._fixture(conversation_id))
        key = "fixtures" if path == "/v1/judge-fixtures/export" else "conversations"
        return {key: items, "errors": errors}

    def _fixture(self, conversation_id: str) -> dict[str, Any]:
        fixture = make_fixture(conversation_id, self.url)
        if conversation_id in self.tampered:
            fixture["judge_input"]["events"][0]["text"] += " (edited)"
        if conversation_id in self.mismatched:
            fixture["judge_input"]["conversation_id"] = "conv_other"
            fixture["snapshot_hash"] = snapshot_hash(fixture["judge_input"])
        return fixture

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        runtime = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = runtime.answer(method, self.path, headers, body)
                if reply.hang:
                    runtime.release.wait(10)
                    return
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # keep test output clean

        return Handler


def _json(status: int, payload: object) -> Reply:
    return Reply(status, json.dumps(payload).encode(), {"Content-Type": "application/json"})


def json_reply(status: int, payload: object, **headers: str) -> Reply:
    """A scripted JSON answer (``Retry_After="2"`` becomes the ``Retry-After`` header)."""
    reply = _json(status, payload)
    reply.headers.update({k.replace("_", "-"): v for k, v in headers.items()})
    return reply
