"""The human ceiling in the eval report: with an annotations file, each judge's entry holds
``raters`` (alpha with its interval, each pair's applicable agreement and kappa, the
conflicts), shown beside the judge's own agreement in text, Markdown and HTML; without
one, the report is as before. The real CLI against the stub model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from introspection_cli.annotations.record import Annotation
from introspection_cli.reporting.model import load_report_schema
from introspection_cli.workflows.agree import agree
from tests.evaluation.conftest import UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer
from tests.evaluation.test_report_cli import run_cli

LABELS = {"Ana": "ppffpn", "Ben": "pffppn", "Chen": "pp-fpn"}
_WORDS = {"p": "pass", "f": "fail", "n": "not_applicable"}


def _recipe(root: Path, *, annotated: bool = True) -> Path:
    rows = [fixture_row(f"c{i}", f"Question {i} VERDICT:{'pass' if i % 2 else 'fail'}",
                        expected=_WORDS[LABELS["Ana"][i]], split="dev") for i in range(6)]
    recipe = write_recipe(root, {"helpful": (UNGATED_JUDGE, rows)})
    if annotated:
        lines = [Annotation(row["source"]["conversation_id"], row["snapshot_hash"], rater,
                            _WORDS[labels[i]], "<b>why</b>" if i == 0 else None,
                            "2026-11-21T09:30:00Z").line()
                 for rater, labels in LABELS.items() for i, row in enumerate(rows)
                 if labels[i] != "-"]
        (recipe / "judges" / "helpful.annotations.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return recipe


def test_the_report_shows_the_raters_beside_the_judge(stub: StubModelServer, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    recipe = _recipe(tmp_path / "r")
    html = tmp_path / "report.html"
    code, out, err = run_cli(["judges", "eval", str(recipe), "--format", "json", "--html",
                              str(html)], capsys)
    assert code in (0, 1), err
    report: dict[str, Any] = json.loads(out)
    assert report["report_version"] == 3
    jsonschema.Draft202012Validator(load_report_schema()).validate(report)
    raters = report["judges"][0]["raters"]
    _, figures = agree(recipe, "helpful", "json")  # judges agree's own figures
    assert raters["raters"] == ["Ana", "Ben", "Chen"] and raters["units"] == 6
    assert raters["alpha"] == {key: figures["alpha"][key]
                               for key in ("value", "low", "high", "draws")}
    assert [p["applicable_agreement"] for p in raters["pairs"]] == [
        p["applicable_agreement"] for p in figures["pairs"]]
    assert raters["conflicts"] == len(figures["conflicts"]) == 2  # c1 and c3
    alpha = raters["alpha"]
    assert alpha["low"] <= alpha["value"] <= alpha["high"]
    sentence = (f"Krippendorff's alpha {alpha['value']:.3f} ({alpha['low']:.3f}–"
                f"{alpha['high']:.3f}, bootstrap 95%)")
    code, text, _ = run_cli(["judges", "eval", str(recipe)], capsys)
    assert "human ceiling: 3 rater(s) (Ana, Ben, Chen) on 6 rows" in text and sentence in text
    assert "raters' applicable agreement: Ana–Ben" in text
    assert "judge's applicable agreement (scored):" in text
    code, markdown, _ = run_cli(["judges", "eval", str(recipe), "--format", "markdown"], capsys)
    assert "**Human ceiling**" in markdown and sentence in markdown
    page = html.read_text(encoding="utf-8")
    assert "<h3>Human ceiling</h3>" in page and "Krippendorff&#x27;s alpha" in page


def test_without_annotations_the_report_has_no_raters(stub: StubModelServer, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    recipe = _recipe(tmp_path / "r", annotated=False)
    _, out, _ = run_cli(["judges", "eval", str(recipe), "--format", "json"], capsys)
    assert "raters" not in json.loads(out)["judges"][0]
    _, text, _ = run_cli(["judges", "eval", str(recipe)], capsys)
    assert "human ceiling" not in text


def test_labels_that_give_no_alpha_are_said_in_the_report(stub: StubModelServer,
                                                          tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    recipe = _recipe(tmp_path / "r")
    path = recipe / "judges" / "helpful.annotations.jsonl"
    path.write_bytes(b"\n".join(line for line in path.read_bytes().splitlines()
                                if b'"Ana"' in line) + b"\n")  # one rater
    _, out, _ = run_cli(["judges", "eval", str(recipe), "--format", "json"], capsys)
    report = json.loads(out)
    jsonschema.Draft202012Validator(load_report_schema()).validate(report)
    raters = report["judges"][0]["raters"]
    assert raters["alpha"] is None and "agreement needs two raters" in raters["problem"]
    _, text, _ = run_cli(["judges", "eval", str(recipe)], capsys)
    assert "agreement cannot be computed: agreement needs two raters" in text
    assert "nan" not in text.lower()
