"""Deep nesting: one deeply nested fixture is that fixture's problem, judged as `check` judges it.

The answer's body is read without recursion, so no depth fails the whole
answer; each fixture's line then gets exactly `check`'s verdict. Both commands
run as real processes: how deep a row may nest depends on the Python stack.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from runtime_harness import Cli
from stub_runtime import Reply, StubRuntime, make_fixture

from introspection_cli.runtime.wirejson import JsonLiteral, JsonObject, decode_lenient
from tests.conftest import run_cli

GET = ("conversations", "get", "--judge-fixtures", "--format", "json")
RECIPE = Path(__file__).parents[2] / "fixtures" / "recipes" / "customer-support"
CALIBRATION = "rec/judges/billing-request-handling.calibration.jsonl"


def deep_fixture(conversation_id: str, url: str, depth: int) -> str:
    """A fixture whose tool input is ``depth`` nested arrays, with the right hash."""
    nested = "[" * depth + "]" * depth
    judge_input = (f'{{"conversation_id":"{conversation_id}","events":[{{"type":"tool",'
                   f'"name":"x","input":{nested},"output":1,"status":"ok"}}]}}')
    canonical = (f'{{"conversation_id":"{conversation_id}","events":[{{"input":{nested},'
                 '"name":"x","output":1,"status":"ok","type":"tool"}]}')  # RFC 8785 order
    fixture = make_fixture(conversation_id, url)
    fixture["judge_input"] = "@JUDGE_INPUT@"
    fixture["snapshot_hash"] = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    return json.dumps(fixture, separators=(",", ":")).replace('"@JUDGE_INPUT@"', judge_input)


def answer(*items: str) -> Reply:
    return Reply(200, f'{{"fixtures": [{", ".join(items)}], "errors": []}}'.encode(),
                 {"Content-Type": "application/json"})


def env_of(cli: Cli) -> dict[str, str]:
    return {key: value for key, value in cli.env.items() if value is not None}


def test_one_very_deep_fixture_does_not_fail_the_others(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    runtime.script(answer(deep_fixture("conv_01", runtime.url, 1000),
                          json.dumps(make_fixture("conv_02", runtime.url))))
    Path("ids.txt").write_text("conv_01\nconv_02\n")

    result = run_cli([*GET, "--ids-file", "ids.txt", "--output", "rows.jsonl"],
                     cwd=logged_in.workdir, env=env_of(logged_in))

    assert result.returncode == 1, result.stderr
    assert "unexpected response" not in result.stderr
    assert "error: conv_01: the runtime sent a fixture that fails verification: " \
        "[fixture-json]" in result.stderr
    rows = (logged_in.workdir / "rows.jsonl").read_bytes().splitlines()
    assert [json.loads(row)["source"]["conversation_id"] for row in rows] == ["conv_02"]


def test_export_and_check_agree_at_the_depth_limit(logged_in: Cli, runtime: StubRuntime) -> None:
    depths = {f"conv_{n:02d}": depth for n, depth in enumerate(range(960, 990, 2), start=1)}
    lines = [deep_fixture(i, runtime.url, depth) for i, depth in depths.items()]
    work = logged_in.workdir
    shutil.copytree(RECIPE, work / "rec")  # check reads calibration files inside a recipe
    (work / CALIBRATION).write_text("".join(line + "\n" for line in lines))
    (work / "ids.txt").write_text("".join(f"{i}\n" for i in depths))
    runtime.script(answer(*lines))

    checked = run_cli(["check", "--format", "json", CALIBRATION], cwd=work,
                      env=env_of(logged_in))
    exported = run_cli([*GET, "--ids-file", "ids.txt", "--output", "rows.jsonl"], cwd=work,
                       env=env_of(logged_in))

    rejected_lines = {d["line"] for d in json.loads(checked.stdout)["diagnostics"]
                      if d["severity"] == "error" and d["path"].endswith(CALIBRATION)}
    check_accepts = {i for n, i in enumerate(depths, start=1) if n not in rejected_lines}
    written = (work / "rows.jsonl").read_bytes().splitlines() if (work / "rows.jsonl").exists() \
        else []
    # Not json.loads: these rows nest too deeply for the test's own (deeper) stack.
    export_accepts = {row.split(b'"conversation_id":"')[1].split(b'"')[0].decode()
                      for row in written}
    assert export_accepts == check_accepts, (exported.stderr, checked.stdout)
    assert check_accepts and check_accepts != set(depths)  # the limit is inside the range


_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                     st.text())
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner), st.dictionaries(st.text(), inner)), max_leaves=20)

_REFERENCE = json.JSONDecoder(object_pairs_hook=JsonObject, parse_float=JsonLiteral,
                              parse_int=JsonLiteral, parse_constant=JsonLiteral)


@given(_values, st.sampled_from([None, 0, 2]))
def test_the_iterative_decoder_reads_what_the_stdlib_decoder_reads(value: Any,
                                                                   indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    assert decode_lenient(text) == _REFERENCE.decode(text)


def test_the_iterative_decoder_keeps_what_a_strict_one_would_refuse() -> None:
    text = ' {"a": NaN, "a": [-Infinity, 1.50, -0, 1E+2], "b": "\\ud800", "c": {}, "d": []} '
    assert decode_lenient(text) == _REFERENCE.decode(text)


@given(st.sampled_from(['', '{', '[1,]', '{"a" 1}', '{"a":1,}', '01', '[1] x', '"\t"', '{1:2}',
                        'nul', '-', '[1 2]', '{"a":1 "b":2}', '1.', '.5', '[', ']']))
def test_the_iterative_decoder_refuses_what_the_stdlib_decoder_refuses(text: str) -> None:
    for decode in (decode_lenient, _REFERENCE.decode):
        try:
            decode(text)
        except ValueError:
            continue
        raise AssertionError(f"{decode} accepted {text!r}")
