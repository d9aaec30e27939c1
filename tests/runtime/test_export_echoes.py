"""Text the runtime sends back is printed scrubbed of the token and on one line each.

The runtime can put anything in an id, an ``errors`` entry or a fixture field
that a rejection quotes; the ``cli`` fixture also checks, on teardown, that the
sentinel token never reached stdout or stderr.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from runtime_harness import SENTINEL_TOKEN, Cli
from stub_runtime import Reply, StubRuntime, make_fixture


def body(key: str, *items: str, errors: Any = ()) -> Reply:
    """An export answer whose objects are given as raw JSON text."""
    return Reply(200, f'{{"{key}": [{", ".join(items)}], "errors": {json.dumps(list(errors))}}}'
                 .encode(), {"Content-Type": "application/json"})


def get(cli: Cli, *ids: str, judge: bool = True) -> Any:
    Path("ids.txt").write_text("".join(f"{i}\n" for i in ids))
    flags = ("--judge-fixtures", "--format", "json") if judge else ()
    return cli("conversations", "get", "--ids-file", "ids.txt", *flags)


def fixture(conversation_id: str, url: str) -> str:
    return json.dumps(make_fixture(conversation_id, url))


ECHOES = {
    "errors entry id": lambda url: body("fixtures", fixture("conv_01", url), errors=[
        {"conversation_id": SENTINEL_TOKEN, "code": "x", "message": "y"}]),
    "errors entry id of a requested conversation's neighbour": lambda url: body(
        "fixtures", fixture("conv_01", url), errors=[
            {"conversation_id": f"conv_01{SENTINEL_TOKEN}", "code": "x", "message": "y"}]),
    "unrequested fixture id": lambda url: body(
        "fixtures", fixture("conv_01", url), fixture(SENTINEL_TOKEN, url)),
    "rejection quoting a field": lambda url: body("fixtures", fixture("conv_01", url).replace(
        '"schema_version": 1', f'"schema_version": "{SENTINEL_TOKEN}"')),
}


@pytest.mark.parametrize("answer", ECHOES.values(), ids=ECHOES.keys())
def test_the_token_echoed_back_is_never_printed(
    logged_in: Cli, runtime: StubRuntime, answer: Any
) -> None:
    runtime.script(answer(runtime.url))

    result = get(logged_in, "conv_01")

    assert SENTINEL_TOKEN not in result.stderr
    assert SENTINEL_TOKEN not in result.out
    assert "[token]" in result.stderr


def test_a_bundle_echoing_the_token_as_its_id_is_scrubbed(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    runtime.script(body("conversations", '{"conversation_id":"conv_01","events":[]}',
                        json.dumps({"conversation_id": SENTINEL_TOKEN, "events": []})))

    result = get(logged_in, "conv_01", judge=False)

    assert SENTINEL_TOKEN not in result.stderr
    assert "[token]" in result.stderr
    # Only conv_01's bundle is written: the echo was not requested.
    assert [json.loads(line)["conversation_id"] for line in result.out.splitlines()] == [
        "conv_01"]


FORGED = "\x1b[2K\rintrospection: wrote 20 fixture(s)\nx"


@pytest.mark.parametrize("where", ["errors entry", "unrequested fixture", "requested id"])
def test_control_characters_cannot_forge_a_line(
    logged_in: Cli, runtime: StubRuntime, where: str
) -> None:
    requested = ["conv_01"]
    if where == "errors entry":
        runtime.script(body("fixtures", fixture("conv_01", runtime.url), errors=[
            {"conversation_id": FORGED, "code": "c\r", "message": "m\n"}]))
    elif where == "unrequested fixture":
        runtime.script(body("fixtures", fixture("conv_01", runtime.url),
                            fixture(FORGED, runtime.url)))
    else:
        requested.append("conv_\x1b[2K\x0bx")  # an id file line may hold any control but \n

    result = get(logged_in, *requested)

    lines = result.stderr.splitlines()
    assert not any(text.startswith("introspection: wrote 20") for text in lines), lines
    assert all(text.startswith("introspection: ") for text in lines), lines
    assert "\x1b" not in result.stderr and "\r" not in result.stderr
    assert "\\x1b[2K" in result.stderr
