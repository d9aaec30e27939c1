"""``judges eval --dry-run``: the requests a run would make, their tokens and cost; none made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.evaluation.conftest import GATED_JUDGE, SENTINEL_KEY, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer

PRICES = b'["stub-model"]\ninput = 2.0\ncached_input = 0.5\noutput = 10.0\nbatch_discount = 0.5\n'


def recipe(tmp_path: Path) -> Path:
    rows = [fixture_row("conv_a", "refund VERDICT:pass"),
            fixture_row("conv_b", "invoice VERDICT:fail"),
            fixture_row("conv_c", "nothing about money", expected="not_applicable")]
    return write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)})


def dry(tmp_path: Path, server: StubModelServer, *args: str, key: bool = True,
        **env: str) -> tuple[int, str, str]:
    base = {"OPENAI_BASE_URL": server.openai_url, "INTROSPECTION_CACHE_DIR": str(tmp_path / "c"),
            "INTROSPECTION_CONFIG_DIR": str(tmp_path / "config"), **env}
    if key:
        base["OPENAI_API_KEY"] = SENTINEL_KEY
    result = run_cli(["judges", "eval", str(recipe(tmp_path)), "--dry-run", *args], env=base)
    return result.returncode, result.stdout, result.stderr


def test_a_dry_run_lists_the_requests_and_makes_none(tmp_path: Path) -> None:
    table = tmp_path / "prices.toml"
    table.write_bytes(PRICES)
    with StubModelServer() as server:
        code, out, err = dry(tmp_path, server, "--format", "json", "--samples", "2", key=False,
                             INTROSPECTION_PRICES=str(table))
        assert server.requests == []  # no call, and no API key needed
    assert code == 0, err
    body = json.loads(out)
    assert body["gated"] == 1 and body["cached"] == 0
    assert [(r["line"], r["conversation_id"], r["sample"]) for r in body["requests"]] == [
        (1, "conv_a", 0), (1, "conv_a", 1), (2, "conv_b", 0), (2, "conv_b", 1)]
    (group,) = body["by_judge"]
    assert (group["judge"], group["model"], group["requests"]) == ("billing", "stub-model", 4)
    assert group["output_tokens"] == 4 * 250
    assert group["input_tokens"] == sum(r["input_tokens"] for r in body["requests"]) > 4 * 200
    assert group["cost"] == pytest.approx(
        (group["input_tokens"] * 2.0 + group["output_tokens"] * 10.0) / 1e6)
    assert body["totals"]["cost"] == group["cost"]


def test_a_dry_run_leaves_out_what_the_cache_answers(tmp_path: Path) -> None:
    with StubModelServer() as server:
        env = {"OPENAI_BASE_URL": server.openai_url, "OPENAI_API_KEY": SENTINEL_KEY,
               "INTROSPECTION_CACHE_DIR": str(tmp_path / "c")}
        assert run_cli(["judges", "eval", str(recipe(tmp_path))], env=env).returncode == 0
        served = len(server.requests)
        code, out, _ = dry(tmp_path / "again", server, "--format", "json",
                           INTROSPECTION_CACHE_DIR=str(tmp_path / "c"))
        assert len(server.requests) == served
    body = json.loads(out)
    assert code == 0 and body["requests"] == [] and body["cached"] == 2


def test_the_text_dry_run_is_a_table_with_the_batch_price(tmp_path: Path) -> None:
    table = tmp_path / "prices.toml"
    table.write_bytes(PRICES)
    with StubModelServer() as server:
        _, full, _ = dry(tmp_path / "a", server, INTROSPECTION_PRICES=str(table))
        _, batch, _ = dry(tmp_path / "b", server, "--batch", INTROSPECTION_PRICES=str(table))
        assert server.requests == []
    assert full.startswith("dry run: these requests would be made; none was\n")
    assert "billing" in full and "stub-model" in full and "total" in full
    assert batch.startswith("dry run (--batch)")
    full_cost = float(full.split("$")[-1].split()[0])
    batch_cost = float(batch.split("$")[-1].split()[0])
    assert batch_cost == pytest.approx(full_cost / 2, abs=1e-4)
