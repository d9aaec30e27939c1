"""One broken object in an export answer is that object's problem, judged as `check` judges it.

The stub answers with hand-made bodies here (a repeated key, NaN, a lone
surrogate cannot come out of ``json.dumps`` as a dict).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from runtime_harness import Cli
from stub_runtime import Reply, StubRuntime, make_fixture

REPO = Path(__file__).parents[2]


def compact(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def body(key: str, *items: str, errors: str = "[]") -> Reply:
    """An export answer whose objects are given as raw JSON text."""
    return Reply(200, f'{{"{key}": [{", ".join(items)}], "errors": {errors}}}'.encode(),
                 {"Content-Type": "application/json"})


def get(cli: Cli, *ids: str, judge: bool = True, extra: tuple[str, ...] = ()) -> Any:
    Path("ids.txt").write_text("".join(f"{i}\n" for i in ids))
    flags = ("--judge-fixtures", "--format", "json") if judge else ()
    return cli("conversations", "get", "--ids-file", "ids.txt", *flags, *extra)


def with_surrogate(url: str) -> str:
    fixture = make_fixture("conv_01", url)
    fixture["judge_input"]["events"][0]["text"] = "\ud800"  # json.dumps writes "\ud800"
    return json.dumps(fixture)


def with_repeated_key(url: str) -> str:
    return json.dumps(make_fixture("conv_01", url)).replace(
        '"expected": null', '"expected": null, "expected": "pass"')


def with_nan(url: str) -> str:
    return json.dumps(make_fixture("conv_01", url)).replace('"charges": 2', '"charges": NaN')


def with_huge_number(url: str) -> str:
    return json.dumps(make_fixture("conv_01", url)).replace('"charges": 2', '"charges": 1e400')


def tampered(url: str) -> str:
    return json.dumps(make_fixture("conv_01", url)).replace("Refund for", "Refund fr")


FAULTS: list[tuple[str, Callable[[str], str]]] = [
    ("lone surrogate", with_surrogate),
    ("repeated key", with_repeated_key),
    ("NaN", with_nan),
    ("number too large", with_huge_number),
    ("hash mismatch", tampered),
]


@pytest.mark.parametrize("fault", [f for _, f in FAULTS], ids=[name for name, _ in FAULTS])
def test_a_broken_fixture_is_rejected_with_checks_code_and_the_rest_written(
    logged_in: Cli, runtime: StubRuntime, fault: Callable[[str], str]
) -> None:
    broken = fault(runtime.url)
    good = make_fixture("conv_02", runtime.url)
    runtime.script(body("fixtures", broken, json.dumps(good)))

    result = get(logged_in, "conv_01", "conv_02")
    check_codes = _check_codes(logged_in, broken)

    assert result.exit_code == 1, result.stderr
    assert result.stdout == compact(good).encode() + b"\n"
    assert "internal error" not in result.stderr
    assert "not a JSON object" not in result.stderr
    reported = [line for line in result.stderr.splitlines() if "error: conv_01:" in line]
    assert len(reported) == 1, result.stderr
    assert "the runtime sent a fixture that fails verification" in reported[0]
    assert check_codes and all(f"[{code}]" in reported[0] for code in check_codes)
    assert "1 of 2 requested conversation(s) were not exported" in result.stderr


def _check_codes(cli: Cli, raw: str) -> list[str]:
    """What `introspection check` says about the line the export would have written."""
    recipe = Path("recipe")
    shutil.rmtree(recipe, ignore_errors=True)
    shutil.copytree(REPO / "fixtures" / "recipes" / "customer-support", recipe)
    target = recipe / "judges" / "useful-resolution.calibration.jsonl"
    # The export's own line for the object: compact, UTF-8, lone surrogates escaped.
    written = _rewritten(raw)
    target.write_bytes(written + b"\n")
    check = cli("check", str(recipe), "--format", "json")
    return sorted({d["code"] for d in json.loads(check.out)["diagnostics"]
                   if d["path"].endswith(target.name) and d["code"] != "fixture-unlabelled"})


def _rewritten(raw: str) -> bytes:
    from introspection_cli.runtime.wirejson import parse_export_body

    return parse_export_body(f'{{"fixtures": [{raw}]}}'.encode(), "fixtures").lines[0]


def test_the_written_line_keeps_what_check_judges() -> None:
    """The line the export judges (and would write) holds exactly what the runtime sent."""
    raw = ('{"b": 1, "a": [1.50, -0, 1e400, NaN, -Infinity], "b": 2, '
           '"s": "\\ud800 \\u00e9 \\ud83d\\ude00 \\n", "t": true, "f": false, "n": null, '
           '"o": {}, "l": []}')

    line = _rewritten(raw)

    assert line == ('{"b":1,"a":[1.50,-0,1e400,NaN,-Infinity],"b":2,'
                    '"s":"\\ud800 \u00e9 \U0001f600 \\n","t":true,"f":false,"n":null,'
                    '"o":{},"l":[]}').encode()


def test_a_bundle_with_a_lone_surrogate_is_written_as_valid_utf8_json(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    bundle = {"conversation_id": "conv_01", "events": [{"type": "message", "text": "a\ud800b"}]}
    other = {"conversation_id": "conv_02", "events": []}
    runtime.script(body("conversations", json.dumps(bundle), json.dumps(other)))

    result = get(logged_in, "conv_01", "conv_02", judge=False)

    assert result.exit_code == 0, result.stderr
    first, second = result.stdout.splitlines()
    assert first.decode("utf-8") == compact(bundle).replace("\ud800", "\\ud800")
    assert json.loads(first) == bundle
    assert json.loads(second) == other


def test_a_bundle_that_is_not_strict_json_is_not_written(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    bad = '{"conversation_id": "conv_01", "events": [], "events": [1]}'
    good = {"conversation_id": "conv_02", "events": []}
    runtime.script(body("conversations", bad, json.dumps(good)))

    result = get(logged_in, "conv_01", "conv_02", judge=False)

    assert result.exit_code == 1
    assert result.stdout == compact(good).encode() + b"\n"
    assert "error: conv_01: the runtime sent a conversation that is not valid JSON" \
        in result.stderr
    assert '"events" appears twice' in result.stderr


def test_a_repeated_key_in_the_envelope_is_still_a_shape_error(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    good = json.dumps(make_fixture("conv_01", runtime.url))
    runtime.script(Reply(200, f'{{"fixtures": [{good}], "fixtures": []}}'.encode()))

    result = get(logged_in, "conv_01")

    assert result.exit_code == 3
    assert 'the key "fixtures" appears twice in the body' in result.stderr
    assert result.stdout == b""


@pytest.mark.parametrize(("entry", "why"), [
    ('{"code": "x", "message": "gone"}', "an entry of `errors` has no conversation_id (x gone)"),
    ('"oops"', "entry 1 of `errors` is not an object"),
    ('{"conversation_id": "conv_02", "conversation_id": "conv_03", "code": "x"}',
     'the key "conversation_id" appears twice in entry 1 of `errors`'),
])
def test_an_unreadable_errors_entry_is_a_warning_and_valid_fixtures_are_written(
    logged_in: Cli, runtime: StubRuntime, entry: str, why: str
) -> None:
    good = json.dumps(make_fixture("conv_01", runtime.url))
    runtime.script(body("fixtures", good, errors=f"[{entry}]"))

    result = get(logged_in, "conv_01", "conv_02")

    assert result.exit_code == 1, result.stderr
    assert result.stdout == compact(make_fixture("conv_01", runtime.url)).encode() + b"\n"
    assert f"warning: the runtime sent an unreadable error, ignored: {why}" in result.stderr
    assert "error: conv_02: the runtime returned neither a fixture nor an error" in result.stderr
    assert "unexpected response" not in result.stderr
