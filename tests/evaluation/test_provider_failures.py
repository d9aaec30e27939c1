"""A provider that fails: a dead endpoint stops being called, a refusal is named for what it is.

Through the real SDKs against the stub on 127.0.0.1: a server that accepts and
never answers trips the circuit breaker after five requests; a non-retryable 4xx
is a refusal (exit 2) naming the model and the endpoint; no message claims
retries the SDK did not make.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from introspection_cli.evaluation.runner import EvalOptions, EvalResult, run_eval
from introspection_cli.recipe.model import Recipe
from tests.evaluation.conftest import (
    GATED_JUDGE,
    SENTINEL_KEY,
    fixture_row,
    recipe_object,
    write_recipe,
)
from tests.evaluation.stub_model_server import (
    RecordedRequest,
    StubModelServer,
    StubReply,
    error_reply,
    marker_reply,
)
from tests.support.http_stub import unused_port


def recipe_of(tmp_path: Path, texts: list[str], *, provider: str = "openai") -> Recipe:
    rows = [fixture_row(f"conv_{i}", text) for i, text in enumerate(texts)]
    root = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)}, provider=provider)
    return recipe_object(root, provider=provider)


def run(recipe: Recipe, server: StubModelServer, **options: object) -> EvalResult:
    env = {"OPENAI_BASE_URL": server.openai_url, "ANTHROPIC_BASE_URL": server.anthropic_url,
           "OPENAI_API_KEY": SENTINEL_KEY, "ANTHROPIC_API_KEY": SENTINEL_KEY}
    settings = {"max_retries": 0, "timeout": 0.5, "use_cache": False, **options}
    return run_eval(recipe, EvalOptions(**settings), environ=env)  # type: ignore[arg-type]


def hang_when(word: str) -> object:
    """A script that never answers (within any test's patience) requests naming ``word``."""
    def script(request: RecordedRequest, attempt: int) -> StubReply:
        if word in request.user_text:
            return StubReply(delay=30.0)
        return marker_reply(request, attempt, hang_seconds=0)
    return script


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_server_that_never_answers_is_given_up_after_five_requests(
        tmp_path: Path, provider: str) -> None:
    recipe = recipe_of(tmp_path, [f"refund {i} silence" for i in range(40)], provider=provider)
    with StubModelServer(script=hang_when("silence")) as server:  # type: ignore[arg-type]
        result = run(recipe, server, concurrency=2)
        sent = len(server.requests)
    rows = result.run.judges[0].rows
    assert sent <= 5 + 2  # five failures, and what was in flight when the fifth came back
    assert all(row.outcome == "error" for row in rows)
    stopped = [row for row in rows if row.error and row.error.startswith("provider unreachable")]
    assert len(stopped) >= 40 - sent
    assert "5 requests in a row got no answer" in (stopped[0].error or "")
    assert result.service_failures == 40  # exit 3: the provider failed


def test_an_answer_between_failures_keeps_the_provider_in_use(tmp_path: Path) -> None:
    texts = [f"refund {i} {'silence' if i % 4 else 'VERDICT:pass'}" for i in range(16)]
    recipe = recipe_of(tmp_path, texts)
    with StubModelServer(script=hang_when("silence")) as server:  # type: ignore[arg-type]
        result = run(recipe, server, concurrency=1)
        sent = len(server.requests)
    assert sent == 16  # never five failures in a row: every row was sent
    outcomes = [row.outcome for row in result.run.judges[0].rows]
    assert outcomes == ["pass" if i % 4 == 0 else "error" for i in range(16)]


def test_a_closed_port_is_a_connection_error_without_claimed_retries(tmp_path: Path) -> None:
    port = unused_port()
    recipe = recipe_of(tmp_path, ["refund now"])
    env = {"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "sk-x"}
    result = run_eval(recipe, EvalOptions(max_retries=0, timeout=2.0, use_cache=False),
                      environ=env)
    (row,) = result.run.judges[0].rows
    assert row.error == f"could not connect to http://127.0.0.1:{port}/v1"


@pytest.mark.parametrize(("retries", "said"), [(0, ""), (1, " after 1 retry"),
                                               (2, " after 2 retries")])
def test_a_message_names_the_retries_that_were_made(tmp_path: Path, retries: int,
                                                    said: str) -> None:
    recipe = recipe_of(tmp_path, ["refund FAULT:500-always"])
    with StubModelServer() as server:
        result = run(recipe, server, max_retries=retries)
        assert len(server.requests) == retries + 1
    (row,) = result.run.judges[0].rows
    assert row.error == f"HTTP 500 from {server.openai_url}{said}: broken"


def refuse(status: int, word: str = "") -> object:
    def script(request: RecordedRequest, attempt: int) -> StubReply:
        if word in request.user_text:
            return error_reply(request.api, status, f"the model does not exist ({status})")
        return marker_reply(request, attempt, hang_seconds=0)
    return script


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("status", [400, 404, 422])
def test_a_refusal_is_not_retried_and_names_the_model(tmp_path: Path, provider: str,
                                                      status: int) -> None:
    recipe = recipe_of(tmp_path, ["refund VERDICT:pass", "refund oversized"],
                       provider=provider)
    with StubModelServer(script=refuse(status, "oversized")) as server:  # type: ignore[arg-type]
        result = run(recipe, server, max_retries=2, concurrency=1)
        sent = [request.user_text for request in server.requests]
    assert sum("oversized" in text for text in sent) == 1  # not retried
    passed, refused = result.run.judges[0].rows
    assert passed.outcome == "pass"
    url = server.openai_url if provider == "openai" else server.anthropic_url
    assert refused.error == (f"HTTP {status} from {url} for model stub-model: the model does "
                             f"not exist ({status}); check the model name and the judge's "
                             "llm settings")
    assert (result.refused, result.service_failures) == (1, 0)


def test_refusals_in_a_row_stop_the_calls(tmp_path: Path) -> None:
    recipe = recipe_of(tmp_path, [f"refund {i}" for i in range(30)])
    with StubModelServer(script=refuse(404)) as server:  # type: ignore[arg-type]
        result = run(recipe, server, concurrency=2)
        sent = len(server.requests)
    assert sent <= 5 + 2
    errors = [row.error or "" for row in result.run.judges[0].rows]
    assert sum(error.startswith("not sent: the provider refused the last 5 requests")
               for error in errors) >= 30 - sent
    assert result.refused == 30 and result.service_failures == 0


def eval_cli(root: Path, base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "introspection_cli", "judges", "eval", str(root),
         "--format", "json", "--no-cache", *args],
        env={"PATH": "/usr/bin:/bin", "OPENAI_BASE_URL": base_url,
             "OPENAI_API_KEY": SENTINEL_KEY}, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("status", [400, 404])
def test_the_cli_exits_2_on_a_refusal_naming_model_and_endpoint(tmp_path: Path,
                                                                status: int) -> None:
    rows = [fixture_row("conv_1", "refund please")]
    root = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)})
    with StubModelServer(script=refuse(status)) as server:  # type: ignore[arg-type]
        result = eval_cli(root, server.openai_url)
        sent = len(server.requests)
    assert result.returncode == 2, result.stderr
    assert sent == 1  # the default --max-retries 2 did not resend it
    (row,) = json.loads(result.stdout)["judges"][0]["rows"]
    assert row["outcome"] == "error" and "retr" not in row["error"]
    assert f"model stub-model at {server.openai_url} as wrong (HTTP {status})" in result.stderr
    assert "retr" not in result.stderr
    assert SENTINEL_KEY not in result.stderr + result.stdout


def test_the_cli_exits_3_on_a_dead_endpoint_claiming_no_retries_it_did_not_make(
        tmp_path: Path) -> None:
    rows = [fixture_row(f"conv_{i}", f"refund {i} silence") for i in range(30)]
    root = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)})
    with StubModelServer(script=hang_when("silence")) as server:  # type: ignore[arg-type]
        result = eval_cli(root, server.openai_url, "--max-retries", "0", "--timeout", "0.5",
                          "--concurrency", "2")
        sent = len(server.requests)
    assert result.returncode == 3, result.stderr
    assert sent <= 5 + 2
    errors = [row["error"] for row in json.loads(result.stdout)["judges"][0]["rows"]]
    assert sum(error.startswith("provider unreachable: not sent") for error in errors) >= 30 - sent
    said = result.stderr + "".join(errors)
    assert "after retr" not in said and "retries" not in said  # --max-retries 0: none made
    assert "30 row(s) failed at the model provider" in result.stderr
