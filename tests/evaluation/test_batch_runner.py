"""``--batch`` in the runner, through the real SDKs against the batch stub on 127.0.0.1."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from introspection_cli.errors import ConfigError
from introspection_cli.evaluation.batch import BatchOptions
from introspection_cli.evaluation.batch.store import STORE_FILE
from introspection_cli.evaluation.runner import EvalOptions, EvalResult, run_eval
from introspection_cli.recipe.model import Recipe
from tests.evaluation.conftest import (
    SENTINEL_KEY,
    UNGATED_JUDGE,
    fixture_row,
    recipe_object,
    write_recipe,
)
from tests.evaluation.stub_batch_server import ANTHROPIC_STEPS, OPENAI_STEPS, StubBatchServer

PROVIDERS = ["openai", "anthropic"]
FAST = BatchOptions(poll_interval=0.01)


@pytest.fixture
def batch_stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubBatchServer]:
    with StubBatchServer(api_key=SENTINEL_KEY) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_url)
        monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
        monkeypatch.setenv("ANTHROPIC_API_KEY", SENTINEL_KEY)
        yield server


def recipe_of(tmp_path: Path, texts: list[str], *, provider: str = "openai",
              instructions: str = "") -> Recipe:
    rows = [fixture_row(f"conv_{i}", text) for i, text in enumerate(texts)]
    judge = UNGATED_JUDGE + instructions
    root = write_recipe(tmp_path / "recipe", {"helpful": (judge, rows)}, provider=provider)
    recipe = recipe_object(root, provider=provider)
    if instructions:  # recipe_object fixes the instructions: put the change in them
        judge_value = recipe.judges["helpful"]
        recipe.judges["helpful"] = type(judge_value)(  # type: ignore[index]
            judge_value.name, judge_value.description, judge_value.llm,
            judge_value.instructions + instructions, judge_value.path, judge_value.gate)
    return recipe


def batch_run(recipe: Recipe, *, batch: BatchOptions = FAST, **options: object) -> EvalResult:
    return run_eval(recipe, EvalOptions(batch=batch, timeout=5.0, **options))  # type: ignore[arg-type]


def outcomes(result: EvalResult) -> list[tuple[str, str | None]]:
    return [(row.outcome, row.error) for row in result.run.judges[0].rows]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_results_are_verdicts_and_failed_items_are_error_rows(
        provider: str, tmp_path: Path, batch_stub: StubBatchServer) -> None:
    recipe = recipe_of(tmp_path, ["VERDICT:pass", "VERDICT:fail", "VERDICT:not_applicable",
                                  "BATCH:fail", "FAULT:truncated"], provider=provider)
    result = batch_run(recipe)
    rows = outcomes(result)
    assert [outcome for outcome, _ in rows] == ["pass", "fail", "not_applicable", "error",
                                                "error"]
    assert "the model is on fire" in (rows[3][1] or "")
    assert "not valid JSON" in (rows[4][1] or "")
    assert batch_stub.creations == {provider: 1}
    # The batch went through every status before it ended: one poll per step.
    steps = OPENAI_STEPS if provider == "openai" else ANTHROPIC_STEPS
    assert batch_stub.polls[provider] >= len(steps) - 1
    assert result.run.usage.requests == result.run.usage.batch_requests == 5
    assert result.run.judges[0].usage.batch_requests == 5  # the judge's own usage too
    assert result.run.usage.input_tokens > 0
    assert result.service_failures == 1  # the failed item; a bad reply is not a service failure


@pytest.mark.parametrize("provider", PROVIDERS)
def test_batch_bodies_are_the_direct_bodies_and_share_their_cache_entries(
        provider: str, tmp_path: Path, batch_stub: StubBatchServer) -> None:
    texts = ["VERDICT:pass", "VERDICT:fail", "naïve café – €5"]
    direct = run_eval(recipe_of(tmp_path / "a", texts, provider=provider),
                      EvalOptions(timeout=5.0, use_cache=False))
    direct_bodies = sorted((r.body for r in batch_stub.requests), key=repr)
    batch_stub.requests.clear()
    recipe = recipe_of(tmp_path / "b", texts, provider=provider)
    batched = batch_run(recipe)
    assert sorted((r.body for r in batch_stub.requests), key=repr) == direct_bodies
    assert outcomes(batched) == outcomes(direct)
    # The batch's verdicts are the direct path's cache entries: a direct run calls nothing.
    assert direct.run.usage.batch_requests == 0 and batched.run.usage.batch_requests == 3
    batch_stub.requests.clear()
    again = run_eval(recipe, EvalOptions(timeout=5.0))
    assert batch_stub.requests == [] and again.run.usage.cached == 3
    # And the other way round: a cached direct result is never put in a batch.
    more = batch_run(recipe)
    assert batch_stub.creations == {provider: 1} and more.run.usage.cached == 3


@pytest.mark.parametrize(("provider", "ending", "word"), [
    ("openai", "expired", "expired"), ("anthropic", "expired", "expired"),
    ("openai", "cancelled", "cancelled"), ("anthropic", "cancelled", "cancelled"),
])
def test_a_batch_ending_early_keeps_its_results(provider: str, ending: str, word: str,
                                                tmp_path: Path,
                                                batch_stub: StubBatchServer) -> None:
    batch_stub.ending = ending
    recipe = recipe_of(tmp_path, ["VERDICT:fail", "BATCH:late 1", "VERDICT:pass", "BATCH:late 2"],
                       provider=provider)
    result = batch_run(recipe)
    rows = outcomes(result)
    assert [outcome for outcome, _ in rows] == ["fail", "error", "pass", "error"]
    assert word in (rows[1][1] or "") and word in (rows[3][1] or "")
    assert result.service_failures == 2
    # The successful ones are cached; the rerun sends only the two that did not run.
    batch_stub.ending = "completed"
    rerun = batch_run(recipe)
    assert rerun.run.usage.cached == 2 and rerun.run.usage.requests == 2
    assert [outcome for outcome, _ in outcomes(rerun)] == ["fail", "pass", "pass", "pass"]
    assert batch_stub.creations == {provider: 2}


def test_an_openai_batch_that_failed_validation_makes_every_row_an_error(
        tmp_path: Path, batch_stub: StubBatchServer) -> None:
    batch_stub.ending = "failed"
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass", "VERDICT:fail"]))
    for outcome, error in outcomes(result):
        assert outcome == "error"
        assert error is not None and "failed: stub: the batch file was refused" in error


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_run_that_stops_waiting_is_resumed_by_the_next(
        provider: str, tmp_path: Path, batch_stub: StubBatchServer) -> None:
    recipe = recipe_of(tmp_path, ["VERDICT:pass", "VERDICT:fail"], provider=provider)
    first = batch_run(recipe, batch=BatchOptions(poll_interval=0.01, max_wait=0))
    assert [outcome for outcome, _ in outcomes(first)] == ["error", "error"]
    assert "keeps running at the provider" in (outcomes(first)[0][1] or "")
    assert len(first.batches_running) == 1 and provider in first.batches_running[0]
    second = batch_run(recipe)
    assert [outcome for outcome, _ in outcomes(second)] == ["pass", "fail"]
    assert batch_stub.creations == {provider: 1}
    assert second.batches_running == ()
    # Collected: a third run is served from the cache and resumes nothing.
    third = batch_run(recipe)
    assert third.run.usage.cached == 2 and batch_stub.creations == {provider: 1}


def test_changed_requests_get_a_new_batch_and_never_an_old_result(
        tmp_path: Path, batch_stub: StubBatchServer) -> None:
    wait_none = BatchOptions(poll_interval=0.01, max_wait=0)
    batch_run(recipe_of(tmp_path / "a", ["VERDICT:pass", "VERDICT:fail"]), batch=wait_none)
    assert batch_stub.creations == {"openai": 1}
    # The rubric changed: every request differs, so the pending batch is not reused.
    edited = recipe_of(tmp_path / "b", ["VERDICT:pass", "VERDICT:fail"],
                       instructions="Be strict.\n")
    batch_stub.requests.clear()
    result = batch_run(edited)
    assert batch_stub.creations == {"openai": 2}
    assert all("Be strict." in r.user_text for r in batch_stub.requests)
    assert [outcome for outcome, _ in outcomes(result)] == ["pass", "fail"]


def test_a_grown_request_set_resumes_the_old_batch_and_sends_only_the_new_request(
        tmp_path: Path, batch_stub: StubBatchServer) -> None:
    wait_none = BatchOptions(poll_interval=0.01, max_wait=0)
    batch_run(recipe_of(tmp_path / "a", ["VERDICT:pass", "VERDICT:fail"]), batch=wait_none)
    batch_stub.requests.clear()
    grown = batch_run(recipe_of(tmp_path / "b", ["VERDICT:pass", "VERDICT:fail",
                                                 "VERDICT:not_applicable"]))
    assert [outcome for outcome, _ in outcomes(grown)] == ["pass", "fail", "not_applicable"]
    assert batch_stub.creations == {"openai": 2}
    assert [r.user_text.count("VERDICT:not_applicable") for r in batch_stub.requests] == [1]


def test_a_batch_the_provider_lost_is_submitted_again_with_a_warning(
        tmp_path: Path, batch_stub: StubBatchServer) -> None:
    recipe = recipe_of(tmp_path, ["VERDICT:pass"])
    first = batch_run(recipe, batch=BatchOptions(poll_interval=0.01, max_wait=0))
    (label,) = first.batches_running
    batch_stub.forget(label.split()[1])
    second = batch_run(recipe)
    assert outcomes(second) == [("pass", None)]
    assert batch_stub.creations == {"openai": 2}
    assert any("no longer exists at the provider" in w for w in second.warnings)


def test_a_corrupt_batch_store_is_renamed_aside_with_a_warning(
        tmp_path: Path, batch_stub: StubBatchServer) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / STORE_FILE).write_bytes(b"this is not a database" * 100)
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass"]), cache_dir=cache)
    assert outcomes(result) == [("pass", None)]
    assert any("renamed" in w and STORE_FILE in w for w in result.warnings)
    aside = [p.name for p in cache.iterdir() if p.name.startswith(f"{STORE_FILE}.corrupt-")]
    assert len(aside) == 1
    assert (cache / aside[0]).read_bytes().startswith(b"this is not a database")
    with sqlite3.connect(cache / STORE_FILE) as db:  # a fresh store holds the new batch
        assert db.execute("SELECT count(*) FROM batches").fetchone() == (1,)


def test_one_openai_batch_per_model_and_one_request_per_sample(
        tmp_path: Path, batch_stub: StubBatchServer) -> None:
    rows = [fixture_row("conv_0", "VERDICT:pass")]
    root = write_recipe(tmp_path / "recipe", {
        "helpful": (UNGATED_JUDGE, rows),
        "other": (UNGATED_JUDGE.replace("name: helpful", "name: other")
                  .replace("stub-model", "stub-model-2"), rows)})
    recipe = recipe_object(root)
    other = recipe.judges["other"]
    recipe.judges["other"] = type(other)(  # type: ignore[index]
        other.name, other.description, type(other.llm)("openai", "stub-model-2"),
        other.instructions, other.path, other.gate)
    result = batch_run(recipe, samples=3)
    assert batch_stub.creations == {"openai": 2}
    models = {batch.requests[0]["body"]["model"] for batch in batch_stub.batches.values()}
    assert models == {"stub-model", "stub-model-2"}
    assert all(len(batch.requests) == 3 for batch in batch_stub.batches.values())
    assert [row.samples for judge in result.run.judges for row in judge.rows] == [
        ("pass",) * 3, ("pass",) * 3]


def test_equal_requests_of_two_judges_are_sent_once(tmp_path: Path,
                                                    batch_stub: StubBatchServer) -> None:
    rows = [fixture_row("conv_0", "VERDICT:fail")]
    root = write_recipe(tmp_path / "recipe", {
        "helpful": (UNGATED_JUDGE, rows),
        "same": (UNGATED_JUDGE.replace("name: helpful", "name: same"), rows)})
    result = batch_run(recipe_object(root))
    (batch,) = batch_stub.batches.values()
    assert len(batch.requests) == 1
    assert [judge.rows[0].outcome for judge in result.run.judges] == ["fail", "fail"]
    assert result.run.usage.requests == 1 and result.run.usage.input_tokens == 100


def test_a_rejected_key_stops_the_run(tmp_path: Path, batch_stub: StubBatchServer,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY") as caught:
        batch_run(recipe_of(tmp_path, ["VERDICT:pass"]))
    assert "sk-wrong" not in str(caught.value)
    assert batch_stub.creations == {}


def test_the_store_holds_no_key_and_no_prompt(tmp_path: Path,
                                              batch_stub: StubBatchServer) -> None:
    cache = tmp_path / "cache"
    batch_run(recipe_of(tmp_path, ["VERDICT:pass secret-conversation-text"]),
              batch=BatchOptions(poll_interval=0.01, max_wait=0), cache_dir=cache)
    stored = b"".join(p.read_bytes() for p in cache.rglob("*") if p.is_file())
    assert SENTINEL_KEY.encode() not in stored
    assert b"secret-conversation-text" not in stored


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_result_line_over_the_size_cap_is_skipped_not_held(
        provider: str, tmp_path: Path, batch_stub: StubBatchServer) -> None:
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass", "BATCH:huge", "VERDICT:fail"],
                                 provider=provider))
    rows = outcomes(result)
    assert [outcome for outcome, _ in rows] == ["pass", "error", "fail"]
    assert "the result line for this request is larger than 4 MiB" in (rows[1][1] or "")


def test_an_output_file_with_more_lines_than_requests_is_cut_off(
        tmp_path: Path, batch_stub: StubBatchServer) -> None:
    batch_stub.extra_output = b'{"custom_id": "stray", "response": null}\n' * 100
    recipe = recipe_of(tmp_path, ["VERDICT:pass", "VERDICT:fail"])
    result = batch_run(recipe)
    for outcome, error in outcomes(result):
        assert outcome == "error"
        assert error is not None and "hold more than 20 lines for its 2 requests" in error
        assert "rerun to read the results" in error
    # Not marked collected: a rerun reads the same batch again, creating none.
    batch_stub.extra_output = b""
    batch_run(recipe)
    assert batch_stub.creations == {"openai": 1}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_failed_creation_makes_its_rows_errors_and_nothing_is_recorded(
        provider: str, tmp_path: Path, batch_stub: StubBatchServer) -> None:
    batch_stub.failing_creations = 1
    recipe = recipe_of(tmp_path, ["VERDICT:pass", "VERDICT:fail"], provider=provider)
    result = batch_run(recipe, max_retries=0)
    for outcome, error in outcomes(result):
        assert outcome == "error"
        assert error is not None and "creating the" in error and "HTTP 500" in error
    assert result.service_failures == 2 and result.batches_running == ()
    assert [outcome for outcome, _ in outcomes(batch_run(recipe))] == ["pass", "fail"]
    assert batch_stub.creations == {provider: 1}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_batch_that_cannot_be_polled_is_left_running_for_the_next_run(
        provider: str, tmp_path: Path, batch_stub: StubBatchServer) -> None:
    batch_stub.failing_polls = 5
    recipe = recipe_of(tmp_path, ["VERDICT:pass", "VERDICT:fail"], provider=provider)
    result = batch_run(recipe, max_retries=0)
    for outcome, error in outcomes(result):
        assert outcome == "error"
        assert error is not None and "could not be polled 5 times in a row" in error
        assert "keeps running at the provider" in error
    assert len(result.batches_running) == 1
    assert result.run.usage.requests == 0
    assert [outcome for outcome, _ in outcomes(batch_run(recipe))] == ["pass", "fail"]
    assert batch_stub.creations == {provider: 1}


def test_a_poll_that_fails_now_and_then_is_tried_again(tmp_path: Path,
                                                       batch_stub: StubBatchServer) -> None:
    batch_stub.failing_polls = 4
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass"]), max_retries=0)
    assert outcomes(result) == [("pass", None)]


def test_without_the_cache_batches_still_resume_but_verdicts_are_not_kept(
        tmp_path: Path, batch_stub: StubBatchServer) -> None:
    recipe = recipe_of(tmp_path, ["VERDICT:pass"])
    batch_run(recipe, use_cache=False, batch=BatchOptions(poll_interval=0.01, max_wait=0))
    assert outcomes(batch_run(recipe, use_cache=False)) == [("pass", None)]
    assert batch_stub.creations == {"openai": 1}  # resumed
    assert outcomes(batch_run(recipe, use_cache=False)) == [("pass", None)]
    assert batch_stub.creations == {"openai": 2}  # collected, and nothing cached: sent again


def test_a_batch_id_that_is_not_a_plain_id_is_refused(tmp_path: Path,
                                                      batch_stub: StubBatchServer) -> None:
    batch_stub.id_format = "../x\n{number}"
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass"]))
    ((outcome, error),) = outcomes(result)
    assert outcome == "error" and error is not None
    assert "unusable id (../x\\n" in error and "\n" not in error
    with sqlite3.connect(tmp_path / "cache" / STORE_FILE) as db:
        assert db.execute("SELECT count(*) FROM batches").fetchone() == (0,)


@pytest.mark.parametrize(("body", "reason"), [
    (b'{"id": "x", "padding": "' + b"y" * 4096 + b'"}', "could not be polled (polling batch "),
    (b"<html>a proxy</html>", "could not be polled 5 times in a row"),
])
def test_a_batch_object_is_read_under_a_size_cap_and_must_be_json(
        body: bytes, reason: str, tmp_path: Path, batch_stub: StubBatchServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from introspection_cli.evaluation.batch import sdk_backend

    monkeypatch.setattr(sdk_backend, "METADATA_BYTES", 1024)
    batch_stub.bad_polls = [body] * 5
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass"]))
    ((outcome, error),) = outcomes(result)
    assert outcome == "error" and error is not None
    assert reason in error
    assert ("larger than 1024 bytes; it was not read" in error
            if b"padding" in body else "not a JSON object" in error)


def test_a_status_that_is_not_a_plain_word_is_unknown_and_polling_goes_on(
        tmp_path: Path, batch_stub: StubBatchServer) -> None:
    batch_stub.bad_polls = [b'{"id": "batch_2", "status": "completed\\n\\u001b[2J"}']
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass"]))
    assert outcomes(result) == [("pass", None)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_request_the_batch_refuses_as_wrong_is_a_refusal_as_a_direct_400_is(
        provider: str, tmp_path: Path, batch_stub: StubBatchServer) -> None:
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass", "BATCH:refuse", "BATCH:fail"],
                                 provider=provider))
    rows = outcomes(result)
    assert [outcome for outcome, _ in rows] == ["pass", "error", "error"]
    assert "stub: no such model" in (rows[1][1] or "")
    assert "check the model name" in (rows[1][1] or "")
    assert result.refused == 1 and result.service_failures == 1
    (refusal,) = result.refusals
    assert "stub-model" in refusal and batch_stub.anthropic_url in refusal
