"""Every request of a batch has exactly one result: hostile result files, through the real
SDKs against the batch stub, and the causes named as they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.evaluation.batch import BatchOptions
from tests.conftest import run_cli
from tests.evaluation import test_batch_runner
from tests.evaluation.conftest import SENTINEL_KEY, UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_batch_server import StubBatchServer
from tests.evaluation.test_batch_cli import env_for, eval_args
from tests.evaluation.test_batch_runner import PROVIDERS, batch_run, outcomes, recipe_of

batch_stub = test_batch_runner.batch_stub  # the fixture: the stub, and the SDKs' env on it


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("marker", ["BATCH:duplicate", "BATCH:repeat"])
def test_a_request_with_two_results_is_an_error_whichever_comes_first(
        provider: str, marker: str, tmp_path: Path, batch_stub: StubBatchServer) -> None:
    recipe = recipe_of(tmp_path, ["VERDICT:pass", f"VERDICT:pass {marker}",
                                  f"VERDICT:fail {marker}", "VERDICT:fail"], provider=provider)
    result = batch_run(recipe)
    rows = outcomes(result)
    assert [outcome for outcome, _ in rows] == ["pass", "error", "error", "fail"]
    for _, error in rows[1:3]:
        assert error is not None and "2 results for this request" in error
    agree = "the same result twice" if marker == "BATCH:repeat" else "they differ"
    assert agree in (rows[1][1] or "")
    assert result.service_failures == 2
    (batch_id,) = batch_stub.batches
    assert any(f"batch {batch_id}" in w and "2 requests had more than one result" in w
               for w in result.warnings)
    # Neither copy was cached: the rerun sends both requests again, in a new batch.
    rerun = batch_run(recipe)
    assert rerun.run.usage.cached == 2 and rerun.run.usage.batch_requests == 2


@pytest.mark.parametrize("provider", PROVIDERS)
def test_results_for_requests_the_batch_does_not_hold_are_counted_and_named(
        provider: str, tmp_path: Path, batch_stub: StubBatchServer) -> None:
    stray = {"openai": b'{"custom_id": "stray-%d", "response": null, "error": null}\n',
             "anthropic": b'{"custom_id": "stray-%d", "result": {"type": "expired"}}\n'}
    batch_stub.extra_output = b"".join(stray[provider] % i for i in range(5))
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass", "VERDICT:fail"], provider=provider))
    assert outcomes(result) == [("pass", None), ("fail", None)]
    (batch_id,) = batch_stub.batches
    (warning,) = [w for w in result.warnings if f"batch {batch_id}" in w]
    assert "5 result lines name requests the batch does not hold" in warning
    assert "'stray-0'" in warning


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_torn_result_line_is_named_as_torn(provider: str, tmp_path: Path,
                                             batch_stub: StubBatchServer) -> None:
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass", "BATCH:torn", "BATCH:shred",
                                            "VERDICT:fail"], provider=provider))
    rows = outcomes(result)
    assert [outcome for outcome, _ in rows] == ["pass", "error", "error", "fail"]
    assert "result line for this request is torn" in (rows[1][1] or "")
    # The shredded line names no request: the request without a result says it may be there.
    assert "no result for this request" in (rows[2][1] or "")
    assert "1 result line could not be read (torn" in (rows[2][1] or "")
    assert result.service_failures == 2
    (batch_id,) = batch_stub.batches
    assert any(f"batch {batch_id}" in w and "2 torn result lines" in w for w in result.warnings)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_request_without_a_result_is_an_error_and_named(
        provider: str, tmp_path: Path, batch_stub: StubBatchServer) -> None:
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass", "BATCH:missing"], provider=provider))
    rows = outcomes(result)
    assert rows[0] == ("pass", None)
    assert rows[1][0] == "error" and "no result for this request" in (rows[1][1] or "")
    (batch_id,) = batch_stub.batches
    assert any(f"batch {batch_id}" in w and "1 request had no result" in w
               for w in result.warnings)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_result_line_over_the_cap_is_named_as_too_large(
        provider: str, tmp_path: Path, batch_stub: StubBatchServer) -> None:
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass", "BATCH:huge"], provider=provider))
    rows = outcomes(result)
    assert rows[1][0] == "error"
    assert "result line for this request is larger than 4 MiB" in (rows[1][1] or "")


def test_the_summary_line_names_what_did_not_reconcile_and_the_run_exits_3(
        tmp_path: Path, batch_stub: StubBatchServer) -> None:
    texts = [f"VERDICT:fail {i}" for i in range(9)] + [
        f"VERDICT:fail BATCH:duplicate {i}" for i in range(3)]
    root = write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, [
        fixture_row(f"conv_{i}", text) for i, text in enumerate(texts)])})
    result = run_cli(eval_args(root), env=env_for(batch_stub, tmp_path / "cache"))
    assert result.returncode == 3, result.stderr
    rows = json.loads(result.stdout)["judges"][0]["rows"]
    assert [row["outcome"] for row in rows] == ["fail"] * 9 + ["error"] * 3
    (batch_id,) = batch_stub.batches
    assert (f"introspection: batch openai {batch_id}: completed; 9 results, 3 failed "
            "(3 requests had more than one result)") in result.stderr.splitlines()


def test_the_line_budget_is_the_batch_s_own_request_count(
        tmp_path: Path, batch_stub: StubBatchServer) -> None:
    """A provider's own count (``request_counts.total``) does not raise the budget."""
    batch_stub.extra_output = b'{"custom_id": "stray", "response": null}\n' * 5000
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass", "VERDICT:fail"]))
    for outcome, error in outcomes(result):
        assert outcome == "error"
        assert error is not None and "more than 20 lines for its 2 requests" in error


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_oversized_batch_object_is_named_not_taken_for_a_long_wait(
        provider: str, tmp_path: Path, batch_stub: StubBatchServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from introspection_cli.evaluation.batch import sdk_backend

    monkeypatch.setattr(sdk_backend, "METADATA_BYTES", 4096)
    batch_stub.bad_polls = [b'{"id": "x", "padding": "' + b"y" * 8192 + b'"}'] * 50
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass"], provider=provider),
                       batch=BatchOptions(poll_interval=0.01, max_wait=0.5))
    ((outcome, error),) = outcomes(result)
    assert outcome == "error" and error is not None
    assert "larger than 4096 bytes" in error and "had not ended" not in error
    assert len(batch_stub.bad_polls) == 49  # not polled again: it would not get smaller


@pytest.mark.parametrize(("provider", "path"), [("openai", "/files"),
                                                ("anthropic", "/v1/messages/batches")])
def test_an_endpoint_without_a_batch_api_is_named_so(provider: str, path: str, tmp_path: Path,
                                                     batch_stub: StubBatchServer) -> None:
    batch_stub.batch_api = False
    root = write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, [
        fixture_row(f"conv_{i}", "VERDICT:pass") for i in range(3)])}, provider=provider)
    result = run_cli(eval_args(root), env=env_for(batch_stub, tmp_path / "cache"))
    assert result.returncode == 2, result.stderr
    assert f"has no batch API (HTTP 404 on {path}); run without --batch" in result.stderr
    assert "model name" not in result.stderr
    assert SENTINEL_KEY not in result.stderr


@pytest.mark.parametrize("provider", PROVIDERS)
def test_requests_of_a_batch_never_created_are_not_counted_as_sent(
        provider: str, tmp_path: Path, batch_stub: StubBatchServer) -> None:
    batch_stub.failing_creations = 1
    result = batch_run(recipe_of(tmp_path, ["VERDICT:pass", "VERDICT:fail"], provider=provider),
                       max_retries=0)
    assert [outcome for outcome, _ in outcomes(result)] == ["error", "error"]
    assert result.run.usage.requests == result.run.usage.batch_requests == 0
    assert result.run.judges[0].usage.requests == 0


def test_a_result_is_held_until_reconciled_as_its_verdict_and_tokens_only() -> None:
    from introspection_cli.evaluation.batch.sink import SlotSink
    from introspection_cli.evaluation.outcomes import Usage
    from introspection_cli.evaluation.providers.interface import ModelReply
    from introspection_cli.evaluation.verdict import ParsedVerdict

    sink: SlotSink[object] = SlotSink({}, lambda *_: None, cache=None, usage=Usage())
    arguments = json.dumps({"verdict": "pass", "reasoning": "r" * 3_000_000})
    held = sink.hold(ModelReply(arguments, "t" * 1_000_000, input_tokens=7, output_tokens=3))
    assert not isinstance(held, Exception)
    assert held.reply.tool_arguments is None and held.reply.text is None
    assert (held.reply.input_tokens, held.reply.output_tokens) == (7, 3)
    assert isinstance(held.parsed, ParsedVerdict) and held.parsed.verdict == "pass"
    assert len(held.parsed.reasoning.encode()) <= 16 * 1024  # the reply's 3 MB let go


@given(st.lists(st.tuples(st.sampled_from(["k0", "k1", "k2", "k3", "other"]),
                          st.sampled_from(["reply", "error", "torn", "too large", "anonymous"])),
                max_size=12))
def test_every_request_gets_exactly_one_outcome_and_only_a_lone_result_is_used(
        lines: list[tuple[str, str]]) -> None:
    from introspection_cli.evaluation.batch.interface import UnreadableLine
    from introspection_cli.evaluation.batch.reconcile import Reconciler
    from introspection_cli.evaluation.providers.interface import (
        ModelReply,
        ProviderServiceError,
    )

    keys = frozenset({"k0", "k1", "k2", "k3"})
    reconciler: Reconciler[object] = Reconciler("batch_1", keys, lambda result: result)
    named: dict[str, list[str]] = {}
    for key, kind in lines:
        if kind in ("torn", "too large", "anonymous"):
            custom_id = None if kind == "anonymous" else key
            reconciler.add(UnreadableLine("torn" if kind == "anonymous" else kind, custom_id))
        else:
            result = (ModelReply(f"args of {key}", None) if kind == "reply"
                      else ProviderServiceError(f"failed {key}"))
            reconciler.add((key, result))
        if kind != "anonymous" and key in keys:
            named.setdefault(key, []).append(kind)
    outcomes = dict(reconciler.outcomes("no result"))
    assert outcomes.keys() == keys
    for key in keys:
        kinds = named.get(key, [])
        if kinds == ["reply"]:
            assert outcomes[key] == ModelReply(f"args of {key}", None)
        elif kinds == ["error"]:
            assert str(outcomes[key]) == f"failed {key}"
        else:
            assert isinstance(outcomes[key], ProviderServiceError)
            if len(kinds) > 1:
                assert f"returned {len(kinds)} results for this request" in str(outcomes[key])
    summary = reconciler.reconciliation()
    lone = sum(1 for key in keys if named.get(key) in (["reply"], ["error"]))
    assert summary.results == lone
    assert summary.results + summary.duplicated + summary.missing + summary.unreadable == 4
    assert summary.duplicated == sum(1 for key in keys if len(named.get(key, [])) > 1)
    assert summary.unknown == sum(1 for key, kind in lines
                                  if key == "other" and kind in ("reply", "error"))
