"""A stub introspection runtime on 127.0.0.1 (:mod:`tests.support.http_stub`): the three
SPEC §3.3 endpoints.

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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import rfc8785

from tests.fixture.rowmaker import fixture_envelope
from tests.support import http_stub
from tests.support.http_stub import Request, Scripted, StubServer, json_reply

__all__ = ["Recorded", "Reply", "StubRuntime", "json_reply", "judge_input_for", "make_fixture",
           "snapshot_hash"]


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


@dataclass(frozen=True)
class Reply(http_stub.Reply):
    """One scripted answer: a status, headers and a raw body; ``hang`` never answers;
    ``before`` runs first (a concurrent edit), then the request is served normally."""

    body: Any = b"{}"
    before: Callable[[], None] | None = None


@dataclass
class Recorded:
    method: str
    path: str
    authorization: str | None
    body: bytes


class StubRuntime(StubServer):
    """The server's state; ``url`` is where it listens."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token
        self.known: set[str] = {f"conv_{n:02d}" for n in range(1, 31)}
        self.tampered: set[str] = set()
        self.mismatched: set[str] = set()
        self.whoami = {"user": {"email": "ada@example.com"}, "org": {"name": "Acme"}}
        self.requests: list[Recorded] = []
        self._script: Scripted[http_stub.Reply] = Scripted()

    def script(self, *replies: http_stub.Reply) -> None:
        """Answer the next requests with ``replies``, in order, then serve normally."""
        self._script.extend(replies)

    def export_paths(self) -> list[str]:
        return [r.path for r in self.requests if r.path.endswith("/export")]

    # -- request handling ---------------------------------------------------------------

    def respond(self, request: Request) -> http_stub.Reply:
        method, path, headers, body = request.method, request.path, request.headers, request.body
        self.requests.append(Recorded(method, path, headers.get("authorization"), body))
        reply = self._script.take()
        if reply is not None:
            if not isinstance(reply, Reply) or reply.before is None:
                return reply
            reply.before()
        if headers.get("authorization") != f"Bearer {self.token}":
            return json_reply(401, {"error": {"message": "invalid token"}})
        if method == "GET" and path == "/v1/whoami":
            return json_reply(200, self.whoami)
        if method == "POST" and path in ("/v1/judge-fixtures/export", "/v1/conversations/export"):
            ids = json.loads(body)["conversation_ids"]
            if len(ids) > 20:
                return json_reply(400, {"error": {"message": "at most 20 conversation ids"}})
            return json_reply(200, self._export(path, ids))
        return json_reply(404, {"error": {"message": f"no route {method} {path}"}})

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
