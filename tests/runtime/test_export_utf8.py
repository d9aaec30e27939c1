"""One exported fixture holding invalid UTF-8 is that fixture's ``fixture-json``; the rest are written.

The runtime's bytes are judged as sent: the fixture with the bad bytes gets the
code ``check`` gives those bytes, and its neighbours are written unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runtime_harness import Cli
from stub_runtime import Reply, StubRuntime, make_fixture


def raw_body(*items: bytes, key: bytes = b"fixtures", errors: bytes = b"[]") -> Reply:
    return Reply(200, b'{"' + key + b'": [' + b", ".join(items) + b'], "errors": ' + errors
                 + b"}", {"Content-Type": "application/json"})


def fixture_bytes(conversation_id: str, url: str, *, text: bytes | None = None,
                  indent: int | None = None) -> bytes:
    """The fixture as JSON bytes; ``text`` replaces the first message's string bytes raw."""
    fixture = make_fixture(conversation_id, url)
    marker = "@@TEXT@@"
    if text is not None:
        fixture["judge_input"]["events"][0]["text"] = marker
    encoded = json.dumps(fixture, ensure_ascii=False, indent=indent).encode("utf-8")
    return encoded.replace(marker.encode(), text) if text is not None else encoded


def get(cli: Cli, *ids: str) -> tuple[int, bytes, str]:
    Path("ids.txt").write_text("".join(f"{i}\n" for i in ids))
    result = cli("conversations", "get", "--ids-file", "ids.txt", "--judge-fixtures",
                 "--format", "json")
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("bad", [b"caf\xe9", b"\xff\xfe", b"\xed\xa0\x80",  # a UTF-8 surrogate
                                 b"truncated \xe2\x82"])
@pytest.mark.parametrize("indent", [None, 2], ids=["compact", "pretty"])
def test_a_fixture_with_invalid_utf8_is_its_own_failure(
    logged_in: Cli, runtime: StubRuntime, bad: bytes, indent: int | None
) -> None:
    runtime.script(raw_body(fixture_bytes("conv_01", runtime.url, indent=indent),
                            fixture_bytes("conv_02", runtime.url, text=bad, indent=indent),
                            fixture_bytes("conv_03", runtime.url, indent=indent)))

    code, stdout, stderr = get(logged_in, "conv_01", "conv_02", "conv_03")

    assert code == 1, stderr
    rows = [json.loads(line) for line in stdout.splitlines()]
    assert [row["source"]["conversation_id"] for row in rows] == ["conv_01", "conv_03"]
    assert rows[0] == make_fixture("conv_01", runtime.url)
    assert "error: conv_02: the runtime sent a fixture that fails verification: " \
           "[fixture-json]" in stderr
    assert "is not valid UTF-8" in stderr
    assert "1 of 3 requested conversation(s) were not exported" in stderr


def test_invalid_utf8_in_an_errors_entry_is_still_reported(logged_in: Cli,
                                                           runtime: StubRuntime) -> None:
    runtime.script(raw_body(fixture_bytes("conv_01", runtime.url),
                            errors=b'[{"conversation_id": "conv_02", "code": "x", '
                                   b'"message": "bad \xff byte"}]'))

    code, stdout, stderr = get(logged_in, "conv_01", "conv_02")

    assert code == 1, stderr
    assert len(stdout.splitlines()) == 1
    assert "error: conv_02: the runtime could not export it: [x] bad" in stderr


def test_invalid_utf8_in_the_envelope_is_exit_3(logged_in: Cli, runtime: StubRuntime) -> None:
    runtime.script(raw_body(fixture_bytes("conv_01", runtime.url), key=b"fixtur\xffes"))

    code, stdout, stderr = get(logged_in, "conv_01")

    assert code == 3
    assert stdout == b""
    assert "unexpected response" in stderr
