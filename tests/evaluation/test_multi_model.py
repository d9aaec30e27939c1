"""``--model`` given more than once: one run, every judge once per model, compared with the first.

End to end through the real OpenAI and Anthropic SDKs against the stub server,
which answers by the model asked: each row says what each model answers
(``REF:pass CHEAP:fail OTHER:pass``). McNemar's mid-p values are checked against
values worked out by hand.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from introspection_cli.reporting.model import load_report_schema
from introspection_cli.workflows.judges_eval import model_choices
from tests.evaluation.conftest import SENTINEL_KEY, UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import (
    _CONTENT_FAULTS,
    RecordedRequest,
    StubModelServer,
    StubReply,
    tool_reply,
)
from tests.evaluation.test_report_cli import run_cli

#: Which marker each model reads.
MARKER_OF = {"gpt-ref": "REF", "claude-cheap": "CHEAP", "other-cheap": "OTHER"}

# (expected, REF, CHEAP, OTHER). The first model (REF) is wrong only on row 6.
# CHEAP against REF: wrong where REF is right on rows 1-4 (4 regressed), right where
# REF is wrong on row 6 (1 improved), an error on row 10 (not paired): 9 pairs.
# OTHER against REF: wrong on rows 1-3 (3 regressed), nothing improved: 10 pairs.
TABLE = [
    ("pass", "pass", "fail", "fail"),
    ("pass", "pass", "fail", "fail"),
    ("pass", "pass", "fail", "fail"),
    ("pass", "pass", "fail", "pass"),
    ("pass", "pass", "pass", "pass"),
    ("fail", "pass", "fail", "pass"),
    ("fail", "fail", "fail", "fail"),
    ("fail", "fail", "fail", "fail"),
    ("fail", "fail", "fail", "fail"),
    ("pass", "pass", "error", "pass"),
]
ROWS = [fixture_row(f"conv_{n}", f"Help me please. REF:{ref} CHEAP:{cheap} OTHER:{other}",
                    expected=expected, split="dev")
        for n, (expected, ref, cheap, other) in enumerate(TABLE, start=1)]
MODELS = ["--model", "openai:gpt-ref", "--model", "anthropic:claude-cheap",
          "--model", "other-cheap"]


def by_model(request: RecordedRequest, attempt: int) -> StubReply:
    marker = MARKER_OF[request.body["model"]]
    answer = re.search(rf"\b{marker}:(\w+)", request.user_text)
    assert answer is not None
    if answer.group(1) == "error":
        return _CONTENT_FAULTS["wrong-enum"](request.api)
    reasoning = json.dumps({"reasoning": f"{marker} says {answer.group(1)}",
                            "verdict": answer.group(1)})
    return StubReply(body=tool_reply(request.api, reasoning))


@pytest.fixture
def scripted(stub: StubModelServer) -> StubModelServer:
    stub.script = by_model
    return stub


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    return write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, ROWS)})


def test_each_model_runs_the_same_rows_and_is_compared_with_the_first(
        scripted: StubModelServer, recipe: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["judges", "eval", str(recipe), "--format", "json", *MODELS,
                              "--max-error-rate", "0.2", "--output",
                              str(tmp_path / "report.json")], capsys)
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    jsonschema.Draft202012Validator(load_report_schema()).validate(report)
    # One run: every model was asked about every row exactly once, through its SDK.
    asked = Counter((request.api, request.body["model"]) for request in scripted.requests)
    assert asked == {("openai", "gpt-ref"): 10, ("anthropic", "claude-cheap"): 10,
                     ("openai", "other-cheap"): 10}
    (judge,) = report["judges"]
    # The judge's own entry is the first model's run, as in a single-model report.
    assert (judge["provider"], judge["model"]) == ("openai", "gpt-ref")
    assert judge["splits"]["all"]["agreement"]["value"] == pytest.approx(9 / 10)
    assert [(m["provider"], m["model"]) for m in judge["models"]] == [
        ("anthropic", "claude-cheap"), ("openai", "other-cheap")]
    assert {gate["judge"] for gate in report["gates"]} == {"helpful"}
    assert len(report["gates"]) == 2  # the first model's error-rate and judged gates only
    first, cheap, other = judge["model_comparison"]["models"]
    assert first["mcnemar"] is None and first["errors"] == 0
    assert (first["tpr"]["value"], first["tnr"]["value"]) == (1.0, 0.75)
    assert cheap["errors"] == 1 and cheap["agreement"]["value"] == pytest.approx(5 / 9)
    assert (cheap["tpr"]["value"], cheap["tnr"]["value"]) == (0.2, 1.0)
    # By hand: 4 regressed, 1 improved; mid-p = 2·P(X < 1) + P(X = 1), X ~ Bin(5, 1/2)
    # = 2/32 + 5/32 = 7/32.
    assert {k: cheap["mcnemar"][k] for k in ("paired", "improved", "regressed")} == {
        "paired": 9, "improved": 1, "regressed": 4}
    assert cheap["mcnemar"]["p_value"] == pytest.approx(7 / 32)
    # 3 regressed, none improved: mid-p = P(X = 0), X ~ Bin(3, 1/2) = 1/8.
    assert (other["mcnemar"]["paired"], other["mcnemar"]["regressed"]) == (10, 3)
    assert other["mcnemar"]["p_value"] == pytest.approx(1 / 8)
    assert other["mcnemar"]["difference"]["value"] == pytest.approx(-3 / 10)
    # Tokens per model; cost is null without a price.
    assert all(m["input_tokens"] > 0 and m["output_tokens"] > 0 and m["cost"] is None
               for m in (first, cheap, other))
    assert sum(m["usage"]["requests"] for m in judge["models"]) + judge["usage"][
        "requests"] == report["usage"]["requests"] == 30
    assert SENTINEL_KEY not in out

    # A rerun is answered from the one shared cache.
    scripted.requests.clear()
    code, out, _ = run_cli(["judges", "eval", str(recipe), *MODELS, "--max-error-rate", "0.2"],
                           capsys)
    assert code == 0
    # The error reply is never cached: only CHEAP's row 10 is asked again.
    assert [(r.body["model"]) for r in scripted.requests] == ["claude-cheap"]
    assert "models compared on split scored" in out
    table = {line.split()[0]: line.split() for line in out.splitlines()
             if line.strip().startswith(("openai/", "anthropic/"))}
    assert table["openai/gpt-ref"][1:4] == ["10", "0", "0.900"]
    assert table["openai/gpt-ref"][-1] == "first"
    assert table["anthropic/claude-cheap"][-1] == "0.219"
    assert table["openai/other-cheap"][-1] == "0.125"


def test_markdown_and_a_multi_model_report_as_a_baseline(
        scripted: StubModelServer, recipe: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    baseline = tmp_path / "multi.json"
    code, out, err = run_cli(["judges", "eval", str(recipe), "--format", "markdown", *MODELS,
                              "--max-error-rate", "0.2", "--output", str(baseline)], capsys)
    assert code == 0, err
    assert "| anthropic/claude-cheap | 9 | 1 | 0.556 | 0.200 | 1.000 |" in out
    # Everything that reads a report reads the first model: here the baseline.
    code, out, err = run_cli(["judges", "eval", str(recipe), "--model", "gpt-ref",
                              "--baseline", str(baseline), "--format", "json"], capsys)
    assert code == 0, err
    report = json.loads(out)
    (judge,) = report["judges"]
    assert "models" not in judge and "model_comparison" not in judge and "usage" not in judge
    code, out, err = run_cli(["judges", "eval", str(recipe), "--model", "gpt-ref",
                              "--baseline", str(baseline)], capsys)
    assert code == 0, err
    assert "all paired rows: 10 paired, 0 now agree, 0 no longer agree" in out


@pytest.mark.parametrize(("models", "provider", "expected"), [
    ([], None, (None, None, ())),
    (["gpt-x"], None, (None, "gpt-x", ())),
    (["gpt-x"], "openai", ("openai", "gpt-x", ())),
    (["anthropic:claude-x"], None, ("anthropic", "claude-x", ())),
    (["llama3:8b", "openai:gpt-x"], "openai", ("openai", "llama3:8b",
                                               (("openai", "gpt-x"),))),
    (["a", "anthropic:b"], None, (None, "a", (("anthropic", "b"),))),
])
def test_model_choices(models: list[str], provider: str | None, expected: Any) -> None:
    assert model_choices(models, provider) == expected


@pytest.mark.parametrize(("models", "provider", "message"), [
    (["a", "a"], None, "--model a is given twice"),
    (["anthropic:x"], "openai", "is for anthropic, but --provider openai was given"),
    (["openai:"], None, "names no model"),
])
def test_bad_model_choices_are_usage_errors(models: list[str], provider: str | None,
                                            message: str, recipe: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    args = [arg for model in models for arg in ("--model", model)]
    args += ["--provider", provider] if provider else []
    code, _, err = run_cli(["judges", "eval", str(recipe), *args], capsys)
    assert code == 2 and message in err and "Traceback" not in err


def test_rejected_rows_are_reported_once_per_judge_in_judge_order(
        scripted: StubModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows: list[dict[str, Any] | str] = [*ROWS[:2], "not json"]
    recipe = write_recipe(tmp_path / "two", {"alpha": (UNGATED_JUDGE, rows),
                                             "beta": (UNGATED_JUDGE.replace(
                                                 "name: helpful", "name: beta"), rows)})
    (recipe / "judges" / "alpha.yaml").write_text(
        (recipe / "judges" / "alpha.yaml").read_text().replace("name: helpful", "name: alpha"))
    code, _, err = run_cli(["judges", "eval", str(recipe), *MODELS], capsys)
    assert code == 1
    problems = [line for line in err.splitlines() if "calibration row(s) rejected" in line]
    assert [line.split(":")[1].strip() for line in problems] == ["judge alpha", "judge beta"]


def test_a_price_table_costs_each_model_and_the_table_tells_them_apart(
        scripted: StubModelServer, recipe: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('["gpt-ref"]\ninput = 2.0\ncached_input = 0.5\noutput = 10.0\n'
                      '["claude-cheap"]\ninput = 0.8\ncached_input = 0.08\noutput = 4.0\n',
                      encoding="utf-8")
    monkeypatch.setenv("INTROSPECTION_PRICES", str(prices))
    code, out, err = run_cli(["judges", "eval", str(recipe), "--format", "json", *MODELS,
                              "--max-error-rate", "0.2", "--no-cache"], capsys)
    assert code == 0, err
    first, cheap, other = json.loads(out)["judges"][0]["model_comparison"]["models"]
    # The stub reports 100 input and 20 output tokens a call, none from the prompt cache.
    assert (first["input_tokens"], first["output_tokens"]) == (1000, 200)
    assert first["cost"] == pytest.approx((1000 * 2.0 + 200 * 10.0) / 1e6)  # $0.0040
    assert cheap["cost"] == pytest.approx(
        (cheap["input_tokens"] * 0.8 + cheap["output_tokens"] * 4.0) / 1e6)
    assert other["cost"] is None  # no price for it
    code, out, err = run_cli(["judges", "eval", str(recipe), *MODELS, "--max-error-rate", "0.2",
                              "--no-cache"], capsys)
    assert code == 0, err
    table = {line.split()[0]: line.split() for line in out.splitlines()
             if line.strip().startswith(("openai/", "anthropic/"))}
    # A small run's costs differ in the fourth decimal: both must show (not "$0.00" twice).
    assert table["openai/gpt-ref"][-2] == "$0.0040"
    assert table["anthropic/claude-cheap"][-2] == f"${cheap['cost']:.4f}" != "$0.0040"
    assert table["openai/other-cheap"][-2] == "—"


def _priced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('["gpt-ref"]\ninput = 2.0\ncached_input = 0.5\noutput = 10.0\n'
                      '["claude-cheap"]\ninput = 0.8\ncached_input = 0.08\noutput = 4.0\n',
                      encoding="utf-8")
    monkeypatch.setenv("INTROSPECTION_PRICES", str(prices))


def _models_of(out: str) -> list[dict[str, Any]]:
    models: list[dict[str, Any]] = json.loads(out)["judges"][0]["model_comparison"]["models"]
    return models


def test_a_warm_cache_costs_what_the_rows_need_and_spends_nothing(
        scripted: StubModelServer, recipe: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The audit's case: on a warm cache every model showed 0/0 tokens and $0.0000, so models
    could not be compared by cost. cost is the price of the tokens the rows need, from the
    cache or not; spent is what this run paid."""
    _priced(tmp_path, monkeypatch)
    args = ["judges", "eval", str(recipe), "--format", "json", *MODELS, "--max-error-rate", "0.2"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    cold = _models_of(out)
    # The stub reports 100 input and 20 output tokens a call: 10 calls for the first model.
    assert (cold[0]["input_tokens"], cold[0]["output_tokens"]) == (1000, 200)
    assert cold[0]["cost"] == cold[0]["spent"] == pytest.approx((1000 * 2.0 + 200 * 10.0) / 1e6)
    assert cold[2]["cost"] is None and cold[2]["spent"] is None  # no price for other-cheap
    assert all(model["unknown_token_rows"] == 0 for model in cold)

    scripted.requests.clear()
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert [r.body["model"] for r in scripted.requests] == ["claude-cheap"]  # its error row
    warm = _models_of(out)
    first = warm[0]
    assert (first["input_tokens"], first["output_tokens"]) == (1000, 200)  # not 0/0
    assert first["cost"] == pytest.approx(cold[0]["cost"])
    assert first["spent"] == 0.0
    # claude-cheap: its error row was asked again (100 + 20 tokens spent), the rest cached.
    assert warm[1]["spent"] == pytest.approx((100 * 0.8 + 20 * 4.0) / 1e6)
    assert warm[1]["cost"] == pytest.approx(cold[1]["cost"])

    code, out, err = run_cli(args[:3] + args[5:], capsys)  # the text report
    assert code == 0, err
    assert "cost: their price; spent: what this run paid" in out
    line, = (text for text in out.splitlines() if text.strip().startswith("openai/gpt-ref"))
    assert "1000/200" in line and "$0.0040" in line and "$0.0000" in line


def test_rows_cached_before_tokens_were_kept_say_unknown_not_zero(
        scripted: StubModelServer, recipe: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    _priced(tmp_path, monkeypatch)
    args = ["judges", "eval", str(recipe), "--format", "json", *MODELS, "--max-error-rate", "0.2"]
    assert run_cli(args, capsys)[0] == 0
    # What a cache written by an earlier introspection holds: verdicts without token counts.
    with sqlite3.connect(tmp_path / "cache" / "verdicts.sqlite3") as db:
        db.execute("UPDATE verdicts SET input_tokens = NULL, output_tokens = NULL, "
                   "cached_input_tokens = NULL, cache_write_tokens = NULL")
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    first = _models_of(out)[0]
    assert first["unknown_token_rows"] == 10
    assert (first["input_tokens"], first["output_tokens"], first["cost"]) == (None, None, None)
    assert first["spent"] == 0.0
    code, out, err = run_cli(args[:3] + args[5:], capsys)
    line, = (text for text in out.splitlines() if text.strip().startswith("openai/gpt-ref"))
    assert line.split()[-4:-1] == ["unknown", "unknown", "$0.0000"]
    assert "0/0" not in line
