"""``judges eval`` on inputs an audit found mishandled: each test failed before its fix.

Real subprocesses against the stub model server, as users run the command.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest

from introspection_cli.evaluation.runner import EvalOptions
from introspection_cli.reporting.model import load_report_schema
from introspection_cli.workflows.judges_eval import ReportSettings, evaluate_recipe
from tests.conftest import run_cli
from tests.evaluation.conftest import UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer

TEMPERATURE_JUDGE = UNGATED_JUDGE.replace("  model: stub-model\n",
                                          "  model: stub-model\n  temperature: {temperature}\n")


def eval_cli(args: list[str], cache: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli(["judges", "eval", *args, "--max-retries", "0", "--timeout", "5"],
                   env={"INTROSPECTION_CACHE_DIR": str(cache), **env})


def one_row_recipe(root: Path, text: str = "VERDICT:pass", *, provider: str = "openai",
                   judge: str = UNGATED_JUDGE) -> Path:
    return write_recipe(root, {"helpful": (judge, [fixture_row("conv_1", text)])},
                        provider=provider)


def temperature_recipe(root: Path, provider: str, temperature: float) -> Path:
    judge = TEMPERATURE_JUDGE.replace("{temperature}", str(temperature))
    return one_row_recipe(root, provider=provider, judge=judge)


def test_an_anthropic_judge_with_a_temperature_is_evaluated_without_sending_it(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = temperature_recipe(tmp_path / "r", "anthropic", 0.2)
    result = eval_cli([str(root), "--format", "json"], tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    (request,) = stub.requests
    assert request.api == "anthropic" and "temperature" not in request.body
    assert json.loads(result.stdout)["judges"][0]["rows"][0]["outcome"] == "pass"
    assert "warning: judge helpful sets llm.temperature 0.2" in result.stderr
    assert "anthropic provider does not send" in result.stderr


def test_a_temperature_only_keys_the_cache_where_it_is_sent(tmp_path: Path,
                                                            stub: StubModelServer) -> None:
    for provider, calls_after_edit in (("anthropic", 0), ("openai", 1)):
        cache = tmp_path / f"cache-{provider}"
        root = temperature_recipe(tmp_path / provider, provider, 0.2)
        assert eval_cli([str(root)], cache).returncode == 0
        before = len(stub.requests)
        judge_file = root / "judges" / "helpful.yaml"
        judge_file.write_text(judge_file.read_text().replace("0.2", "0.7"))
        assert eval_cli([str(root)], cache).returncode == 0
        assert len(stub.requests) - before == calls_after_edit, provider
    assert [r.body.get("temperature") for r in stub.requests if r.api == "openai"] == [0.2, 0.7]


def test_a_temperature_is_sent_to_openai_and_not_warned_about(tmp_path: Path,
                                                             stub: StubModelServer) -> None:
    root = temperature_recipe(tmp_path / "r", "openai", 0.2)
    result = eval_cli([str(root)], tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert stub.requests[0].body["temperature"] == 0.2
    assert "temperature" not in result.stderr


@pytest.mark.parametrize("where", ["missing-dir", "a-directory"])
def test_an_unwritable_output_path_stops_the_run_before_any_call(
        tmp_path: Path, stub: StubModelServer, where: str) -> None:
    root = one_row_recipe(tmp_path / "r")
    output = tmp_path / "no-such-dir" / "report.json" if where == "missing-dir" else tmp_path
    result = eval_cli([str(root), "--output", str(output)], tmp_path / "cache")
    assert result.returncode == 2, result.stderr
    assert "--output" in result.stderr and "internal error" not in result.stderr
    assert stub.requests == []


def test_a_report_that_cannot_be_written_after_the_run_is_still_printed(
        tmp_path: Path, stub: StubModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    root = one_row_recipe(tmp_path / "r")

    def fail(path: Path, report: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("introspection_cli.workflows.judges_eval.write_report_text", fail)
    result = evaluate_recipe(root, EvalOptions(), ReportSettings(
        fmt="json", output=tmp_path / "report.json"))
    assert result.exit_code == 2
    assert json.loads(result.stdout)["judges"][0]["rows"][0]["outcome"] == "pass"
    assert any("cannot write --output" in p and "Permission denied" in p
               for p in result.problems)


def test_credentials_in_a_base_url_never_reach_output_report_or_cache(
        tmp_path: Path, stub: StubModelServer) -> None:
    root = one_row_recipe(tmp_path / "r", "FAULT:500-always")
    out = tmp_path / "report.json"
    # The URL's credentials are sent as HTTP basic auth: a server checking the API key
    # rejects them (401, exit 2); one that does not check answers (here with 500s, exit 3).
    with StubModelServer() as keyless:
        runs = [(server, eval_cli([str(root), "--output", str(out)], tmp_path / "cache",
                                  OPENAI_BASE_URL=server.openai_url.replace(
                                      "http://", "http://ada:s3cretpw@")))
                for server in (stub, keyless)]
    (_, rejected), (_, failed) = runs
    assert rejected.returncode == 2 and "rejected the API key" in rejected.stderr
    assert failed.returncode == 3, failed.stderr
    assert "HTTP 500 from http://127.0.0.1:" in failed.stdout  # the endpoint, without them
    cache_bytes = b"".join(p.read_bytes() for p in (tmp_path / "cache").iterdir())
    assert b"s3cretpw" not in cache_bytes
    for text in (rejected.stdout, rejected.stderr, failed.stdout, failed.stderr,
                 out.read_text()):
        assert "s3cretpw" not in text and "ada:" not in text


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_malformed_usage_counts_count_as_zero(tmp_path: Path, stub: StubModelServer,
                                              provider: str) -> None:
    root = one_row_recipe(tmp_path / "r", "VERDICT:fail FAULT:bad-usage", provider=provider)
    result = eval_cli([str(root), "--format", "json"], tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    jsonschema.validate(report, load_report_schema())
    assert report["judges"][0]["rows"][0]["outcome"] == "pass"
    assert report["usage"]["input_tokens"] == 0 and report["usage"]["output_tokens"] == 0


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_reply_calling_another_tool_is_an_error(tmp_path: Path, stub: StubModelServer,
                                                  provider: str) -> None:
    root = one_row_recipe(tmp_path / "r", "FAULT:other-tool", provider=provider)
    result = eval_cli([str(root), "--format", "json"], tmp_path / "cache")
    assert result.returncode == 1, result.stderr  # an error row, and so no judged row
    assert "no row was judged" in result.stderr
    (row,) = json.loads(result.stdout)["judges"][0]["rows"]
    assert row["outcome"] == "error"
    assert "called the tool 'other_tool' instead of submit_verdict" in row["error"]


# NaN passes Typer's range checks (every comparison with it is false); inf passes --timeout's.
@pytest.mark.parametrize(("flag", "value"), [("--min-agreement", "nan"), ("--min-kappa", "nan"),
                                             ("--min-tpr", "nan"), ("--min-tnr", "nan"),
                                             ("--max-error-rate", "nan"),
                                             ("--timeout", "nan"), ("--timeout", "inf")])
def test_non_finite_numbers_are_usage_errors(tmp_path: Path, stub: StubModelServer,
                                             flag: str, value: str) -> None:
    root = one_row_recipe(tmp_path / "r")
    result = run_cli(["judges", "eval", str(root), flag, value],
                     env={"INTROSPECTION_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 2, result.stderr
    assert flag in result.stderr
    assert stub.requests == []


def test_a_row_with_several_problems_is_counted_once(tmp_path: Path,
                                                     stub: StubModelServer) -> None:
    good = fixture_row("conv_2", "VERDICT:pass")
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, ['{"x": 1}', good])})
    result = eval_cli([str(root)], tmp_path / "cache")
    assert result.returncode == 1
    assert "judge helpful: 1 calibration row(s) rejected (lines 1);" in result.stderr


def test_output_through_a_symlink_writes_its_target(tmp_path: Path,
                                                    stub: StubModelServer) -> None:
    root = one_row_recipe(tmp_path / "r")
    target = tmp_path / "reports" / "latest.json"
    target.parent.mkdir()
    target.write_text("{}\n")
    link = tmp_path / "report.json"
    link.symlink_to(target)
    result = eval_cli([str(root), "--output", str(link)], tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert link.is_symlink()
    assert json.loads(target.read_text())["judges"][0]["rows"][0]["outcome"] == "pass"


def test_a_yml_judge_is_evaluated(tmp_path: Path, stub: StubModelServer) -> None:
    root = one_row_recipe(tmp_path / "r")
    (root / "judges" / "helpful.yaml").rename(root / "judges" / "helpful.yml")
    result = eval_cli([str(root), "--format", "json"], tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    (judge,) = json.loads(result.stdout)["judges"]
    assert judge["name"] == "helpful" and judge["rows"][0]["outcome"] == "pass"
