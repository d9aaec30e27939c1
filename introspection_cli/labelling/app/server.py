"""The labelling app's HTTP server: standard library only, 127.0.0.1 only, token required.

Security model (every request, before anything else):

* ``Host`` must be ``127.0.0.1:PORT`` or ``localhost:PORT``: a page on another
  site that rebinds its DNS name to 127.0.0.1 is refused (DNS rebinding). A
  request with more than one ``Host`` header, or whose target is an absolute
  URL naming another host, is refused too (400): which host it meant is
  ambiguous, and a proxy in between may have read the other one.
* The session token: the printed URL carries it once (``/?token=...``); that
  first load sets it as an HttpOnly, SameSite=Strict cookie and redirects to
  ``/``; every other request must carry the cookie.
* Every write is a POST whose ``Origin`` is this server and which carries the
  CSRF token the page got from ``/api/session`` in an ``X-CSRF-Token`` header,
  with a JSON body of bounded size: ``/api/label``, ``/api/note`` (a rater's
  note), ``/api/undo``, ``/api/gate-misses``.
* Every response forbids framing and carries a Content-Security-Policy that
  allows nothing from another origin and no inline script or style; the page's
  scripts render conversation text with ``textContent`` only. That includes
  the errors the standard library answers by itself (a malformed request
  line, headers too long): :meth:`_Handler.send_error` answers them as plain
  text through the same path. A method the app does not serve (PUT, HEAD,
  anything) goes through the same checks and is then 405.

Nothing is logged: the first request's URL holds the token.
"""

from __future__ import annotations

import hmac
import json
import re
import secrets
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from introspection_cli import webui
from introspection_cli.errors import DataError, UsageError
from introspection_cli.labelling.app.session import LabelSession
from introspection_cli.labelling.app.writes import LabelWrite, NoteWrite, WriteRefused

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
_BODY_LIMIT = 64 * 1024
_METHODS = ("GET", "POST")
_ITEM_PATH = re.compile(r"/api/item/([0-9]{1,9})")
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8"}


def _assets() -> dict[str, tuple[bytes, str]]:
    """URL path -> (bytes, content type) of every file the page loads, read once."""
    static = resources.files("introspection_cli.labelling.app").joinpath("static")
    files: dict[str, tuple[bytes, str]] = {}
    for name in ("index.html", "app.js", "view.js", "app.css"):
        files["/" if name == "index.html" else f"/assets/{name}"] = (
            static.joinpath(name).read_bytes(), _TYPES["." + name.rsplit(".", 1)[1]])
    for name in (webui.TRANSCRIPT_JS, webui.TRANSCRIPT_CSS):
        files[f"/assets/{name}"] = (webui.asset_text(name).encode("utf-8"),
                                    _TYPES["." + name.rsplit(".", 1)[1]])
    return files


class LabelServer(ThreadingHTTPServer):
    """Serves one :class:`LabelSession` on 127.0.0.1."""

    # Threads answering requests do not hold up the exit: a browser keeps idle
    # connections open. A write in progress is waited for by run_app (the session lock).
    daemon_threads = True
    block_on_close = False

    def __init__(self, session: LabelSession, port: int) -> None:
        self.session = session
        self.token = secrets.token_urlsafe(32)
        self.csrf = secrets.token_urlsafe(32)
        self.assets = _assets()
        try:
            super().__init__(("127.0.0.1", port), _Handler)
        except OSError as exc:
            raise UsageError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); pass "
                             "another --port, or none for a free one") from None
        self.port = int(self.server_address[1])
        self.hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        self.origins = {f"http://{host}" for host in self.hosts}
        self.cookie = f"introspection_label_{self.port}"  # cookies ignore ports; names do not

    @property
    def url(self) -> str:
        """The address to open: it carries the session token once."""
        return f"http://127.0.0.1:{self.port}/?token={self.token}"


class _Handler(BaseHTTPRequestHandler):
    server: LabelServer
    # A request line without a version (HTTP/0.9) would be answered without a status
    # line or headers, security headers included.
    default_request_version = "HTTP/1.0"
    timeout = 30  # a client that stops sending mid-request is dropped, not waited for
    # Headers and body leave in one segment, at once: unbuffered writes with Nagle's
    # algorithm on wait for the browser's delayed ACK (tens of ms on every answer).
    wbufsize = 64 * 1024
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        """Nothing is logged (the first request's URL holds the token)."""

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def parse_request(self) -> bool:
        """The standard library's parse; then a method without a ``do_`` handler is answered
        here, after the same checks as every other request, instead of by its stock 501
        page (which skips them). False: answered already, as the library's own errors are."""
        if not super().parse_request():
            return False
        if self.command in _METHODS:
            return True
        self._handle(self.command)
        return False

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """An error the standard library answers (a malformed request line, headers too
        long...) as plain text with the security headers, never its stock HTML page. The
        request's own text is not echoed."""
        self.close_connection = True
        short = self.responses.get(code, ("Error", ""))[0]
        self._send(code, f"Refused: {short}.\n".encode(), "text/plain; charset=utf-8",
                   {"Connection": "close"})

    def _handle(self, method: str) -> None:
        url = urlsplit(self.path)
        refusal = self._host_refusal(url.netloc)
        if refusal is not None:
            return self._text(*refusal)
        if method == "GET" and url.path == "/" and "token" in parse_qs(url.query):
            return self._first_load(parse_qs(url.query)["token"][0])
        if not self._has_session():
            return self._text(403, "Refused: open the address `introspection judges label` "
                                   "printed (it carries this session's token).")
        if method not in _METHODS:
            return self._send(405, b"Refused: this app answers GET and POST only.\n",
                              "text/plain; charset=utf-8", {"Allow": ", ".join(_METHODS)})
        if method == "POST":
            return self._write(url.path)
        if url.path == "/favicon.ico":  # browsers ask; there is none
            return self._send(204, b"", "image/x-icon")
        if url.path in self.server.assets:
            body, content_type = self.server.assets[url.path]
            return self._send(200, body, content_type)
        return self._read(url.path)

    def _host_refusal(self, named_in_target: str) -> tuple[int, str] | None:
        """(status, message) when the request is not addressed to this server alone."""
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1:
            return 400, "Refused: a request carries exactly one Host header."
        if named_in_target and named_in_target not in self.server.hosts:
            return 400, "Refused: the request's target names another host."
        if hosts[0] not in self.server.hosts:
            return 403, ("Refused: this server answers only to 127.0.0.1 and localhost on "
                         "its own port.")
        return None

    def _first_load(self, token: str) -> None:
        if not hmac.compare_digest(token.encode(), self.server.token.encode()):
            return self._text(403, "Refused: this is not the current session's token.")
        self._send(303, b"", "text/plain; charset=utf-8", {
            "Location": "/",
            "Set-Cookie": f"{self.server.cookie}={self.server.token}; HttpOnly; "
                          "SameSite=Strict; Path=/"})

    def _has_session(self) -> bool:
        prefix = f"{self.server.cookie}="
        for part in (self.headers.get("Cookie") or "").split(";"):
            part = part.strip()
            if part.startswith(prefix) and hmac.compare_digest(
                    part[len(prefix):].encode(), self.server.token.encode()):
                return True
        return False

    def _read(self, path: str) -> None:
        session = self.server.session
        if path == "/api/session":
            return self._api(lambda: {**session.overview(), "csrf": self.server.csrf})
        match = _ITEM_PATH.fullmatch(path)
        if match:
            return self._api(lambda: session.item(int(match.group(1))))
        self._text(404, "Not found.")

    def _write(self, path: str) -> None:
        if self.headers.get("Origin") not in self.server.origins:
            return self._text(403, "Refused: a write must come from this app's own page.")
        if not hmac.compare_digest((self.headers.get("X-CSRF-Token") or "").encode(),
                                   self.server.csrf.encode()):
            return self._text(403, "Refused: the write carries no valid CSRF token; reload "
                                   "the page.")
        body = self._json_body()
        if body is None:
            return None
        session = self.server.session
        actions: dict[str, Callable[[], dict[str, Any]]] = {
            "/api/label": lambda: session.label(_label_write(body)),
            "/api/note": lambda: session.note(NoteWrite(_str(body, "judge"), _int(body, "line"),
                                                        _str(body, "version"),
                                                        _str(body, "note"))),
            "/api/undo": session.undo,
            "/api/gate-misses": lambda: session.label_gate_misses(_str(body, "judge"),
                                                                  _int(body, "count")),
        }
        action = actions.get(path)
        if action is None:
            return self._text(404, "Not found.")
        self._api(action)

    def _json_body(self) -> dict[str, Any] | None:
        if (self.headers.get("Content-Type") or "").split(";")[0].strip() != "application/json":
            self._text(415, "Refused: a write sends JSON.")
            return None
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if not 0 <= length <= _BODY_LIMIT:
            self._text(413, "Refused: the request body is missing or too large.")
            return None
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, RecursionError):
            body = None
        if not isinstance(body, dict):
            self._text(400, "Refused: the body is not a JSON object.")
            return None
        return body

    def _api(self, action: Callable[[], dict[str, Any]]) -> None:
        try:
            payload, status = action(), 200
        except WriteRefused as exc:
            payload, status = {"error": exc.message, "item": exc.item}, 409
        except (DataError, UsageError, ValueError) as exc:
            payload, status = {"error": str(exc), "item": None}, 400
        self._send(status, json.dumps(payload, ensure_ascii=False).encode("utf-8"),
                   "application/json; charset=utf-8")

    def _text(self, status: int, message: str) -> None:
        self._send(status, (message + "\n").encode("utf-8"), "text/plain; charset=utf-8")

    def _send(self, status: int, body: bytes, content_type: str,
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in {**_SECURITY_HEADERS, **(extra or {})}.items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":  # an answer to HEAD has no body
            self.wfile.write(body)


def _int(body: dict[str, Any], key: str) -> int:
    value = body.get(key)
    if type(value) is not int:
        raise ValueError(f"{key} must be an integer")
    return value


def _str(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


def _label_write(body: dict[str, Any]) -> LabelWrite:
    note = body.get("note")
    if note is not None and not isinstance(note, str):
        raise ValueError("note must be a string")
    return LabelWrite(_str(body, "judge"), _int(body, "line"), _str(body, "version"),
                      _values(body), note)


def _values(body: dict[str, Any]) -> dict[str, str | None]:
    """The members to set: ``expected`` and/or ``split`` (values checked by the byte rule)."""
    from introspection_cli.fixture.byterule import EDITABLE

    values = {key: body[key] for key in EDITABLE if key in body}
    for key, value in values.items():
        if value not in EDITABLE[key]:
            raise ValueError(f"{key} cannot be {value!r}")
    if not values:
        raise ValueError("nothing to write: send expected and/or split")
    return values
