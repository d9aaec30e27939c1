"""A scripted stand-in for the OpenAI Chat Completions and Anthropic Messages APIs.

A stub HTTP server on 127.0.0.1 (:mod:`tests.support.http_stub`), driven by
the real SDKs through ``base_url``. By default the reply is chosen by markers in
the conversation the judge is shown:

- ``VERDICT:pass`` / ``VERDICT:fail`` / ``VERDICT:not_applicable`` — a valid tool call;
- ``FAULT:<name>`` — one of :data:`FAULTS` (a 429 then success, a truncated tool
  call, a body that is not JSON...);
- no marker — ``pass``.

A test may instead push :class:`StubReply` values onto :attr:`StubModelServer.queue`
(served first, in order) or pass a ``script`` function of the request:
:class:`RubricWordsScript` is one for ``judges align``, whose verdicts depend on the
words of the judge's rubric and whose optimizer replies are scripted. Requests
are recorded (path, API, JSON body) for assertions; headers are not recorded, and
the Authorization / x-api-key value is only compared, never stored.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tests.support.http_stub import Reply as StubReply
from tests.support.http_stub import Request, Scripted, StubServer

_MARKER = re.compile(r"\b(VERDICT|FAULT):([a-z_0-9-]+)")

FAULTS = (
    "429-once", "500-once", "529-once", "500-always", "hang", "truncated", "wrong-enum",
    "missing-reasoning", "extra-key", "text-json", "text-prose", "non-json", "refusal",
    "empty-choices", "alternate",
)


@dataclass(frozen=True)
class RecordedRequest:
    api: str  # "openai" | "anthropic"
    path: str
    body: dict[str, Any]

    @property
    def user_text(self) -> str:
        """The user message's text, for either API (text blocks joined, as a model reads them)."""
        for message in self.body.get("messages", []):
            if message.get("role") == "user":
                return _text_of(message.get("content"))
        return ""

    @property
    def tool_name(self) -> str | None:
        """The forced tool's name (``submit_verdict`` for a judge, ``propose_edit`` for
        ``judges align``'s optimizer), for either API."""
        choice = self.body.get("tool_choice")
        if not isinstance(choice, dict):
            return None
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else choice.get("name")
        return name if isinstance(name, str) else None

    @property
    def system_text(self) -> str:
        if self.api == "anthropic":
            system = self.body.get("system", "")
            return system if isinstance(system, str) else json.dumps(system)
        for message in self.body.get("messages", []):
            if message.get("role") == "system":
                return str(message.get("content"))
        return ""


Script = Callable[[RecordedRequest, int], StubReply]


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(block.get("text", "") for block in content
                       if isinstance(block, dict) and block.get("type") == "text")
    return json.dumps(content)


class StubModelServer(StubServer):
    """Start with ``with StubModelServer() as stub:``; point SDKs at :attr:`openai_url`."""

    def __init__(self, *, api_key: str | None = None, latency: float = 0.0,
                 hang_seconds: float = 3.0, script: Script | None = None,
                 rate_limit_above: int | None = None, retry_after: float = 0.0,
                 cached_tokens: int = 0) -> None:
        super().__init__(default_headers={"content-type": "application/json"})
        self.api_key = api_key  # when set, any other key gets a 401
        #: Seconds from a request's arrival to its answer (plus the reply's own delay).
        self.latency = latency
        self.hang_seconds = hang_seconds
        self.script = script
        #: A rate limit: a request arriving while more than this many are in flight
        #: gets a 429 with ``Retry-After`` (seconds, also sent as ``retry-after-ms``).
        self.rate_limit_above = rate_limit_above
        self.retry_after = retry_after
        self.rate_limited = 0
        #: Input tokens every reply says were read from the prompt cache.
        self.cached_tokens = cached_tokens
        #: Replies served first, in order, whatever the request.
        self.queue: Scripted[StubReply] = Scripted()
        self.requests: list[RecordedRequest] = []
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_url(self) -> str:
        return self.url

    def respond(self, request: Request) -> StubReply:
        api = "anthropic" if request.path.rstrip("/").endswith("/messages") else "openai"
        if request.method != "POST":
            return error_reply(api, 405, f"no route {request.method} {request.path}")
        try:
            body = request.json()
        except ValueError:
            body = {}
        reply = self.reply_to(RecordedRequest(api, request.path, body),
                              request.carries_key(self.api_key), request.in_flight)
        return replace(reply, delay=self.latency + reply.delay)

    def reply_to(self, request: RecordedRequest, key_ok: bool, in_flight: int) -> StubReply:
        """Record ``request`` and choose its reply: auth, rate limit, queue, script, markers."""
        with self._lock:
            self.requests.append(request)
            attempt = self._seen[request.user_text]
            self._seen[request.user_text] += 1
            limited = self.rate_limit_above is not None and in_flight > self.rate_limit_above
            self.rate_limited += limited
            queued = self.queue.take()
        if not key_ok:
            return error_reply(request.api, 401, "invalid api key")
        if limited:
            return rate_limit_reply(request.api, self.retry_after)
        if queued is not None:
            return queued
        if self.script is not None:
            reply = self.script(request, attempt)
        else:
            reply = marker_reply(request, attempt, hang_seconds=self.hang_seconds)
        return with_cached_tokens(reply, request.api, self.cached_tokens)


def marker_reply(request: RecordedRequest, attempt: int, *, hang_seconds: float) -> StubReply:
    """The reply the markers in the conversation ask for (``attempt`` counts earlier tries)."""
    markers = dict((kind, value) for kind, value in _MARKER.findall(request.user_text))
    fault = markers.get("FAULT")
    api = request.api
    if fault in ("429-once", "500-once", "529-once") and attempt == 0:
        status = int(fault[:3])
        return error_reply(api, status, "try again", retry_after=True)
    if fault == "500-always":
        return error_reply(api, 500, "broken", retry_after=True)
    if fault == "hang" and attempt == 0:
        return StubReply(delay=hang_seconds, body=tool_reply(api, _args("pass")))
    if fault in _CONTENT_FAULTS:
        return _CONTENT_FAULTS[fault](api)
    if fault == "alternate":  # samples disagree: pass, fail, pass, fail...
        return StubReply(body=tool_reply(api, _args("pass" if attempt % 2 == 0 else "fail")))
    verdict = markers.get("VERDICT", "pass")
    return StubReply(body=tool_reply(api, _args(verdict)))


def _args(verdict: str, reasoning: str | None = None) -> str:
    return json.dumps({"reasoning": reasoning or f"stub reasoning for {verdict}",
                       "verdict": verdict})


_CONTENT_FAULTS: dict[str, Callable[[str], StubReply]] = {
    "truncated": lambda api: StubReply(body=tool_reply(api, '{"reasoning": "The agent did',
                                                       finish="length")),
    "wrong-enum": lambda api: StubReply(body=tool_reply(
        api, json.dumps({"reasoning": "fine", "verdict": "maybe"}))),
    "missing-reasoning": lambda api: StubReply(body=tool_reply(
        api, json.dumps({"verdict": "pass"}))),
    "extra-key": lambda api: StubReply(body=tool_reply(
        api, json.dumps({"reasoning": "ok", "verdict": "pass", "score": 5}))),
    "text-json": lambda api: StubReply(body=text_reply(
        api, 'Here is my answer: {"reasoning": "text fallback works", "verdict": "fail"}')),
    "text-prose": lambda api: StubReply(body=text_reply(api, "I think this passes.")),
    "non-json": lambda api: StubReply(body=b"<html>upstream proxy says hi</html>",
                                      headers={"content-type": "application/json"}),
    "refusal": lambda api: StubReply(body=refusal_reply(api)),
    "empty-choices": lambda api: StubReply(body=empty_reply(api)),
    "other-tool": lambda api: StubReply(body=tool_reply(api, _args("pass"), name="other_tool")),
    "bad-usage": lambda api: StubReply(body={**tool_reply(api, _args("pass")),
                                             "usage": _bad_usage(api)}),
}


def _bad_usage(api: str) -> dict[str, Any]:
    """Usage counts a misbehaving server might send: a string, a negative, a fraction."""
    if api == "openai":
        return {"prompt_tokens": "100", "completion_tokens": -5, "total_tokens": 2.5}
    return {"input_tokens": "100", "output_tokens": 2.5}


def tool_reply(api: str, arguments: str, *, finish: str | None = None,
               name: str = "submit_verdict") -> dict[str, Any]:
    """A reply whose tool call (the forced one unless ``name`` says otherwise) carries
    ``arguments`` (a JSON text, maybe broken)."""
    if api == "openai":
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": name, "arguments": arguments}}]}
        return _chat(message, finish or "tool_calls")
    try:
        tool_input: Any = json.loads(arguments)
    except ValueError:
        tool_input = arguments  # a misbehaving server: a string where a dict belongs
    return _message([{"type": "tool_use", "id": "toolu_1", "name": name,
                      "input": tool_input}], finish or "tool_use")


def text_reply(api: str, text: str) -> dict[str, Any]:
    if api == "openai":
        return _chat({"role": "assistant", "content": text}, "stop")
    return _message([{"type": "text", "text": text}], "end_turn")


def refusal_reply(api: str) -> dict[str, Any]:
    if api == "openai":
        return _chat({"role": "assistant", "content": None, "refusal": "I can't help with that."},
                     "stop")
    return _message([], "refusal")


def empty_reply(api: str) -> dict[str, Any]:
    if api == "openai":
        return {"id": "c", "object": "chat.completion", "created": 0, "model": "stub",
                "choices": [], "usage": _usage(api)}
    return _message([], "end_turn")


def error_reply(api: str, status: int, message: str, *, retry_after: bool = False) -> StubReply:
    # Retry-After: 0 plus a 1 ms retry-after-ms keeps the SDKs' retries fast in tests.
    headers = {"retry-after": "0", "retry-after-ms": "1"} if retry_after else {}
    if api == "openai":
        body: dict[str, Any] = {"error": {"message": message, "type": "stub", "code": None}}
    else:
        body = {"type": "error", "error": {"type": "stub_error", "message": message}}
    return StubReply(status=status, body=body, headers=headers)


def rate_limit_reply(api: str, retry_after: float) -> StubReply:
    """A 429 asking the client to wait ``retry_after`` seconds."""
    reply = error_reply(api, 429, "rate limit reached")
    return StubReply(status=429, body=reply.body, headers={
        "retry-after": f"{retry_after:g}", "retry-after-ms": f"{retry_after * 1000:g}"})


def with_cached_tokens(reply: StubReply, api: str, cached: int) -> StubReply:
    """``reply`` with its usage saying ``cached`` input tokens came from the prompt cache
    (OpenAI: of its 100 prompt tokens; Anthropic: besides its uncached input tokens)."""
    if not cached or not isinstance(reply.body, dict) or "usage" not in reply.body:
        return reply
    usage = dict(reply.body["usage"])
    if api == "openai":
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    else:
        usage.update(cache_read_input_tokens=cached, cache_creation_input_tokens=7)
    return StubReply(reply.status, {**reply.body, "usage": usage}, reply.headers, reply.delay)


def _usage(api: str) -> dict[str, int]:
    if api == "openai":
        return {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    return {"input_tokens": 100, "output_tokens": 20}


def _chat(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {"id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": "stub",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": _usage("openai")}


def _message(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {"id": "msg_stub", "type": "message", "role": "assistant", "model": "stub",
            "content": content, "stop_reason": stop, "usage": _usage("anthropic")}


_RUBRIC = re.compile(r"# Evaluation instructions\n\n(.*?)\n\n# Conversation to evaluate", re.S)
_CURRENT_RUBRIC = re.compile(r"# The judge's current rubric\n\n(.*?)\n\n# Disagreements", re.S)
_TOPIC = re.compile(r"\bTOPIC:([a-z]+)")
#: A rubric holding this phrase passes every conversation (a rubric collapsing a class).
PASS_EVERYTHING = "everything passes"
#: A judge request whose rubric holds this marker gets a 500 (a provider failing).
BROKEN_RUBRIC = "STUB-SERVER-ERROR"


def rubric_verdict(user_text: str) -> str:
    """The verdict of a judge whose rubric's words decide: a conversation marked
    ``TOPIC:word`` passes when the rubric names ``word`` (or says :data:`PASS_EVERYTHING`)
    and fails otherwise; one without a topic is not_applicable."""
    found = _RUBRIC.search(user_text)
    rubric = found.group(1) if found else ""
    topic = _TOPIC.search(user_text[found.end():] if found else user_text)
    if topic is None:
        return "not_applicable"
    if PASS_EVERYTHING in rubric.lower():
        return "pass"
    named = re.search(rf"\b{topic.group(1)}\b", rubric, re.IGNORECASE)
    return "pass" if named else "fail"


class RubricWordsScript:
    """A ``script`` for ``judges align``: judge requests get :func:`rubric_verdict`;
    optimizer requests (the forced tool ``propose_edit``) get the next scripted edit,
    a new rubric (or a :class:`StubReply` to send as it is). Once the edits run out, the
    optimizer proposes the current rubric unchanged."""

    def __init__(self, edits: Sequence[str | StubReply] = ()) -> None:
        self.edits: deque[str | StubReply] = deque(edits)
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest, attempt: int) -> StubReply:
        if request.tool_name != "propose_edit":
            if BROKEN_RUBRIC in request.user_text.partition("# Conversation to evaluate")[0]:
                return error_reply(request.api, 500, "broken", retry_after=True)
            verdict = rubric_verdict(request.user_text)
            return StubReply(body=tool_reply(request.api, _args(verdict)))
        with self.lock:
            edit = self.edits.popleft() if self.edits else None
        if isinstance(edit, StubReply):
            return edit
        if edit is None:
            current = _CURRENT_RUBRIC.search(request.user_text)
            edit = current.group(1) if current else ""
        return StubReply(body=tool_reply(request.api, json.dumps(
            {"rationale": "scripted edit", "instructions": edit}), name="propose_edit"))
