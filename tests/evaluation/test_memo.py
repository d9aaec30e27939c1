"""Prompt memos: a re-run of unchanged rows renders nothing, and any change re-renders.

A memo stands for a rendered request (introspection_cli/evaluation/memo.py), so
these tests pin that every input of the prompt changes it, that rendering reads
nothing of a row that its snapshot_hash does not cover, that the code digest
covers every module and library a prompt passes through, and, end to end, that a
fully cached re-run renders no prompt and imports neither Jinja2 nor an SDK.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from introspection_cli.evaluation import memo as memo_module
from introspection_cli.evaluation.cache import CACHE_FILE
from introspection_cli.evaluation.gate import evaluate_gate
from introspection_cli.evaluation.memo import LIBRARIES, MemoMaker, code_digest
from introspection_cli.evaluation.plan import JudgePlan
from introspection_cli.evaluation.prompts.render import render_prompt
from introspection_cli.evaluation.runner import EvalOptions, EvalResult, run_eval
from introspection_cli.fixture.canonical import canonical_json
from introspection_cli.recipe.model import Judge, LlmConfig, Matcher, Recipe, ValueMatcher
from tests.evaluation.conftest import (
    BILLING_GATE,
    GATED_JUDGE,
    fixture_row,
    recipe_object,
    write_recipe,
)
from tests.evaluation.stub_model_server import StubModelServer

REPO = Path(__file__).resolve().parents[2]
ENDPOINT = "http://127.0.0.1:9/v1"
JUDGE = Judge("billing", "d", LlmConfig("openai", "stub-model", 0.0, 300),
              "Return pass when the agent handled it.", Path("billing.yaml"), BILLING_GATE)
HASH = "sha256:" + "ab" * 32


def memos(judge: Judge = JUDGE, *, provider: str = "openai", model: str = "stub-model",
          endpoint: str = ENDPOINT, snapshot_hash: str = HASH, samples: int = 2) -> list[str]:
    plan = JudgePlan(judge, provider, model, rows=())
    made = MemoMaker(plan, provider=provider, endpoint=endpoint).memos(snapshot_hash, samples)
    assert all(memo is not None for memo in made)
    return [memo for memo in made if memo is not None]


SWAPPED_FIELDS = (Matcher("message", {"text": BILLING_GATE[0].fields["text"],
                                      "role": BILLING_GATE[0].fields["role"]}),)
OTHER_PATTERN = (Matcher("message", {**BILLING_GATE[0].fields,
                                     "text": ValueMatcher("/refund/i", "refund", "i")}),)
CHANGES: dict[str, dict[str, Any]] = {
    "instructions": {"judge": dataclasses.replace(JUDGE, instructions="Return fail.")},
    "gate pattern": {"judge": dataclasses.replace(JUDGE, gate=OTHER_PATTERN)},
    "no gate": {"judge": dataclasses.replace(JUDGE, gate=None)},
    "temperature": {"judge": dataclasses.replace(
        JUDGE, llm=dataclasses.replace(JUDGE.llm, temperature=0.5))},
    "max output tokens": {"judge": dataclasses.replace(
        JUDGE, llm=dataclasses.replace(JUDGE.llm, max_output_tokens=301))},
    "model": {"model": "other-model"},
    "provider": {"provider": "anthropic"},
    "endpoint": {"endpoint": "http://127.0.0.1:10/v1"},
    "conversation": {"snapshot_hash": "sha256:" + "cd" * 32},
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_every_input_of_the_prompt_changes_the_memo(change: dict[str, Any]) -> None:
    assert set(memos(**change)).isdisjoint(memos())


def test_the_order_a_matchers_fields_are_written_in_is_not_an_input() -> None:
    # The prompt shows them by name (tests/evaluation/test_prompt_render.py), as the
    # fingerprint sees them: one request, one memo.
    assert memos(dataclasses.replace(JUDGE, gate=SWAPPED_FIELDS)) == memos()


def test_each_sample_has_its_own_memo_and_memos_are_stable() -> None:
    first, second = memos()
    assert first != second and memos() == [first, second]
    assert memos(samples=1) == [first]  # sample 0 is sample 0 whatever --samples says
    # Credentials in the URL are not part of the endpoint's identity (as for the key).
    assert memos(endpoint="http://user:secret@127.0.0.1:9/v1") == [first, second]


def test_a_change_in_the_code_changes_every_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    before = memos()
    monkeypatch.setattr(memo_module, "code_digest", lambda: "0" * 64)
    assert set(memos()).isdisjoint(before)


def test_no_code_digest_no_memo_and_no_hash_no_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = JudgePlan(JUDGE, "openai", "stub-model", rows=())
    assert MemoMaker(plan, provider="openai", endpoint=ENDPOINT).memos(None, 2) == [None, None]
    monkeypatch.setattr(memo_module, "code_digest", lambda: None)
    assert MemoMaker(plan, provider="openai", endpoint=ENDPOINT).memos(HASH, 1) == [None]


def test_the_code_digest_reads_every_source_and_template(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "introspection_cli"
    (package / "evaluation" / "prompts").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    template = package / "evaluation" / "prompts" / "user.j2"
    template.write_text("{{ instructions }}\n", encoding="utf-8")
    (package / "evaluation" / "__pycache__").mkdir()
    (package / "evaluation" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    monkeypatch.setattr(memo_module, "_PACKAGE", package)
    digest = code_digest.__wrapped__
    before = digest()
    assert before is not None and digest() == before
    template.write_text("{{ instructions }} \n", encoding="utf-8")
    assert digest() != before
    (package / "evaluation" / "__pycache__" / "x.pyc").write_bytes(b"\1")  # not a source
    assert digest() == digest()
    (package / "evaluation" / "new.py").write_text("", encoding="utf-8")
    assert digest() not in (before, None)


_PROBE = """
import json, sys
at_start = set(sys.modules)  # what site.py loaded (.pth hooks): not the prompt's
from pathlib import Path
from introspection_cli.evaluation.cache_keys import KeyMaker
from introspection_cli.evaluation.plan import JudgePlan, _plan_row
from introspection_cli.fixture import FixtureRow
from introspection_cli.recipe.model import Judge, LlmConfig, Matcher, ValueMatcher
gate = (Matcher("message", {"text": ValueMatcher("/refund/i", "refund", "i")}),)
judge = Judge("j", "d", LlmConfig("openai", "m"), "Grade it.", Path("j.yaml"), gate)
events = [{"type": "message", "role": "user", "text": "refund 1,5 \u20ac [BEGIN x"},
          {"type": "tool", "name": "t", "status": "ok", "input": {"a": 1.5}, "output": None},
          {"type": "other", "x": [1, 2]}]
judge_input = {"conversation_id": "c", "events": events}
line = json.dumps({"judge_input": judge_input}).encode()  # read back by request_for
row = _plan_row(judge, FixtureRow(1, "c", "pass", None, "sha256:0", judge_input, {}, line),
                "pass", 1.0)
plan = JudgePlan(judge, "openai", "m", (row,))
request = plan.request_for(row)
KeyMaker(provider="openai", endpoint="http://x", template=plan.template).keys(request, 2)
print(json.dumps({name: getattr(module, "__file__", None)
                  for name, module in list(sys.modules.items()) if name not in at_start}))
"""


def test_the_code_digest_covers_every_module_and_library_a_prompt_passes_through() -> None:
    result = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                            check=True, cwd=REPO)
    loaded: dict[str, str | None] = json.loads(result.stdout.splitlines()[-1])
    sources = {Path(path).resolve() for _, path in memo_module._sources()}
    ours = {name: file for name, file in loaded.items()
            if name.split(".")[0] == "introspection_cli" and file}
    assert "introspection_cli.evaluation.prompts.render" in ours
    assert {Path(file).resolve() for file in ours.values()} <= sources
    installed = {Path(sysconfig.get_paths()[kind]).resolve() for kind in ("purelib", "platlib")}
    libraries = {name.split(".")[0] for name, file in loaded.items()
                 if file and any(folder in Path(file).resolve().parents for folder in installed)
                 and name.split(".")[0] != "introspection_cli"}
    # PyYAML reads judge files; a memo takes the judge as loaded, not its YAML.
    assert libraries - {"yaml", "_yaml"} <= set(LIBRARIES), libraries


EVENT_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(1 - 2**53, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: abs(x) < 1e300)
    | st.sampled_from([1.0, -0.0, 100.0, 1e21]) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)
EVENTS = st.lists(st.fixed_dictionaries(
    {"type": st.sampled_from(["message", "tool", "feedback", "other"])},
    optional={"role": EVENT_VALUES, "text": EVENT_VALUES, "name": EVENT_VALUES,
              "status": EVENT_VALUES, "input": EVENT_VALUES, "output": EVENT_VALUES,
              "rating": EVENT_VALUES, "comment": EVENT_VALUES, "extra": EVENT_VALUES}),
    max_size=4)
ANY_TEXT_GATE = (Matcher("message", {"text": ValueMatcher("/1|a|true/", "1|a|true")}),
                 Matcher("tool", {"input": ValueMatcher("/1/", "1")}))


@settings(max_examples=150, deadline=None)
@given(EVENTS)
# A whole float from 2**53 up is written as digits and reads back as an integer beyond
# RFC 8785's range: its text, and its neighbours', must stay as they were.
@example([{"type": "message", "text": "a"},
          {"type": "other", "role": 9007199254740992.0, "extra": 1e-09}])
@example([{"type": "message", "text": "a", "role": [2.0 ** 60, 1e-07]}])
def test_rendering_and_gating_read_only_what_the_snapshot_hash_covers(
        events: list[dict[str, Any]]) -> None:
    # snapshot_hash is the hash of the canonical JSON: what reads back from it must
    # render and gate exactly as the row itself (1.0 reads back as 1, keys sorted).
    judge_input = {"conversation_id": "c", "events": events}
    again = json.loads(canonical_json(judge_input))
    judge = dataclasses.replace(JUDGE, gate=ANY_TEXT_GATE)
    gate = evaluate_gate(judge.gate, events, timeout=5.0)
    assert evaluate_gate(judge.gate, again["events"], timeout=5.0) == gate
    if gate.applies:
        assert render_prompt(judge, again, gate) == render_prompt(judge, judge_input, gate)


# -- end to end ---------------------------------------------------------------------

def billing_recipe(tmp_path: Path, gate: tuple[Matcher, ...] | None = BILLING_GATE) -> Recipe:
    rows = [fixture_row(f"conv_{i}", f"refund {i} VERDICT:pass") for i in range(3)]
    root = tmp_path / "recipe"
    if not root.exists():
        write_recipe(root, {"billing": (GATED_JUDGE, rows)})
    return recipe_object(root, gate=gate)


def run(recipe: Recipe) -> EvalResult:
    return run_eval(recipe, EvalOptions(max_retries=0, timeout=5.0))


def refuse_to_render(monkeypatch: pytest.MonkeyPatch) -> None:
    from introspection_cli.evaluation.prompts import render

    def render_nothing(*_: object) -> None:
        raise AssertionError("a prompt was rendered")

    monkeypatch.setattr(render.JudgePrompt, "render", render_nothing)


def test_a_rerun_of_unchanged_rows_renders_no_prompt(
        tmp_path: Path, stub: StubModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    recipe = billing_recipe(tmp_path)
    first = run(recipe)
    assert first.run.usage.requests == 3
    refuse_to_render(monkeypatch)
    again = run(recipe)
    assert (again.run.usage.requests, again.run.usage.cached) == (0, 3)
    assert [(r.outcome, r.reasoning) for r in again.run.judges[0].rows] == [
        (r.outcome, r.reasoning) for r in first.run.judges[0].rows]


def test_a_new_row_among_remembered_ones_is_the_only_one_rendered_and_sent(
        tmp_path: Path, stub: StubModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    recipe = billing_recipe(tmp_path)
    run(recipe)
    calibration = recipe.judges["billing"].calibration_path
    with calibration.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(fixture_row("conv_new", "refund new VERDICT:fail")) + "\n")
    from introspection_cli.evaluation.prompts import render

    rendered: list[str] = []
    real = render.JudgePrompt.render

    def counted(self: render.JudgePrompt, judge_input: Any, gate: Any) -> Any:
        rendered.append(judge_input["conversation_id"])
        return real(self, judge_input, gate)

    monkeypatch.setattr(render.JudgePrompt, "render", counted)
    again = run(recipe)
    assert (again.run.usage.requests, again.run.usage.cached) == (1, 3)
    assert rendered == ["conv_new"]
    assert [r.outcome for r in again.run.judges[0].rows] == ["pass", "pass", "pass", "fail"]


def test_a_gate_with_its_fields_reordered_is_the_same_request(tmp_path: Path,
                                                              stub: StubModelServer) -> None:
    first = run(billing_recipe(tmp_path))
    assert "matched `event=message role=user text=/refund|invoice/i`" in stub.requests[-1].user_text
    swapped = (Matcher("message", {"text": BILLING_GATE[0].fields["text"],
                                   "role": BILLING_GATE[0].fields["role"]}),)
    again = run(billing_recipe(tmp_path, gate=swapped))
    # Same fingerprint, same prompt: every verdict is the cached one, nothing is sent.
    assert (again.run.usage.requests, again.run.usage.cached) == (0, first.run.usage.requests)


def test_verdicts_cached_without_memos_are_found_by_key_then_by_memo(
        tmp_path: Path, stub: StubModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    recipe = billing_recipe(tmp_path)
    run(recipe)
    with sqlite3.connect(tmp_path / "cache" / CACHE_FILE) as db:  # a cache from before memos
        db.execute("DROP TABLE prompts")
    assert run(recipe).run.usage.cached == 3  # rendered and found by key; memos kept
    refuse_to_render(monkeypatch)
    third = run(recipe)
    assert (third.run.usage.requests, third.run.usage.cached) == (0, 3)


def test_a_memo_whose_verdict_is_gone_is_a_miss(tmp_path: Path, stub: StubModelServer) -> None:
    recipe = billing_recipe(tmp_path)
    run(recipe)
    with sqlite3.connect(tmp_path / "cache" / CACHE_FILE) as db:
        db.execute("DELETE FROM verdicts")
    assert run(recipe).run.usage.requests == 3


_CLI_RUN = """
import sys
from introspection_cli.cli.app import main
try:
    main(["judges", "eval", sys.argv[1], "--format", "json"])
except SystemExit as exit:
    print(exit.code)
print(sorted(({m.split(".")[0] for m in sys.modules} | set(sys.modules))
             & {"openai", "anthropic", "jinja2", "aiohttp", "httpx2", "rich", "asyncio", "ssl",
                "introspection_cli.evaluation.batch",
                # a recipe without annotations, a run without test rows: no raters' figures
                # (numpy), no exposure file
                "numpy", "introspection_cli.workflows.agree",
                "introspection_cli.annotations.file",
                "introspection_cli.certification.exposure_record",
                # one model: nothing to compare
                "introspection_cli.reporting.model_comparison"}))
"""


def test_a_fully_cached_run_imports_no_sdk_http_stack_jinja2_event_loop_or_figures(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = billing_recipe(tmp_path).root
    outputs = [subprocess.run([sys.executable, "-c", _CLI_RUN, str(root)], capture_output=True,
                              text=True, check=False, cwd=REPO).stdout for _ in range(2)]
    first, again = (output.strip().splitlines()[-2:] for output in outputs)
    assert first[0] == "0" and "openai" in first[1] and "jinja2" in first[1], outputs[0]
    assert "introspection_cli.evaluation.batch" not in first[1], outputs[0]  # only --batch
    assert again == ["0", "[]"], outputs[1]
    assert len(stub.requests) == 3


_SDK_AT_LOOP_START = """
import asyncio, sys
from introspection_cli.cli.app import main
run = asyncio.run
def recording_run(coroutine):
    print("openai loaded when the loop starts:", "openai" in sys.modules)
    return run(coroutine)
asyncio.run = recording_run
try:
    main(["judges", "eval", sys.argv[1], "--format", "json"])
except SystemExit as exit:
    print("exit", exit.code)
print("openai loaded at the end:", "openai" in sys.modules)
"""


def test_a_run_with_rows_to_send_imports_the_sdk_before_its_event_loop_starts(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = billing_recipe(tmp_path).root
    output = subprocess.run([sys.executable, "-c", _SDK_AT_LOOP_START, str(root)],
                            capture_output=True, text=True, check=False, cwd=REPO).stdout
    lines = [line for line in output.splitlines() if line.startswith(("openai", "exit"))]
    assert lines == ["openai loaded when the loop starts: True", "exit 0",
                     "openai loaded at the end: True"], lines
    assert len(stub.requests) == 3


def test_a_run_without_the_api_key_imports_no_sdk_before_the_key_check_stops_it(
        tmp_path: Path, stub: StubModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    root = billing_recipe(tmp_path).root
    monkeypatch.delenv("OPENAI_API_KEY")
    result = subprocess.run([sys.executable, "-c", _SDK_AT_LOOP_START, str(root)],
                            capture_output=True, text=True, check=False, cwd=REPO)
    lines = [line for line in result.stdout.splitlines() if line.startswith(("openai", "exit"))]
    assert lines == ["openai loaded when the loop starts: False", "exit 2",
                     "openai loaded at the end: False"], (lines, result.stderr)
    assert "OPENAI_API_KEY is not set" in result.stderr
    assert stub.requests == []
