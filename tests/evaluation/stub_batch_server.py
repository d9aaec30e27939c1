"""A scripted stand-in for OpenAI's Files + Batch API and Anthropic's Message Batches.

A stub HTTP server on 127.0.0.1 (:mod:`tests.support.http_stub`), driven by the real SDKs through
``base_url``. It also answers direct Chat Completions / Messages calls, so a test
can compare a batch run with a direct one on the same endpoint (the endpoint is
part of the cache key). Every request's answer is chosen as the direct stub
chooses it (``VERDICT:`` / ``FAULT:`` markers, :func:`marker_reply`); on top:

- ``BATCH:fail`` in a conversation: that request fails inside the batch (an
  error-file line with HTTP 500 for OpenAI, an ``errored`` result for Anthropic);
- ``BATCH:late``: the request has not run when the batch ends early
  (:attr:`StubBatchServer.ending` ``"expired"`` or ``"cancelled"``), so it is
  listed as expired or cancelled; without an early end it runs normally;
- ``BATCH:refuse``: the provider refuses that request as wrong (HTTP 400 for OpenAI,
  an ``invalid_request_error`` for Anthropic);
- ``BATCH:huge``: its result line is padded past 5 MB (a reply over the size cap).

Hostile result files, for reconciling results with requests:

- ``BATCH:duplicate``: its result comes twice, a conflicting copy (the other verdict)
  first; ``BATCH:repeat``: twice, the same both times;
- ``BATCH:torn``: its line is cut in half (its ``custom_id`` still readable);
  ``BATCH:shred``: cut after 12 bytes (nothing of it readable);
- ``BATCH:missing``: no line at all;
- :attr:`StubBatchServer.extra_output`: lines put before the results of every batch;
- :attr:`StubBatchServer.batch_api` cleared: a server with no batch endpoints (404).

A batch moves one step along :attr:`StubBatchServer.steps` at each retrieve
(OpenAI ``validating -> in_progress -> finalizing -> completed``; Anthropic
``in_progress -> ended``), and not past ``in_progress`` while :attr:`hold` is
cleared. Creations, uploads and polls are counted per API.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tests.evaluation.stub_model_server import (
    RecordedRequest,
    error_reply,
    marker_reply,
    tool_reply,
)
from tests.support.http_stub import Reply, Request, StubServer

OPENAI_STEPS = ("validating", "in_progress", "finalizing", "completed")
ANTHROPIC_STEPS = ("in_progress", "in_progress", "ended")


@dataclass
class StubBatch:
    api: str
    batch_id: str
    requests: list[dict[str, Any]]  # OpenAI: JSONL lines; Anthropic: {"custom_id", "params"}
    step: int = 0
    output: bytes = b""
    errors: bytes = b""
    status: str = ""
    counts: dict[str, int] = field(default_factory=dict)


class StubBatchServer(StubServer):
    """``with StubBatchServer() as stub:``; point the SDKs at :attr:`openai_url` /
    :attr:`anthropic_url`."""

    def __init__(self, *, api_key: str | None = None, openai_steps: tuple[str, ...] = OPENAI_STEPS,
                 anthropic_steps: tuple[str, ...] = ANTHROPIC_STEPS) -> None:
        super().__init__(default_headers={"content-type": "application/json"})
        self.api_key = api_key
        self.steps = {"openai": openai_steps, "anthropic": anthropic_steps}
        #: How a batch ends: "completed" (all run), "expired" or "cancelled" (BATCH:late
        #: requests did not run), "failed" (OpenAI only: nothing ran).
        self.ending = "completed"
        #: Cleared: batches stay in_progress however often they are polled.
        self.hold = threading.Event()
        self.hold.set()
        #: Cleared: direct calls are not answered until it is set again.
        self.direct_hold = threading.Event()
        self.direct_hold.set()
        self.batches: dict[str, StubBatch] = {}
        self.files: dict[str, bytes] = {}
        self.creations: Counter[str] = Counter()
        self.polls: Counter[str] = Counter()
        self.uploads = 0
        #: Every request a batch held, and every direct call, as the direct stub records them.
        self.requests: list[RecordedRequest] = []
        #: How new batch ids are spelled (a misbehaving server may send anything).
        self.id_format = "{prefix}_{number}"
        #: Answer this many batch creations, then this many retrieves, with HTTP 500.
        self.failing_creations = 0
        self.failing_polls = 0
        #: Bodies answered (with 200) to the next retrieves instead of the batch object.
        self.bad_polls: list[bytes] = []
        #: Lines put before the results of every batch (OpenAI: its output file).
        self.extra_output = b""
        #: Cleared: the files and batch endpoints answer 404, as a server without them does.
        self.batch_api = True
        #: Seconds each batch creation waits before it is answered, and how many have
        #: been asked for (two runs racing to create the same batch).
        self.creation_delay = 0.0
        self.creation_attempts = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_url(self) -> str:
        return self.url

    def take(self, what: str) -> bool:
        """True (and one fewer to fail) while ``failing_<what>`` is above zero."""
        with self._lock:
            left = getattr(self, f"failing_{what}")
            if left:
                setattr(self, f"failing_{what}", left - 1)
            return bool(left)

    def forget(self, batch_id: str) -> None:
        """The provider loses a batch: retrieving it is a 404 from now on."""
        with self._lock:
            del self.batches[batch_id]

    def respond(self, request: Request) -> Reply:
        if not request.carries_key(self.api_key):
            return Reply(401, error_reply("openai", 401, "invalid api key").body)
        return (_post if request.method == "POST" else _get)(self, request)

    # -- OpenAI -------------------------------------------------------------------

    def upload(self, content: bytes) -> dict[str, Any]:
        with self._lock:
            file_id = f"file-{next(self._ids)}"
            self.files[file_id] = content
            self.uploads += 1
        return {"id": file_id, "object": "file", "bytes": len(content), "created_at": 0,
                "filename": "input.jsonl", "purpose": "batch", "status": "processed"}

    def create_openai(self, body: dict[str, Any]) -> dict[str, Any] | None:
        content = self.files.get(str(body.get("input_file_id")))
        if content is None or body.get("endpoint") != "/v1/chat/completions":
            return None
        lines = [json.loads(line) for line in content.splitlines() if line.strip()]
        return self._openai_view(self._create("openai", "batch", lines))

    def _openai_view(self, batch: StubBatch) -> dict[str, Any]:
        status = batch.status or self.steps["openai"][batch.step]
        view: dict[str, Any] = {
            "id": batch.batch_id, "object": "batch", "endpoint": "/v1/chat/completions",
            "input_file_id": "file-in", "completion_window": "24h", "created_at": 0,
            "status": status,
            "request_counts": batch.counts or {"total": len(batch.requests), "completed": 0,
                                               "failed": 0}}
        if batch.status:
            view["output_file_id"] = self._file(batch.output)
            view["error_file_id"] = self._file(batch.errors)
            if batch.status == "failed":
                view["errors"] = {"object": "list", "data": [
                    {"code": "invalid_request", "line": 1,
                     "message": "stub: the batch file was refused"}]}
        return view

    def _file(self, content: bytes) -> str | None:
        if not content:
            return None
        with self._lock:
            file_id = f"file-{next(self._ids)}"
            self.files[file_id] = content
        return file_id

    def _finish_openai(self, batch: StubBatch) -> None:
        output: list[tuple[dict[str, Any], RecordedRequest]] = []
        errors: list[tuple[dict[str, Any], RecordedRequest]] = []
        for line in batch.requests:
            custom_id, body = line["custom_id"], line["body"]
            request = RecordedRequest("openai", line["url"], body)
            late = "BATCH:late" in request.user_text and self.ending != "completed"
            if self.ending == "failed":
                continue
            if late:
                code = "batch_expired" if self.ending == "expired" else "batch_cancelled"
                errors.append(({"id": "r", "custom_id": custom_id, "response": None,
                                "error": {"code": code, "message": f"stub: {code}"}}, request))
            elif "BATCH:fail" in request.user_text or "BATCH:refuse" in request.user_text:
                refused = "BATCH:refuse" in request.user_text
                message = "stub: no such model" if refused else "stub: the model is on fire"
                errors.append(({"id": "r", "custom_id": custom_id, "error": None, "response": {
                    "status_code": 400 if refused else 500, "request_id": "q",
                    "body": {"error": {"message": message}}}}, request))
            else:
                reply = marker_reply(request, 0, hang_seconds=0)
                target = output if reply.status == 200 else errors
                target.append(({"id": "r", "custom_id": custom_id, "error": None, "response": {
                    "status_code": reply.status, "request_id": "q", "body": _padded(
                        reply.body, request)}}, request))
        batch.output = self.extra_output + _hostile(output, "openai") if output else b""
        batch.errors = _hostile(errors, "openai")
        failed = 0 if self.ending == "failed" else len(errors)
        batch.counts = {"total": len(batch.requests), "completed": len(output),
                        "failed": failed}
        batch.status = self.ending

    # -- Anthropic ------------------------------------------------------------------

    def create_anthropic(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._anthropic_view(self._create("anthropic", "msgbatch",
                                                 list(body.get("requests") or [])))

    def _anthropic_view(self, batch: StubBatch) -> dict[str, Any]:
        status = batch.status or self.steps["anthropic"][batch.step]
        counts = batch.counts or {"processing": len(batch.requests), "succeeded": 0,
                                  "errored": 0, "canceled": 0, "expired": 0}
        return {"id": batch.batch_id, "type": "message_batch", "processing_status": status,
                "request_counts": counts, "created_at": "2026-11-30T00:00:00Z",
                "expires_at": "2026-12-01T00:00:00Z", "ended_at": None,
                "cancel_initiated_at": None, "archived_at": None,
                "results_url": (f"{self.anthropic_url}/v1/messages/batches/{batch.batch_id}"
                                "/results" if batch.status else None)}

    def _finish_anthropic(self, batch: StubBatch) -> None:
        lines, counts = [], Counter[str]()
        for entry in batch.requests:
            request = RecordedRequest("anthropic", "/v1/messages", entry["params"])
            late = "BATCH:late" in request.user_text and self.ending != "completed"
            if late:
                kind = "expired" if self.ending == "expired" else "canceled"
                result: dict[str, Any] = {"type": kind}
            elif "BATCH:fail" in request.user_text or "BATCH:refuse" in request.user_text:
                refused = "BATCH:refuse" in request.user_text
                kind, result = "errored", {"type": "errored", "error": {"type": "error", "error": {
                    "type": "invalid_request_error" if refused else "api_error",
                    "message": "stub: no such model" if refused else "stub: the model is on fire"}}}
            else:
                reply = marker_reply(request, 0, hang_seconds=0)
                if reply.status == 200:
                    kind, result = "succeeded", {"type": "succeeded",
                                                 "message": _padded(reply.body, request)}
                else:
                    kind, result = "errored", {"type": "errored", "error": reply.body}
            counts[kind] += 1
            lines.append(({"custom_id": entry["custom_id"], "result": result}, request))
        batch.output = self.extra_output + _hostile(lines, "anthropic")
        batch.counts = {"processing": 0, "succeeded": counts["succeeded"],
                        "errored": counts["errored"], "canceled": counts["canceled"],
                        "expired": counts["expired"]}
        batch.status = "ended"

    # -- both ---------------------------------------------------------------------------

    def _create(self, api: str, prefix: str, requests: list[dict[str, Any]]) -> StubBatch:
        with self._lock:
            batch_id = self.id_format.format(prefix=prefix, number=next(self._ids))
            batch = StubBatch(api, batch_id, requests)
            self.batches[batch.batch_id] = batch
            self.creations[api] += 1
            for entry in requests:
                body = entry["body"] if api == "openai" else entry["params"]
                self.requests.append(RecordedRequest(api, "batch", body))
        return batch

    def retrieve(self, api: str, batch_id: str) -> dict[str, Any] | None:
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None or batch.api != api:
                return None
            self.polls[api] += 1
            steps = self.steps[api]
            if not batch.status:
                held = not self.hold.is_set() and steps[batch.step] == "in_progress"
                if not held and batch.step < len(steps) - 1:
                    batch.step += 1
                if batch.step == len(steps) - 1:
                    (self._finish_openai if api == "openai" else self._finish_anthropic)(batch)
        return self._openai_view(batch) if api == "openai" else self._anthropic_view(batch)

    def results(self, batch_id: str) -> bytes | None:
        batch = self.batches.get(batch_id)
        return batch.output if batch is not None and batch.status else None


def _hostile(lines: list[tuple[dict[str, Any], RecordedRequest]], api: str) -> bytes:
    """The result lines as JSONL, with what the ``BATCH:`` markers ask done to them."""
    out = []
    for line, request in lines:
        text = request.user_text
        encoded = json.dumps(line).encode() + b"\n"
        if "BATCH:missing" in text:
            continue
        if "BATCH:duplicate" in text:
            out.append(json.dumps(_conflicting(line, api, request)).encode() + b"\n")
        if "BATCH:torn" in text:
            encoded = encoded[:len(encoded) // 2] + b"\n"
        elif "BATCH:shred" in text:
            encoded = encoded[:12] + b"\n"
        out.append(encoded)
        if "BATCH:repeat" in text:
            out.append(encoded)
    return b"".join(out)


def _conflicting(line: dict[str, Any], api: str, request: RecordedRequest) -> dict[str, Any]:
    """The successful result line of ``line``'s request with the other verdict."""
    verdict = "fail" if "VERDICT:fail" not in request.user_text else "pass"
    body = tool_reply(api, json.dumps({"reasoning": "a conflicting copy", "verdict": verdict}))
    if api == "openai":
        return {"id": "r", "custom_id": line["custom_id"], "error": None,
                "response": {"status_code": 200, "request_id": "q", "body": body}}
    return {"custom_id": line["custom_id"], "result": {"type": "succeeded", "message": body}}


def _padded(body: Any, request: RecordedRequest) -> Any:
    if "BATCH:huge" in request.user_text and isinstance(body, dict):
        return {**body, "padding": "x" * (5 * 1024 * 1024)}
    return body


_BATCH_ROUTES = ("/v1/files", "/v1/batches", "/v1/messages/batches")


def _multipart_file(content_type: str, body: bytes) -> bytes | None:
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return payload if isinstance(payload, bytes) else None
    return None


def _post(stub: StubBatchServer, request: Request) -> Reply:
    """An upload, a batch created, or a direct call (answered as the direct stub does)."""
    path = request.path.rstrip("/")
    if not stub.batch_api and path in _BATCH_ROUTES:
        return _not_found(f"no route {request.path}")
    if path == "/v1/files":
        content = _multipart_file(request.headers.get("content-type", ""), request.body)
        return (Reply(200, stub.upload(content)) if content is not None
                else Reply(400, {"error": {"message": "no file part"}}))
    body = json.loads(request.body or b"{}")
    if path in ("/v1/batches", "/v1/messages/batches"):
        with stub._lock:
            stub.creation_attempts += 1
        time.sleep(stub.creation_delay)
    if path in ("/v1/batches", "/v1/messages/batches") and stub.take("creations"):
        return Reply(500, {"error": {"message": "stub: creation failed"}})
    if path == "/v1/batches":
        created = stub.create_openai(body)
        return (Reply(200, created) if created is not None
                else Reply(400, {"error": {"message": "bad batch"}}))
    if path == "/v1/messages/batches":
        return Reply(200, stub.create_anthropic(body))
    api = "anthropic" if path.endswith("/messages") else "openai"
    recorded = RecordedRequest(api, path, body)
    with stub._lock:
        stub.requests.append(recorded)
    stub.direct_hold.wait(60)
    reply = marker_reply(recorded, 0, hang_seconds=0)
    return Reply(reply.status, reply.body)


def _get(stub: StubBatchServer, request: Request) -> Reply:
    """A batch retrieved (one step further), a file's content or a batch's results."""
    parts = request.path.rstrip("/").split("/")
    polled = "batches" in parts and "results" not in parts
    if polled and stub.take("polls"):
        return Reply(500, {"error": {"message": "stub: poll failed"}})
    if polled and stub.bad_polls:
        return Reply(200, stub.bad_polls.pop(0))
    if parts[:3] == ["", "v1", "batches"] and len(parts) == 4:
        return _found(stub.retrieve("openai", parts[3]))
    if parts[:3] == ["", "v1", "files"] and len(parts) == 5 and parts[4] == "content":
        return _content(stub.files.get(parts[3]), "no such file")
    if parts[:4] == ["", "v1", "messages", "batches"] and len(parts) == 5:
        return _found(stub.retrieve("anthropic", parts[4]))
    if parts[:4] == ["", "v1", "messages", "batches"] and parts[5:] == ["results"]:
        return _content(stub.results(parts[4]), "no results")
    return _not_found(f"no route {request.path}")


def _not_found(message: str) -> Reply:
    return Reply(404, {"error": {"message": message}})


def _found(view: dict[str, Any] | None) -> Reply:
    if view is None:
        return Reply(404, {"type": "error", "error": {
            "type": "not_found_error", "message": "no such batch"}})
    return Reply(200, view)


def _content(content: bytes | None, missing: str) -> Reply:
    if content is None:
        return _not_found(missing)
    return Reply(200, content, {"content-type": "application/octet-stream"})
