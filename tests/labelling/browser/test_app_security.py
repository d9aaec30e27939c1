"""The labelling server refuses what is not its own page: no token, a foreign Host or Origin,
no CSRF token; it listens on 127.0.0.1 only and every answer carries its CSP."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.labelling.browser.harness import LabelApp
from tests.labelling.recipes import UNGATED_JUDGE, calibration, row, write_recipe


@pytest.fixture
def app(tmp_path: Path) -> Iterator[LabelApp]:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [row("c1"), row("c2")])})
    started = LabelApp.start(recipe)
    yield started
    started.kill()


def test_the_first_load_trades_the_token_for_a_strict_cookie(app: LabelApp) -> None:
    first = app.request("GET", f"/?token={app.token}", cookie=False)
    assert first.status == 303 and first.headers["location"] == "/"
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"introspection_label_{app.port}={app.token};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    wrong = app.request("GET", "/?token=" + "x" * 43, cookie=False)
    assert wrong.status == 403 and "set-cookie" not in wrong.headers


@pytest.mark.parametrize("path", ["/", "/api/session", "/api/item/1", "/assets/app.js",
                                  "/assets/view.js", "/assets/transcript.js"])
def test_every_request_needs_the_session_token(app: LabelApp, path: str) -> None:
    assert app.request("GET", path).status == 200
    refused = app.request("GET", path, cookie=False)
    assert refused.status == 403 and b"token" in refused.body


def test_a_write_without_the_token_is_refused(tmp_path: Path, app: LabelApp) -> None:
    path = calibration(tmp_path / "r")
    before = path.read_bytes()
    version = app.row(1)["version"]
    refused = app.request("POST", "/api/label", cookie=False,
                          body={"judge": "helpful", "line": 1, "version": version,
                                "expected": "pass"})
    assert refused.status == 403
    assert path.read_bytes() == before


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1",
                                  "127.0.0.1:1", "localhost.evil.example:{port}",
                                  "[::1]:{port}"])
def test_a_foreign_host_is_refused_even_with_the_token(app: LabelApp, host: str) -> None:
    # A page on another site whose DNS name now points at 127.0.0.1 (DNS rebinding)
    # sends its own name as Host.
    refused = app.request("GET", "/api/session", host=host.format(port=app.port))
    assert refused.status == 403 and b"answers only to 127.0.0.1 and localhost" in refused.body
    assert app.request("GET", "/api/session", host=f"localhost:{app.port}").status == 200


@pytest.mark.parametrize(("origin", "csrf", "content_type", "status"), [
    ("http://evil.example", "same", "application/json", 403),
    (None, "same", "application/json", 403),
    ("null", "same", "application/json", 403),
    ("http://127.0.0.1:1", "same", "application/json", 403),
    ("same", None, "application/json", 403),
    ("same", "wrong-token", "application/json", 403),
    ("same", "same", "text/plain", 415),
])
def test_a_write_needs_its_own_origin_csrf_token_and_json(
        tmp_path: Path, app: LabelApp, origin: str | None, csrf: str | None, content_type: str,
        status: int) -> None:
    path = calibration(tmp_path / "r")
    before = path.read_bytes()
    version = app.row(1)["version"]
    refused = app.request("POST", "/api/label", origin=origin, csrf=csrf,
                          content_type=content_type,
                          body={"judge": "helpful", "line": 1, "version": version,
                                "expected": "pass"})
    assert refused.status == status, refused.body
    assert path.read_bytes() == before
    accepted = app.request("POST", "/api/label",
                           body={"judge": "helpful", "line": 1, "version": version,
                                "expected": "pass"})
    assert accepted.status == 200, accepted.body


#: Every endpoint that writes, with a body it would act on.
WRITES = {"/api/label": {"judge": "helpful", "line": 1, "expected": "pass"},
          "/api/undo": {}, "/api/gate-misses": {"judge": "helpful", "count": 0}}


@pytest.mark.parametrize("path", sorted(WRITES))
@pytest.mark.parametrize(("cookie", "origin", "csrf"), [
    (False, "same", "same"), (True, "http://evil.example", "same"), (True, None, "same"),
    (True, "same", None), (True, "same", "wrong-token")])
def test_every_write_endpoint_needs_the_token_origin_and_csrf(
        tmp_path: Path, app: LabelApp, path: str, cookie: bool, origin: str | None,
        csrf: str | None) -> None:
    calibration_file = calibration(tmp_path / "r")
    before = calibration_file.read_bytes()
    body = dict(WRITES[path])
    if "line" in body:
        body["version"] = app.row(1)["version"]
    refused = app.request("POST", path, body=body, cookie=cookie, origin=origin, csrf=csrf)
    assert refused.status == 403, refused.body
    assert b"Refused" in refused.body
    assert calibration_file.read_bytes() == before
    assert app.request("POST", path, body=body).status in (200, 409)  # the endpoint is there


@pytest.fixture
def rater_app(tmp_path: Path) -> Iterator[LabelApp]:
    """A rater's session (``--rater Ana``) whose line 1 Ana has labelled."""
    recipe = write_recipe(tmp_path / "rated", {"helpful": (UNGATED_JUDGE, [row("c1")])})
    started = LabelApp.start(recipe, "--rater", "Ana")
    assert started.label(1, expected="pass").status == 200
    yield started
    started.kill()


@pytest.mark.parametrize("path", ["/api/note", "/api/label"])
@pytest.mark.parametrize(("cookie", "origin", "csrf"), [
    (False, "same", "same"), (True, "http://evil.example", "same"), (True, None, "same"),
    (True, "same", None), (True, "same", "wrong-token")])
def test_a_rater_s_writes_need_the_token_origin_and_csrf(
        tmp_path: Path, rater_app: LabelApp, path: str, cookie: bool, origin: str | None,
        csrf: str | None) -> None:
    """A note (or a label carrying one) is a write like any other; the annotations file is
    left as it was."""
    annotations = tmp_path / "rated" / "judges" / "helpful.annotations.jsonl"
    before = annotations.read_bytes()
    body = {"judge": "helpful", "line": 1, "version": rater_app.row(1)["version"],
            "note": "why", **({"expected": "fail"} if path == "/api/label" else {})}
    refused = rater_app.request("POST", path, body=body, cookie=cookie, origin=origin,
                                csrf=csrf)
    assert refused.status == 403 and b"Refused" in refused.body, refused.body
    assert annotations.read_bytes() == before
    assert rater_app.request("POST", path, body=body).status == 200  # the endpoint is there
    assert annotations.read_bytes() != before


def test_a_note_is_refused_without_a_rater_and_checked(app: LabelApp,
                                                       rater_app: LabelApp) -> None:
    version = app.row(1)["version"]
    refused = app.request("POST", "/api/note", body={"judge": "helpful", "line": 1,
                                                     "version": version, "note": "why"})
    assert refused.status == 400 and "a note is kept per rater" in refused.json()["error"]
    body = {"judge": "helpful", "line": 1, "version": rater_app.row(1)["version"]}
    assert rater_app.request("POST", "/api/note", body={**body, "note": 3}).status == 400
    assert rater_app.request("POST", "/api/label", body={**body, "expected": "pass",
                                                         "note": ["x"]}).status == 400
    too_long = rater_app.request("POST", "/api/note", body={**body, "note": "x" * 4001})
    assert too_long.status in (400, 409) and "at most 4,000" in too_long.json()["error"]


def test_every_answer_carries_the_csp_and_no_framing(app: LabelApp) -> None:
    for path in ("/", "/api/session", "/assets/app.js", "/nothing-here"):
        answer = app.request("GET", path)
        csp = answer.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp
        assert "'unsafe-inline'" not in csp and "frame-ancestors 'none'" in csp
        assert answer.headers["x-content-type-options"] == "nosniff"
    refused = app.request("GET", "/", cookie=False)
    assert "content-security-policy" in refused.headers


def test_it_listens_on_127_0_0_1_only(app: LabelApp) -> None:
    for address in ("127.0.0.2", "::1"):
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.settimeout(2)
            assert probe.connect_ex((address, app.port)) != 0, address


def test_bad_requests_are_answered_not_crashed(app: LabelApp) -> None:
    assert app.request("GET", "/api/item/999").status == 400
    assert app.request("GET", "/api/item/0").status == 400
    assert app.request("POST", "/api/label", body={"judge": "helpful", "line": "1"}).status == 400
    assert app.request("POST", "/api/label", body={"judge": "helpful", "line": 1, "version": "x",
                                                   "expected": "maybe"}).status == 400
    assert app.request("POST", "/api/label", body={"judge": "other", "line": 1, "version": "x",
                                                   "expected": "pass"}).status == 400
    assert app.request("POST", "/api/label", body={"line": 1, "version": "x",
                                                   "expected": "pass"}).status == 400
    assert app.request("POST", "/api/gate-misses", body={"judge": "helpful", "count": 0}
                       ).status == 409  # an ungated judge has no gate misses
    assert app.request("POST", "/api/nothing").status == 404
    assert app.request("GET", "/api/session").status == 200  # still serving


def _raw(app: LabelApp, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` as bytes (http.client would not send it as written); the answer."""
    with socket.create_connection(("127.0.0.1", app.port), timeout=30) as connection:
        connection.sendall(request)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, _, value in
               (line.partition(":") for line in header_lines)}
    return int(status_line.split()[1]), headers, body


def _cookie(app: LabelApp) -> bytes:
    return f"Cookie: introspection_label_{app.port}={app.token}\r\n".encode()


def test_a_repeated_host_header_is_refused(app: LabelApp) -> None:
    good = f"Host: 127.0.0.1:{app.port}\r\n".encode()
    for hosts in (good + b"Host: evil.example\r\n", good + good,
                  b"Host: evil.example\r\n" + good):
        status, headers, _ = _raw(app, b"GET /api/session HTTP/1.1\r\n" + hosts + _cookie(app)
                                  + b"Connection: close\r\n\r\n")
        assert status == 400, hosts
        assert "content-security-policy" in headers


@pytest.mark.parametrize("target", ["http://evil.example/api/session",
                                    "http://evil.example:{port}/api/session",
                                    "http://127.0.0.1:1/api/session"])
def test_an_absolute_url_naming_another_host_is_refused(app: LabelApp, target: str) -> None:
    def get(target: str) -> tuple[int, dict[str, str], bytes]:
        return _raw(app, f"GET {target.format(port=app.port)} HTTP/1.1\r\n"
                    f"Host: 127.0.0.1:{app.port}\r\n".encode() + _cookie(app)
                    + b"Connection: close\r\n\r\n")

    status, headers, body = get(target)
    assert status == 400 and b"csrf" not in body
    assert "content-security-policy" in headers
    assert get("http://127.0.0.1:{port}/api/session")[0] == 200  # its own host, absolute


@pytest.mark.parametrize("method", ["PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "BREW"])
def test_an_unknown_method_needs_the_token_and_carries_the_headers(app: LabelApp,
                                                                   method: str) -> None:
    host = f"Host: 127.0.0.1:{app.port}\r\n".encode()
    request = f"{method} /api/session HTTP/1.1\r\n".encode() + host
    refused, headers, _ = _raw(app, request + b"Connection: close\r\n\r\n")
    assert refused == 403
    assert headers["content-security-policy"] == app_csp(app)
    assert headers["x-frame-options"] == "DENY"
    allowed, headers, body = _raw(app, request + _cookie(app) + b"Connection: close\r\n\r\n")
    assert allowed == 405 and headers["allow"] == "GET, POST"
    assert headers["content-security-policy"] == app_csp(app) and b"csrf" not in body


def test_a_malformed_request_is_answered_with_the_security_headers(app: LabelApp) -> None:
    for request in (b"GET\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
                    b"GET /" + b"x" * 70_000 + b" HTTP/1.1\r\n\r\n"):
        status, headers, body = _raw(app, request)
        assert 400 <= status < 600, request[:20]
        assert headers["content-security-policy"] == app_csp(app), request[:20]
        assert headers["x-content-type-options"] == "nosniff"
        assert b"<" not in body  # no stock HTML error page


def app_csp(app: LabelApp) -> str:
    return app.request("GET", "/").headers["content-security-policy"]
