"""The JSON report (version 3), its published schema, and its provenance."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.errors import UsageError
from introspection_cli.evaluation.outcomes import (
    OUTCOMES,
    VERDICTS,
    EvalRun,
    JudgeRun,
    RejectedRow,
    RowOutcome,
    Tokens,
    Usage,
)
from introspection_cli.formats import Format
from introspection_cli.provenance import GitState
from introspection_cli.reporting.assemble import build_report
from introspection_cli.reporting.gates import GateSettings, evaluate_gates
from introspection_cli.reporting.metrics import REPORT_SPLITS
from introspection_cli.reporting.model import (
    Provenance,
    load_report_schema,
    report_json,
    write_report,
)
from introspection_cli.reporting.registry import ReportKind, check_format, render

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "eval-report.schema.json"


def sample_run() -> EvalRun:
    rows = (
        RowOutcome(1, "conv_a1", "dev", "pass", "fail", ("fail",), False,
                   "The agent never opened the refund.", None, False),
        RowOutcome(2, "conv_a2", "dev", "pass", "pass", ("pass",), reasoning="Refund opened."),
        RowOutcome(4, "conv_a4", None, "not_applicable", "gated"),
        RowOutcome(5, "conv_a5", "test", "fail", "error", ("error",),
                   error="provider failed after 2 retries: HTTP 503", cached=False),
        RowOutcome(6, "conv_a6", "test", "fail", "fail", ("fail", "fail", "pass"), True,
                   "No refund.", None, True),
    )
    judge = JudgeRun("billing-request-handling", "openai", "gpt-5.6-luna", rows,
                     (RejectedRow(3, "fixture-hash-mismatch", "snapshot_hash does not match"),),
                     fingerprint=FINGERPRINT)
    return EvalRun("path/to/recipe", (judge,), Usage(4, 1, 5120, 900))


FINGERPRINT = "sha256:" + "ab" * 32


def validate(report: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(load_report_schema()).validate(report)


# --- build_report -----------------------------------------------------------------------

def test_report_has_exactly_the_spec_shape() -> None:
    report = build_report(sample_run(), Provenance("9.9.9", "2026-11-20T10:04:11Z",
                                                   GitState("a" * 40, dirty=True)))
    assert list(report) == ["report_version", "tool_version", "created_at", "git", "recipe",
                            "samples", "judges", "gates", "usage"]
    assert report["samples"] == 1
    assert report["report_version"] == 3
    assert (report["tool_version"], report["created_at"]) == ("9.9.9", "2026-11-20T10:04:11Z")
    assert report["git"] == {"commit": "a" * 40, "dirty": True}
    assert report["gates"] == []
    assert report["recipe"] == "path/to/recipe"
    assert report["usage"] == {"requests": 4, "batch_requests": 0, "cached": 1,
                               "input_tokens": 5120, "output_tokens": 900,
                               "cached_input_tokens": 0,
                               "cache_write_tokens": 0, "rate_limited": 0,
                               "concurrency": None, "cost": None}
    (judge,) = report["judges"]
    assert list(judge) == ["name", "provider", "model", "fingerprint", "rejected", "splits",
                           "rows"]
    assert judge["fingerprint"] == FINGERPRINT
    assert judge["rejected"] == [{"line": 3, "code": "fixture-hash-mismatch",
                                  "message": "snapshot_hash does not match"}]
    assert list(judge["splits"]) == ["train", "dev", "test", "unsplit", "scored", "all"]
    # "all" is the name reports before version 3 gave "scored": the same statistics.
    assert judge["splits"]["all"] == judge["splits"]["scored"]
    assert judge["rows"][0] == {
        "line": 1, "conversation_id": "conv_a1", "split": "dev", "expected": "pass",
        "outcome": "fail", "samples": ["fail"], "unstable": False,
        "reasoning": "The agent never opened the refund.", "error": None, "cached": False}
    assert judge["rows"][2]["split"] is None and judge["rows"][2]["samples"] == []


def test_report_statistics_per_split() -> None:
    splits = build_report(sample_run())["judges"][0]["splits"]
    assert list(splits["scored"]) == ["n", "judged", "gated", "errors", "unstable",
                                      "agreement", "na_agreement", "kappa", "tpr", "tnr",
                                      "confusion", "precision"]
    # scored: 5 rows = 3 judged + 1 gated + 1 error. Applicable agreement: of the 3 non-error
    # rows labelled pass or fail, a2 and a6 agree; na_agreement: a4 (gated) of 1.
    assert {k: splits["scored"][k] for k in ("n", "judged", "gated", "errors", "unstable")} == {
        "n": 5, "judged": 3, "gated": 1, "errors": 1, "unstable": 1}
    assert splits["scored"]["agreement"]["value"] == pytest.approx(2 / 3)
    assert splits["scored"]["na_agreement"]["value"] == 1.0
    # The train split has no rows: present, n 0, null statistics (never 0).
    assert splits["train"]["n"] == 0
    assert [splits["train"][k] for k in ("agreement", "na_agreement", "kappa", "tpr",
                                         "tnr")] == [None] * 5
    assert splits["unsplit"]["n"] == 1 and splits["unsplit"]["gated"] == 1
    # test: the error row is not scored, so TNR is 1/1 rather than 1/2.
    assert splits["test"]["tnr"]["value"] == 1.0
    assert splits["test"]["tpr"] is None
    assert set(splits["test"]["confusion"]) == set(VERDICTS)


def test_report_is_plain_json_that_round_trips(tmp_path: Path) -> None:
    report = build_report(sample_run())
    assert json.loads(report_json(report)) == report
    target = tmp_path / "report.json"
    write_report(target, report)
    assert json.loads(target.read_text(encoding="utf-8")) == report


def test_json_keeps_non_ascii_readable() -> None:
    run = sample_run()
    row = RowOutcome(9, "conv_ü", "dev", "pass", "pass", ("pass",), reasoning="€49.50 refunded")
    judge = JudgeRun("j", "anthropic", "claude", (row,))
    text = report_json(build_report(EvalRun(run.recipe, (judge,))))
    assert "€49.50" in text and "conv_ü" in text


# --- the schema -------------------------------------------------------------------------

def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert load_report_schema() == schema


def test_schema_validates_real_report_with_check_jsonschema(tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    write_report(report_path, build_report(sample_run()))
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--schemafile", str(SCHEMA_PATH),
         str(report_path)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


row_outcomes = st.builds(
    RowOutcome,
    line=st.integers(min_value=1, max_value=10_000),
    conversation_id=st.text(min_size=1, max_size=20),
    split=st.sampled_from(("train", "dev", "test", None)),
    expected=st.sampled_from(VERDICTS),
    outcome=st.sampled_from(OUTCOMES),
    samples=st.lists(st.sampled_from(("pass", "fail", "not_applicable", "error")),
                     max_size=5).map(tuple),
    unstable=st.booleans(),
    reasoning=st.none() | st.text(max_size=50),
    error=st.none() | st.text(max_size=50),
    cached=st.booleans(),
    # Named, as a named tuple's defaulted fields are drawn from their types otherwise.
    snapshot_hash=st.none() | st.from_regex(r"\Asha256:[0-9a-f]{64}\Z"),
    tokens=st.none() | st.builds(Tokens, *[st.integers(0, 10**6)] * 4),
)


@given(st.lists(row_outcomes, max_size=40), st.sampled_from(("openai", "anthropic")),
       st.none() | st.integers(min_value=0, max_value=50),
       st.builds(GateSettings, min_agreement=st.none() | st.floats(0, 1),
                 min_tpr=st.none() | st.floats(0, 1), min_tnr=st.none() | st.floats(0, 1),
                 min_kappa=st.none() | st.floats(-1, 1), max_error_rate=st.floats(0, 1),
                 split=st.sampled_from((*REPORT_SPLITS, "all"))))
def test_schema_accepts_every_built_report(rows: list[RowOutcome], provider: str,
                                           held_out: int | None, gates: GateSettings) -> None:
    if held_out is not None:  # a held-out test split has no test rows in the run
        rows = [row for row in rows if row.split != "test"]
    run = EvalRun("r", (JudgeRun("some-judge", provider, "m", tuple(rows),
                                 fingerprint=FINGERPRINT, held_out=held_out),),
                  Usage(len(rows), 0, 10, 2))
    report = build_report(run)
    report["gates"] = [gate.as_json() for gate in evaluate_gates(report, gates)]
    validate(report)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(report: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = report
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        target[int(last) if last.isdigit() else last] = value
    mutate.__name__ = f"{path}={value!r}"
    return mutate


def _delete(path: str) -> Callable[[dict[str, Any]], None]:
    def mutate(report: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = report
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        del target[last]
    mutate.__name__ = f"del {path}"
    return mutate


@pytest.mark.parametrize("mutate", [
    _set("report_version", 1),
    _set("git", {"commit": "HEAD", "dirty": False}),
    _delete("created_at"),
    _set("judges.0.fingerprint", None),
    _set("judges.0.fingerprint", "sha256:abc"),
    _delete("judges.0.splits.dev.precision"),
    _set("judges.0.splits.dev.precision.pass", 0),
    _set("judges.0.splits.dev.held_out", True),  # only the test split may be held out
    _set("judges.0.splits.test", {"held_out": False, "n": 3}),
    _set("gates", [{"judge": "j", "split": "all", "statistic": "tpr", "bound": "high",
                    "bar": 0.8, "value": 0.9, "met": True}]),
    _set("extra", True),
    _set("usage.requests", -1),
    _delete("usage.cached"),
    _delete("judges.0.splits.unsplit"),
    _delete("judges.0.splits.scored"),
    _delete("judges.0.splits.dev.na_agreement"),
    _set("judges.0.splits.dev.na_agreement", 0),
    _set("judges.0.splits.train.agreement", 0),  # an empty denominator is null, never 0
    _set("judges.0.splits.all.agreement.value", 1.5),
    _set("judges.0.splits.all.agreement.extra", 0.1),
    _set("judges.0.splits.all.kappa", "0.5"),
    _set("judges.0.splits.all.kappa", -1.5),
    _set("judges.0.splits.all.n", 2.5),
    _delete("judges.0.splits.all.confusion.not_applicable"),
    _delete("judges.0.splits.all.confusion.pass.gated"),
    _set("judges.0.splits.all.confusion.pass.maybe", 1),
    _set("judges.0.rows.0.outcome", "maybe"),
    _set("judges.0.rows.0.expected", "gated"),
    _set("judges.0.rows.0.split", "validation"),
    _set("judges.0.rows.0.samples", ["gated"]),
    _set("judges.0.rows.0.line", 0),
    _delete("judges.0.rows.0.cached"),
    _set("judges.0.rows.0.note", "x"),
    _set("judges.0.provider", "gemini"),
    _set("judges.0.name", "Not Kebab"),
    _delete("judges.0.rejected"),
    _set("judges.0.rejected.0.line", None),
], ids=lambda mutate: mutate.__name__)
def test_schema_rejects_mutated_report(mutate: Callable[[dict[str, Any]], None]) -> None:
    report = build_report(sample_run())
    validate(report)  # the unmutated report is valid, so the failure is the mutation's
    broken = copy.deepcopy(report)
    mutate(broken)
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)


# --- rendering dispatch -----------------------------------------------------------------

def test_render_report_json_is_the_report() -> None:
    report = build_report(sample_run())
    assert json.loads(render(ReportKind.EVAL, Format.JSON, report)) == report


def test_the_eval_format_is_checked_against_the_formats_it_prints() -> None:
    with pytest.raises(UsageError, match=r"unknown format 'yaml'; use one of: text, json, "
                                         r"markdown$"):
        check_format(ReportKind.EVAL, "yaml")
    with pytest.raises(UsageError, match="use one of: text, json, markdown"):
        check_format(ReportKind.EVAL, "junit")  # a file's format, never stdout's


def test_needed_tokens_sum_the_known_rows_and_count_the_unknown_ones() -> None:
    from introspection_cli.evaluation.outcomes import Tokens, total_tokens
    from introspection_cli.reporting.assemble import needed_tokens

    rows = [RowOutcome(1, "a", "dev", "pass", "pass", tokens=Tokens(100, 20, 64, 0)),
            RowOutcome(2, "b", "dev", "pass", "pass", tokens=None),  # cached, not recorded
            RowOutcome(3, "c", "dev", "not_applicable", "gated"),  # no call: no tokens
            RowOutcome(4, "d", "dev", "fail", "fail", tokens=Tokens(90, 10, 0, 5))]
    assert needed_tokens(rows).as_json() == {"input_tokens": 190, "output_tokens": 30,
                                             "cached_input_tokens": 64,
                                             "cache_write_tokens": 5, "unknown_rows": 1}
    assert total_tokens([Tokens(1, 2), None]) is None
    assert total_tokens([]) == Tokens(0, 0)
