"""``introspection judges align`` as users run it: real subprocesses, the real openai and
anthropic SDKs, a stub whose verdicts follow the rubric's words and whose edits are scripted."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from introspection_cli.resources import load_schema
from tests.alignment.conftest import (
    COLLAPSE,
    FLIPS,
    HARMFUL,
    HELPFUL,
    JUDGE_YAML,
    START_RUBRIC,
    StubFactory,
    row_text,
    write_align_recipe,
)
from tests.conftest import run_cli
from tests.evaluation.conftest import SENTINEL_KEY
from tests.evaluation.stub_model_server import StubModelServer

PROVIDERS = ("openai", "anthropic")


def cli(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """``run_cli`` with this test's cache and config directories (it drops the
    ``INTROSPECTION_*`` variables of the test process)."""
    own = {name: os.environ[name] for name in ("INTROSPECTION_CACHE_DIR",
                                               "INTROSPECTION_CONFIG_DIR")}
    return run_cli(args, env={**own, **env})


def align(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return cli(["judges", "align", str(root), "--judge", "support", "--max-retries", "0",
                "--timeout", "10", *args], **env)


def align_json(root: Path, *args: str, **env: str
               ) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    result = align(root, "--format", "json", *args, **env)
    assert result.stdout, result.stderr
    return json.loads(result.stdout), result


def judge_requests(stub: StubModelServer) -> list[str]:
    return [request.user_text for request in stub.requests
            if request.tool_name == "submit_verdict"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_helpful_edit_is_kept_and_lifts_dev_agreement(
        tmp_path: Path, rubric_stub: StubFactory, provider: str) -> None:
    root = write_align_recipe(tmp_path / "r", provider=provider)
    stub = rubric_stub([HELPFUL])
    report, result = align_json(root, "--rounds", "1", "--no-cost-limit")
    assert result.returncode == 0, result.stderr
    (only,) = report["rounds"]
    jsonschema.validate(report, load_schema("align-report"))
    assert only["kept"] and only["refused_by"] == []
    assert only["dev"]["gained"] == 4 and only["dev"]["lost"] == 0
    assert report["start"]["dev"]["applicable_agreement"]["value"] == pytest.approx(20 / 24)
    assert report["final"]["dev"]["applicable_agreement"]["value"] == 1.0
    assert report["instructions"]["after"] == HELPFUL
    assert "+  Return pass when the agent resolves an invoice, billing, account or refund" \
        in report["file_diff"]
    assert report["next_step"].endswith("introspection judges certify --judge support")
    assert report["written"] is False
    assert SENTINEL_KEY not in result.stdout + result.stderr
    optimizer = [r for r in stub.requests if r.tool_name == "propose_edit"]
    assert len(optimizer) == 1
    prompt = optimizer[0].user_text
    assert START_RUBRIC.strip() in prompt and "Change one thing" in prompt
    # The train disagreements shown: the two refund rows, labelled pass, judged fail.
    assert prompt.count("labelled pass, the judge answered fail") == 2
    assert row_text("train", "refund", 0) in prompt
    assert "dev-" not in prompt and "test-" not in prompt


@pytest.mark.parametrize(("edit", "rule"), [
    (HARMFUL, "gained-over-lost"),
    (COLLAPSE, "tnr-holds"),
    (FLIPS, "untargeted-flips"),
])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_edit_breaking_a_keep_rule_is_refused_for_that_rule(
        tmp_path: Path, rubric_stub: StubFactory, provider: str, edit: str, rule: str) -> None:
    root = write_align_recipe(tmp_path / "r", provider=provider)
    rubric_stub([edit])
    report, result = align_json(root, "--rounds", "1", "--no-cost-limit")
    assert result.returncode == 0, result.stderr
    (only,) = report["rounds"]
    jsonschema.validate(report, load_schema("align-report"))
    assert not only["kept"] and only["evaluated"]
    assert only["refused_by"][0] == rule
    if edit is not HARMFUL:  # the class collapse and the flips break exactly one rule
        assert only["refused_by"] == [rule]
    assert report["instructions"]["changed"] is False and report["file_diff"] == ""


def test_the_rules_fire_as_the_text_report_says(tmp_path: Path,
                                                rubric_stub: StubFactory) -> None:
    root = write_align_recipe(tmp_path / "r")
    rubric_stub([COLLAPSE])
    result = align(root, "--rounds", "1", "--no-cost-limit")
    assert result.returncode == 0, result.stderr
    assert "round 1: not kept" in result.stdout
    assert "TNR 2/2 -> 0/2" in result.stdout
    assert "- tnr-holds: TNR 2/2 -> 0/2 rows labelled fail" in result.stdout
    assert "mid-p McNemar p = " in result.stdout and "95% CI" in result.stdout
    assert "No candidate was kept" in result.stdout


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_edit_quoting_a_dev_row_is_refused_before_evaluation(
        tmp_path: Path, rubric_stub: StubFactory, provider: str) -> None:
    root = write_align_recipe(tmp_path / "r", provider=provider)
    quoted = row_text("dev", "refund", 2)[len("TOPIC:refund "):]
    # Spacing and case changed: the quote is still found.
    leaking = HELPFUL + "For example: " + "  ".join(quoted.upper().split()) + "\n"
    stub = rubric_stub([leaking])
    report, result = align_json(root, "--rounds", "1", "--no-cost-limit")
    assert result.returncode == 0, result.stderr
    (only,) = report["rounds"]
    jsonschema.validate(report, load_schema("align-report"))
    assert only["refused_by"] == ["no-quote"] and not only["evaluated"]
    assert "the conversation dev-refund-" in only["note"]
    # The candidate was never sent to the judge.
    assert not any("For example" in text for text in judge_requests(stub))


def test_a_run_never_sends_a_test_row_and_leaves_the_exposure_record_alone(
        tmp_path: Path, rubric_stub: StubFactory) -> None:
    root = write_align_recipe(tmp_path / "r")
    stub = rubric_stub([HARMFUL, HELPFUL])
    cache = tmp_path / "cache"
    # Test rows seen once by eval: the exposure record (judges/support.exposure.jsonl)
    # exists, and whatever eval keeps beside the verdict cache.
    seen = cli(["judges", "eval", str(root), "--split", "test"])
    assert seen.returncode in (0, 1), seen.stderr
    before = {path.name: path.read_bytes() for path in sorted(cache.glob("evaluations.sqlite3*"))}
    judges_before = {path.name: path.read_bytes() for path in (root / "judges").iterdir()}
    assert "support.exposure.jsonl" in judges_before
    stub.requests.clear()
    result = align(root, "--rounds", "2", "--no-cost-limit")
    assert result.returncode == 0, result.stderr
    sent = [request.user_text for request in stub.requests]
    assert sent and not any("HELD-OUT" in text or "test-" in text for text in sent)
    assert {path.name: path.read_bytes() for path in sorted(cache.glob(
        "evaluations.sqlite3*"))} == before
    assert {path.name: path.read_bytes()
            for path in (root / "judges").iterdir()} == judges_before
    assert "round 1: not kept" in result.stdout and "round 2: kept" in result.stdout


def test_a_refused_edit_is_shown_to_the_optimizer_next_round(
        tmp_path: Path, rubric_stub: StubFactory) -> None:
    root = write_align_recipe(tmp_path / "r")
    stub = rubric_stub([COLLAPSE, HELPFUL])
    report, result = align_json(root, "--rounds", "3", "--no-cost-limit")
    assert result.returncode == 0, result.stderr
    assert report["kept_rounds"] == [2]
    # After round 2 no train disagreement is left: round 3 is not asked for.
    assert len(report["rounds"]) == 2
    assert report["stopped"] == "no train disagreement is left to learn from"
    second = [r for r in stub.requests if r.tool_name == "propose_edit"][1].user_text
    assert "not kept: tnr-holds" in second


def test_write_changes_only_the_instructions_and_check_passes(
        tmp_path: Path, rubric_stub: StubFactory) -> None:
    crlf = ("# The support judge\r\nname: support\r\ndescription: Did the agent resolve it\r\n"
            "llm:\r\n  provider: {provider}\r\n  model: stub-model   # the judge's model\r\n"
            "instructions: >  # folded\r\n    Return pass when the agent resolves an invoice,\r\n"
            "    billing or account request.\r\n\r\n    Return fail otherwise, and "
            "not_applicable when there is no request.\r\n\r\n# end of file\r\n")
    root = write_align_recipe(tmp_path / "r", judge_yaml=crlf)
    path = root / "judges" / "support.yaml"
    path.chmod(0o640)
    original = path.read_bytes()
    start = original.decode().replace("\r\n", "\n")
    assert "invoice,\n    billing" in start
    rubric = ("Return pass when the agent resolves an invoice, billing, account or refund "
              "request.\nReturn fail otherwise, and not_applicable when there is no request.\n")
    rubric_stub([rubric])
    report, result = align_json(root, "--rounds", "1", "--no-cost-limit", "--write")
    assert result.returncode == 0, result.stderr
    assert report["written"] is True
    new = path.read_bytes()
    head = original[:original.index(b">  # folded")]
    tail = original[original.index(b"\r\n\r\n# end of file"):]
    assert new.startswith(head + b"|  # folded\r\n") and new.endswith(tail)
    assert b"\n" not in new.replace(b"\r\n", b"")
    assert path.stat().st_mode & 0o777 == 0o640
    check = cli(["check", str(root), "--format", "json"])
    assert check.returncode == 0, check.stdout
    summary = json.loads(check.stdout)["summary"]
    assert (summary["errors"], summary["warnings"]) == (0, 0)
    evaluated = cli(["judges", "eval", str(root), "--split", "dev", "--format", "json"])
    assert json.loads(evaluated.stdout)["judges"][0]["splits"]["dev"]["agreement"]["value"] == 1


def test_dry_run_calls_nothing_and_says_what_it_would_cost(
        tmp_path: Path, rubric_stub: StubFactory) -> None:
    root = write_align_recipe(tmp_path / "r")
    stub = rubric_stub([HELPFUL])
    prices = tmp_path / "prices.toml"
    prices.write_text('["stub-model"]\ninput = 1.0\ncached_input = 0.1\noutput = 10.0\n')
    result = align(root, "--dry-run", "--format", "json", INTROSPECTION_PRICES=str(prices))
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert stub.requests == []
    estimates = body["estimates"]
    assert estimates["start"]["requests"] == 29  # 5 train + 24 dev rows, nothing cached
    assert estimates["candidate_evaluation"]["requests"] == 29
    assert estimates["optimizer_call"]["requests"] == 1
    assert estimates["at_most"]["requests"] == 29 + 5 * 30
    assert estimates["at_most"]["cost"] > estimates["start"]["cost"] > 0


def test_max_cost_needs_prices_and_stops_before_passing_the_limit(
        tmp_path: Path, rubric_stub: StubFactory) -> None:
    root = write_align_recipe(tmp_path / "r")
    stub = rubric_stub([HARMFUL, HARMFUL, HARMFUL])
    refused = align(root, "--max-cost", "1")
    assert refused.returncode == 2 and "needs a price for openai/stub-model" in refused.stderr
    neither = align(root)
    assert neither.returncode == 2 and "--max-cost USD" in neither.stderr
    assert stub.requests == []
    prices = tmp_path / "prices.toml"
    # $10 per million input tokens: a 29-row evaluation is ~$0.03 estimated.
    prices.write_text('["stub-model"]\ninput = 10.0\ncached_input = 1.0\noutput = 10.0\n')
    too_low = align(root, "--max-cost", "0.001", INTROSPECTION_PRICES=str(prices))
    assert too_low.returncode == 1 and "does not cover" in too_low.stderr
    assert stub.requests == []
    dry = json.loads(align(root, "--dry-run", "--format", "json",
                           INTROSPECTION_PRICES=str(prices)).stdout)["estimates"]
    per_round = dry["optimizer_call"]["cost"] + dry["candidate_evaluation"]["cost"]
    # The stub answers every call with 100 input and 20 output tokens: $0.0012 a call.
    evaluation = 29 * 0.0012
    # Enough for the first evaluation only: no round can run, which is exit 1.
    # (Its own cache: the run below must pay for its first evaluation.)
    no_round = align(root, "--max-cost", f"{dry['start']['cost'] + 0.001:.6f}",
                     INTROSPECTION_PRICES=str(prices),
                     INTROSPECTION_CACHE_DIR=str(tmp_path / "other-cache"))
    assert no_round.returncode == 1 and "stopped before round 1" in no_round.stderr
    assert not any(r.tool_name == "propose_edit" for r in stub.requests)
    # Enough for the first evaluation and one round, not for a second round.
    limit = evaluation + per_round + 0.01
    assert limit < 2 * evaluation + 0.0012 + per_round
    report, limited = align_json(root, "--max-cost", f"{limit:.6f}", "--rounds", "3",
                                 INTROSPECTION_PRICES=str(prices))
    assert limited.returncode == 0, limited.stderr
    assert len(report["rounds"]) == 1
    assert report["stopped"].startswith("stopped before round 2")
    assert report["usage"]["cost"] == pytest.approx(2 * evaluation + 0.0012)
    assert report["usage"]["cost"] <= limit


def test_data_problems_exit_1_before_any_call(tmp_path: Path,
                                              rubric_stub: StubFactory) -> None:
    stub = rubric_stub([HELPFUL])
    no_dev = write_align_recipe(tmp_path / "a", rows=(("train", "refund", 2, "pass"),))
    result = align(no_dev, "--no-cost-limit")
    assert result.returncode == 1 and "no labelled dev rows" in result.stderr
    broken = write_align_recipe(tmp_path / "b")
    calibration = broken / "judges" / "support.calibration.jsonl"
    calibration.write_text(calibration.read_text() + "{not json\n")
    result = align(broken, "--no-cost-limit")
    assert result.returncode == 1 and "fixture-json" in result.stderr
    assert stub.requests == []
    agreeing = write_align_recipe(tmp_path / "c", rows=(("train", "invoice", 2, "pass"),
                                                        ("dev", "refund", 1, "pass")))
    result = align(agreeing, "--no-cost-limit")
    assert result.returncode == 1 and "no train disagreement to learn from" in result.stderr
    assert not any(r.tool_name == "propose_edit" for r in stub.requests)


def test_an_optimizer_that_fails_exits_3_with_the_rounds_so_far(
        tmp_path: Path, rubric_stub: StubFactory) -> None:
    from tests.evaluation.stub_model_server import error_reply

    root = write_align_recipe(tmp_path / "r")
    rubric_stub([HARMFUL, error_reply("openai", 500, "broken")])
    report, result = align_json(root, "--rounds", "3", "--no-cost-limit")
    assert result.returncode == 3
    assert len(report["rounds"]) == 1 and "optimizer call failed" in result.stderr


def test_a_candidate_whose_evaluation_fails_is_recorded_and_the_run_exits_3(
        tmp_path: Path, rubric_stub: StubFactory) -> None:
    from tests.evaluation.stub_model_server import BROKEN_RUBRIC

    root = write_align_recipe(tmp_path / "r")
    rubric_stub([HELPFUL + BROKEN_RUBRIC + "\n", HELPFUL])
    report, result = align_json(root, "--rounds", "2", "--no-cost-limit", "--write")
    assert result.returncode == 3
    (only,) = report["rounds"]
    assert not only["evaluated"] and only["note"].startswith("not evaluated: ")
    assert "failed at the model provider" in result.stderr
    assert report["written"] is False
    assert (root / "judges" / "support.yaml").read_text().count("refund") == 0


def test_each_slow_step_is_told_to_the_progress_callback(tmp_path: Path,
                                                         rubric_stub: StubFactory) -> None:
    from introspection_cli.evaluation.runner import EvalOptions
    from introspection_cli.workflows.align import AlignSettings, align_judge

    root = write_align_recipe(tmp_path / "r")
    rubric_stub([HELPFUL])
    steps: list[str] = []
    result = align_judge(root, EvalOptions(max_retries=0, timeout=10),
                         AlignSettings(judge="support", rounds=1, no_cost_limit=True),
                         progress=steps.append)
    assert result.exit_code == 0, result.problems
    assert steps == ["evaluating the current rubric on train and dev",
                     "round 1: asking openai/stub-model for an edit",
                     "evaluating a candidate on train and dev"]


def test_the_closing_lines_say_what_was_written_and_the_next_step() -> None:
    from introspection_cli.workflows.align import _footer

    assert _footer("j", changed=True, written=False, write=True, note=None)[0].startswith(
        "Nothing was written: the run did not finish")
    assert _footer("j", changed=True, written=True, write=True, note=None)[0].startswith(
        "The kept rubric was written")
    assert "(it has a tag)" in _footer("j", changed=True, written=False, write=False,
                                       note="it has a tag")[0]
    assert _footer("j", changed=False, written=False, write=True, note=None) == [
        "No candidate was kept: the judge file is unchanged.",
        "Next step: certify on the held-out test rows: introspection judges certify --judge j"]


_FRUIT_RUBRIC = ("Return pass when the agent resolves a request about {}.\n"
                 "Return fail otherwise, and not_applicable when there is no request.\n")
_FRUIT = ("apples", "bananas", "cherries", "dates", "elder", "figs", "grapes", "hops", "kiwis")


def _fruit_rubric(words: tuple[str, ...]) -> str:
    return _FRUIT_RUBRIC.format(", ".join(words) if words else "nothing named here yet")


def test_a_class_is_not_collapsed_one_row_a_round(tmp_path: Path,
                                                   rubric_stub: StubFactory) -> None:
    # Dev: three pass rows whose topics the rubric names (apples, bananas, cherries), six
    # fail rows it wrongly passes (dates ... kiwis) and ten fail rows it rightly fails
    # (spam). Each scripted edit drops one pass topic and two wrongly passed fail topics:
    # gained 2, lost 1, applicable agreement up, TPR down by exactly one row, 1 flip among
    # at least 13 untargeted rows. Per round every edit passes the class rules; against the
    # rubric the run started from, the second edit has lost two pass rows.
    rows = (("train", "omega", 1, "pass"),
            ("dev", "apples", 1, "pass"), ("dev", "bananas", 1, "pass"),
            ("dev", "cherries", 1, "pass"),
            *(("dev", word, 1, "fail") for word in _FRUIT[3:]), ("dev", "spam", 10, "fail"))
    start = _fruit_rubric(_FRUIT)
    judge_yaml = JUDGE_YAML.replace(
        "  Return pass when the agent resolves an invoice, billing or account request.\n"
        "  Return fail otherwise, and not_applicable when there is no request.\n",
        "".join(f"  {line}\n" for line in start.splitlines()))
    root = write_align_recipe(tmp_path / "r", rows=rows, judge_yaml=judge_yaml)
    edits = [_fruit_rubric(tuple(w for w in _FRUIT if w not in dropped)) for dropped in (
        {"apples", "dates", "elder"},
        {"apples", "dates", "elder", "bananas", "figs", "grapes"},
        set(_FRUIT))]
    rubric_stub(edits)
    report, result = align_json(root, "--rounds", "3", "--no-cost-limit")
    assert result.returncode == 0, result.stderr
    rounds = report["rounds"]
    assert [round_["kept"] for round_ in rounds] == [True, False, False]
    # Round 2 holds against round 1's rubric (TPR 2/3 -> 1/3) but not against the start.
    second = rounds[1]
    assert second["dev"]["tpr"] | {"before": 2, "after": 1, "rows": 3} == second["dev"]["tpr"]
    assert second["refused_by"] == ["tpr-holds-since-start"]
    [refusal] = [c for c in second["checks"] if c["rule"] == "tpr-holds-since-start"]
    assert "TPR 3/3 -> 1/3 rows labelled pass since the start of the run" in refusal["detail"]
    # Once round 1 is kept, every later round is held to the start as well.
    assert "tpr-holds-since-start" not in [c["rule"] for c in rounds[0]["checks"]]
    assert "tnr-holds-since-start" in [c["rule"] for c in rounds[2]["checks"]]
    # The run as a whole loses one pass row at most (it lost all three: 3/3 -> 0/3).
    pass_rows = rounds[0]["dev"]["tpr"]["rows"]
    assert round(report["final"]["dev"]["tpr"]["value"] * pass_rows) >= \
        round(report["start"]["dev"]["tpr"]["value"] * pass_rows) - 1
