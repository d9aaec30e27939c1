"""The user's price table: parsed strictly, and turning usage into US dollars in every report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from introspection_cli.errors import ConfigError
from introspection_cli.pricing import ModelPrice, PriceTable, load_prices, parse_prices
from tests.conftest import run_cli
from tests.evaluation.conftest import GATED_JUDGE, SENTINEL_KEY, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer
from tests.hostile.harness import run_cli_measured

TABLE = b"""
["gpt-test"]
input = 2.0
cached_input = 0.5
output = 8.0
batch_discount = 0.5

["anthropic/claude-test"]
input = 3.0
cached_input = 0.3
output = 15.0
cache_write = 3.75
"""


def test_usage_becomes_dollars_per_million_tokens() -> None:
    price = ModelPrice(input=2.0, cached_input=0.5, output=8.0, batch_discount=0.5)
    usage = {"input_tokens": 1_000_000, "cached_input_tokens": 400_000, "output_tokens": 100_000}
    assert price.cost(usage) == pytest.approx(0.6 * 2.0 + 0.4 * 0.5 + 0.1 * 8.0)
    assert price.cost(usage, batch=True) == pytest.approx((1.2 + 0.2 + 0.8) / 2)


def test_cache_writes_have_their_own_price_else_the_input_price() -> None:
    usage = {"input_tokens": 300, "cached_input_tokens": 100, "cache_write_tokens": 100,
             "output_tokens": 0}
    assert ModelPrice(1e6, 0, 0, cache_write=4e6).cost(usage) == pytest.approx(100 + 400)
    assert ModelPrice(1e6, 0, 0).cost(usage) == pytest.approx(100 + 100)


def test_a_provider_qualified_name_wins_over_a_plain_one() -> None:
    table = PriceTable(parse_prices(TABLE + b'\n["claude-test"]\ninput = 99\ncached_input = 99'
                                    b'\noutput = 99\n', Path("p.toml")))
    assert table.price_of("anthropic", "claude-test") == ModelPrice(3.0, 0.3, 15.0, 0.0, 3.75)
    assert table.price_of("openai", "claude-test") == ModelPrice(99, 99, 99)
    assert table.cost("openai", "unknown", {"input_tokens": 5}) is None


@pytest.mark.parametrize(("text", "message"), [
    (b"not = [toml", "not a TOML price table"),
    (b'model = 3', "is not a table of prices"),
    (b'["m"]\ninput = 1\noutput = 1', "has no cached_input"),
    (b'["m"]\ninput = -1\ncached_input = 1\noutput = 1', "input = -1 is not a price"),
    (b'["m"]\ninput = "1"\ncached_input = 1\noutput = 1', "is not a price"),
    (b'["m"]\ninput = nan\ncached_input = 1\noutput = 1', "is not a price"),
    (b'["m"]\ninput = 1\ncached_input = 1\noutput = 1\nbatch_discount = 2', "from 0 to 1"),
    (b'["m"]\ninput = 1\ncached_input = 1\noutput = 1\noutptu = 2', "unknown key(s) outptu"),
])
def test_a_bad_table_names_the_file_and_what_to_fix(text: bytes, message: str) -> None:
    with pytest.raises(ConfigError, match=r"p\.toml") as caught:
        parse_prices(text, Path("p.toml"))
    assert message in str(caught.value)


def test_the_table_is_found_in_the_config_dir_or_named(tmp_path: Path) -> None:
    assert load_prices({}, tmp_path).prices == {}  # none: reports show tokens only
    (tmp_path / "prices.toml").write_bytes(TABLE)
    assert set(load_prices({}, tmp_path).prices) == {"gpt-test", "anthropic/claude-test"}
    elsewhere = tmp_path / "mine.toml"
    elsewhere.write_bytes(b'["x"]\ninput = 1\ncached_input = 1\noutput = 1\n')
    assert set(load_prices({"INTROSPECTION_PRICES": str(elsewhere)}, tmp_path).prices) == {"x"}
    with pytest.raises(ConfigError, match=r"INTROSPECTION_PRICES=.*no such file"):
        load_prices({"INTROSPECTION_PRICES": str(tmp_path / "missing.toml")}, tmp_path)


def eval_json(tmp_path: Path, server: StubModelServer, *args: str,
              **env: str) -> tuple[int, dict[str, object], str]:
    rows = [fixture_row(f"conv_{i}", f"refund {i} VERDICT:pass") for i in range(3)]
    root = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)})
    result = run_cli(["judges", "eval", str(root), "--no-cache", *args], env={
        "OPENAI_BASE_URL": server.openai_url, "OPENAI_API_KEY": SENTINEL_KEY,
        "INTROSPECTION_CONFIG_DIR": str(tmp_path / "config"), **env})
    report = json.loads(result.stdout) if "--format" in args else {}
    return result.returncode, report, result.stdout + result.stderr


def test_the_report_costs_the_run_from_the_table(tmp_path: Path) -> None:
    table = tmp_path / "prices.toml"
    table.write_bytes(b'["stub-model"]\ninput = 2.0\ncached_input = 0.5\noutput = 10.0\n')
    with StubModelServer(cached_tokens=40) as server:
        code, report, _ = eval_json(tmp_path, server, "--format", "json",
                                    INTROSPECTION_PRICES=str(table))
        _, _, text = eval_json(tmp_path / "text", server, INTROSPECTION_PRICES=str(table))
    assert code == 0
    usage = report["usage"]
    assert isinstance(usage, dict)
    # 3 calls: 100 input tokens (40 of them cached) and 20 output tokens each.
    assert (usage["input_tokens"], usage["cached_input_tokens"]) == (300, 120)
    assert usage["cost"] == pytest.approx((180 * 2.0 + 120 * 0.5 + 60 * 10.0) / 1e6)
    assert "(120 from the prompt cache)" in text and "$0.0010" in text


def test_without_a_table_the_report_shows_tokens_only(tmp_path: Path) -> None:
    with StubModelServer() as server:
        code, report, _ = eval_json(tmp_path, server, "--format", "json")
    usage = report["usage"]
    assert isinstance(usage, dict)
    assert code == 0 and usage["cost"] is None and usage["input_tokens"] == 300
    assert (usage["rate_limited"], usage["concurrency"]) == (0, 8)


def test_a_broken_table_stops_the_run_before_any_call(tmp_path: Path) -> None:
    table = tmp_path / "prices.toml"
    table.write_bytes(b'["stub-model"]\ninput = 2.0\n')
    with StubModelServer() as server:
        code, _, text = eval_json(tmp_path, server, INTROSPECTION_PRICES=str(table))
        assert server.requests == []
    assert code == 2 and "has no cached_input, output" in text


def _table(tmp_path: Path, body: bytes) -> Path:
    path = tmp_path / "prices.toml"
    path.write_bytes(body)
    return path


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "directory"])
def test_only_a_regular_file_is_read_as_a_price_table(tmp_path: Path, special: str) -> None:
    # In a child with a hang guard and a memory cap: /dev/zero read to the end exhausts
    # memory, and a FIFO nobody writes to blocks its reader forever.
    path = Path(special)
    if special == "fifo":
        path = tmp_path / "prices.fifo"
        os.mkfifo(path)
    elif special == "directory":
        path = tmp_path
    rows = [fixture_row(f"conv_{i}", f"refund {i} VERDICT:pass") for i in range(2)]
    root = write_recipe(tmp_path / "recipe", {"billing": (GATED_JUDGE, rows)})
    outcome = run_cli_measured(["judges", "eval", str(root), "--dry-run", "--no-cache"],
                               tmp_path, extra_env={"INTROSPECTION_PRICES": str(path),
                                                    "INTROSPECTION_CONFIG_DIR": str(tmp_path)})
    assert outcome.returncode == 2, (outcome.returncode, outcome.stderr)
    assert f"{path}" in outcome.stderr and "not a regular file" in outcome.stderr
    assert outcome.peak_mb < 200


def test_a_price_table_over_1_mib_is_refused(tmp_path: Path) -> None:
    path = _table(tmp_path, b'["m"]\ninput = 1\ncached_input = 1\noutput = 1\n'
                  + b"# padding\n" * 110_000)
    with pytest.raises(ConfigError, match=r"larger than 1 MiB") as caught:
        load_prices({"INTROSPECTION_PRICES": str(path)}, tmp_path / "config")
    assert str(path) in str(caught.value)
    just_under = _table(tmp_path, b'["m"]\ninput = 1\ncached_input = 1\noutput = 1\n'
                        + b"#" * (1024 * 1024 - 60))
    assert set(load_prices({"INTROSPECTION_PRICES": str(just_under)}, tmp_path).prices) == {"m"}


@pytest.mark.parametrize("value", ["1" + "0" * 400, "1e400", "1e308", "1000000.5", "-0.5",
                                   "inf", "-inf"])
def test_a_price_must_be_finite_at_least_0_and_at_most_a_million(value: str) -> None:
    text = f'["gpt-x"]\ninput = 1\ncached_input = {value}\noutput = 1\n'.encode()
    with pytest.raises(ConfigError) as caught:
        parse_prices(text, Path("p.toml"))
    message = str(caught.value)
    assert "p.toml" in message and "['gpt-x'] cached_input" in message
    assert "0 to 1,000,000" in message


def test_the_price_bounds_themselves_are_prices() -> None:
    text = b'["m"]\ninput = 1000000\ncached_input = 0\noutput = 1e6\n'
    assert parse_prices(text, Path("p.toml"))["m"] == ModelPrice(1e6, 0.0, 1e6)


@pytest.mark.parametrize("tokens", [10**303, 10**400])
def test_a_cost_that_overflows_is_an_error_never_null(tokens: int) -> None:
    table = PriceTable({"m": ModelPrice(1e6, 1e6, 1e6)}, Path("p.toml"))
    with pytest.raises(ConfigError, match=r"cost of model m .*too large") as caught:
        table.cost("openai", "m", {"input_tokens": 10, "output_tokens": tokens})
    assert "p.toml" in str(caught.value)


def test_the_largest_prices_cost_a_real_run_finitely(tmp_path: Path) -> None:
    table = _table(tmp_path, b'["stub-model"]\ninput = 1e6\ncached_input = 1e6\n'
                   b'output = 1e6\n')
    with StubModelServer() as server:
        code, report, _ = eval_json(tmp_path, server, "--format", "json",
                                    INTROSPECTION_PRICES=str(table))
    usage = report["usage"]
    assert isinstance(usage, dict)
    assert code == 0 and usage["cost"] == pytest.approx(360.0)  # 360 tokens at $1 each


def test_the_price_checks_are_errors_of_the_cli_not_crashes(tmp_path: Path) -> None:
    table = _table(tmp_path, b'["stub-model"]\ninput = 1' + b"0" * 400
                   + b'\ncached_input = 1\noutput = 1\n')
    with StubModelServer() as server:
        code, _, text = eval_json(tmp_path, server, INTROSPECTION_PRICES=str(table))
        assert server.requests == []
    assert code == 2 and "internal error" not in text
    assert "['stub-model'] input" in text
