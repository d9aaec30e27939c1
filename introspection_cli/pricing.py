"""The user's price table: what a model's tokens cost, turning a run's usage into money.

The table is TOML, kept by the user (prices change, and differ by contract), at
``$INTROSPECTION_PRICES`` or ``prices.toml`` in the config directory. One table
per model, prices in US dollars per million tokens::

    ["gpt-5.6-luna"]
    input = 1.25           # uncached input tokens
    cached_input = 0.125   # input tokens read from the provider's prompt cache
    output = 10.0
    batch_discount = 0.5   # the share taken off with --batch (0.5: half price)
    cache_write = 1.5625   # optional: input tokens written to the prompt cache
                           # (Anthropic); default the input price

A table may be named ``"provider/model"`` to price one provider's model only;
that wins over a plain model name. Without a table, reports show tokens only.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from introspection_cli.errors import ConfigError

PRICES_ENV = "INTROSPECTION_PRICES"
PRICES_FILE = "prices.toml"
_PER_TOKEN = 1e-6  # prices are per million tokens
_FIELDS = ("input", "cached_input", "output", "batch_discount", "cache_write")


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """US dollars per million tokens of each kind; ``batch_discount`` is a share (0-1)."""

    input: float
    cached_input: float
    output: float
    batch_discount: float = 0.0
    cache_write: float | None = None

    def cost(self, usage: Mapping[str, int], *, batch: bool = False) -> float:
        """What ``usage`` (a report's usage counts) cost, in US dollars."""
        cached = usage.get("cached_input_tokens", 0)
        written = usage.get("cache_write_tokens", 0)
        fresh = max(0, usage.get("input_tokens", 0) - cached - written)
        total = (fresh * self.input + cached * self.cached_input
                 + written * (self.input if self.cache_write is None else self.cache_write)
                 + usage.get("output_tokens", 0) * self.output) * _PER_TOKEN
        return total * (1.0 - self.batch_discount) if batch else total


@dataclass(frozen=True)
class PriceTable:
    """Prices by ``provider/model`` or ``model``; where they were read from."""

    prices: Mapping[str, ModelPrice]
    source: Path | None = None

    def price_of(self, provider: str, model: str) -> ModelPrice | None:
        return self.prices.get(f"{provider}/{model}") or self.prices.get(model)

    def cost(self, provider: str, model: str, usage: Mapping[str, int], *,
             batch: bool = False) -> float | None:
        """What ``usage`` cost with ``model``; ``None`` when the table has no price for it."""
        price = self.price_of(provider, model)
        return None if price is None else price.cost(usage, batch=batch)


def prices_path(environ: Mapping[str, str], config_dir: Path) -> tuple[Path, bool]:
    """Where the table is, and whether the user named it (then it must exist)."""
    named = environ.get(PRICES_ENV, "").strip()
    if named:
        return Path(named).expanduser(), True
    return config_dir / PRICES_FILE, False


def load_prices(environ: Mapping[str, str] | None = None,
                config_dir: Path | None = None) -> PriceTable:
    """The user's price table; an empty one when there is none. A table that cannot be
    read or is malformed is a :class:`ConfigError` naming the file and what to fix."""
    env = os.environ if environ is None else environ
    if config_dir is None:
        from introspection_cli.config_dir import config_dir as default_config_dir

        config_dir = default_config_dir(env)
    path, named = prices_path(env, config_dir)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if named:
            raise ConfigError(f"{PRICES_ENV}={path}: no such file; point it at a price "
                              "table (see docs/eval.md) or unset it") from None
        return PriceTable({})
    except OSError as exc:
        raise ConfigError(f"cannot read the price table {path} "
                          f"({exc.strerror or type(exc).__name__})") from None
    return PriceTable(parse_prices(data, path), path)


def parse_prices(data: bytes, path: Path) -> dict[str, ModelPrice]:
    """The models of a TOML price table, checked."""
    import tomllib  # here: a run without a price table never parses TOML

    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not a TOML price table ({exc})") from None
    prices: dict[str, ModelPrice] = {}
    for model, table in document.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: {model!r} is not a table of prices; write "
                              f"[\"{model}\"] with input, cached_input and output below it")
        prices[model] = _model_price(table, model, path)
    return prices


def _model_price(table: Mapping[str, object], model: str, path: Path) -> ModelPrice:
    unknown = sorted(set(table) - set(_FIELDS))
    if unknown:
        raise ConfigError(f"{path}: [{model!r}] has unknown key(s) {', '.join(unknown)}; "
                          f"the keys are {', '.join(_FIELDS)}")
    values: dict[str, float] = {}
    for name in _FIELDS:
        value = table.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(value) or value < 0:
            raise ConfigError(f"{path}: [{model!r}] {name} = {value!r} is not a price (a "
                              "number of US dollars per million tokens, 0 or more)")
        values[name] = float(value)
    missing = [name for name in ("input", "cached_input", "output") if name not in values]
    if missing:
        raise ConfigError(f"{path}: [{model!r}] has no {', '.join(missing)}")
    if values.get("batch_discount", 0.0) > 1:
        raise ConfigError(f"{path}: [{model!r}] batch_discount is the share taken off with "
                          "--batch, from 0 to 1 (0.5: half price)")
    return ModelPrice(**values)
