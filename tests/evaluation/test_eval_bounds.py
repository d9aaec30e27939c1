"""What a run keeps per row is bounded: prompts over 2 MiB are not sent, reasoning is cut at 16 KiB."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.evaluation.cache import CACHE_FILE
from introspection_cli.evaluation.runner import EvalOptions, run_eval
from introspection_cli.evaluation.verdict import REASONING_LIMIT, truncate_reasoning
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
    tool_reply,
)


def test_a_prompt_over_2_mib_is_an_error_row_and_not_sent(tmp_path: Path,
                                                          stub: StubModelServer) -> None:
    huge = "refund " + "é" * (1024 * 1024 + 10)  # 2 MiB of UTF-8 and then some
    rows = [fixture_row("conv_small", "refund VERDICT:pass"), fixture_row("conv_huge", huge)]
    root = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)})
    result = run_eval(recipe_object(root), EvalOptions(max_retries=0, timeout=5.0))
    small, big = result.run.judges[0].rows
    assert small.outcome == "pass"
    assert big.outcome == "error" and big.error is not None
    assert big.error.startswith("prompt too large: 2.0 MiB")
    assert len(stub.requests) == 1 and "conv_huge" not in json.dumps(stub.requests[0].body)
    assert result.service_failures == 0


def long_reasoning(request: RecordedRequest, attempt: int) -> StubReply:
    reasoning = "The agent did well. " * 20_000  # 400 KB
    return StubReply(body=tool_reply(request.api, json.dumps(
        {"reasoning": reasoning, "verdict": "pass"})))


def test_reasoning_is_kept_to_16_kib_in_the_report_and_the_cache(tmp_path: Path) -> None:
    rows = [fixture_row("conv_1", "refund please")]
    root = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)})
    with StubModelServer(script=long_reasoning) as server:
        env = {"OPENAI_BASE_URL": server.openai_url, "OPENAI_API_KEY": SENTINEL_KEY}
        options = EvalOptions(cache_dir=tmp_path / "cache", max_retries=0, timeout=5.0)
        first = run_eval(recipe_object(root), options, environ=env)
        again = run_eval(recipe_object(root), options, environ=env)
    (row,) = first.run.judges[0].rows
    assert row.outcome == "pass" and row.reasoning is not None
    assert len(row.reasoning.encode()) <= REASONING_LIMIT
    assert row.reasoning.startswith("The agent did well.")
    assert "reasoning truncated to 16 KiB; the model wrote 400,000 bytes" in row.reasoning
    assert again.run.judges[0].rows[0].reasoning == row.reasoning  # as cached
    db = sqlite3.connect(tmp_path / "cache" / CACHE_FILE)
    (stored,) = db.execute("SELECT reasoning FROM verdicts").fetchone()
    db.close()
    assert stored == row.reasoning


@given(st.text(st.characters(codec="utf-8"), max_size=300).map(lambda s: s * 100))
def test_truncation_fits_the_limit_and_is_idempotent(reasoning: str) -> None:
    once = truncate_reasoning(reasoning)
    assert len(once.encode()) <= REASONING_LIMIT
    assert truncate_reasoning(once) == once
    if len(reasoning.encode()) <= REASONING_LIMIT:
        assert once == reasoning
    else:
        assert reasoning.startswith(once.split(" … [reasoning truncated")[0])
