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

The table is read within bounds: a regular file only (never a FIFO or a
device), at most 1 MiB, every price a finite number from 0 to 10^6 US dollars
per million tokens. A cost too large for a float is a :class:`ConfigError`,
never a null or infinite figure in a report.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from introspection_cli.errors import ConfigError

PRICES_ENV = "INTROSPECTION_PRICES"
PRICES_FILE = "prices.toml"
_PER_TOKEN = 1e-6  # prices are per million tokens
#: The dearest price accepted: 10^6 US dollars per million tokens (a dollar a token).
MAX_PRICE = 1_000_000
#: The largest price table read.
MAX_TABLE_BYTES = 1024 * 1024
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
        """What ``usage`` (a report's usage counts) cost, in US dollars.

        Raises :class:`CostOverflow` when the cost is too large for a float.
        """
        cached = usage.get("cached_input_tokens", 0)
        written = usage.get("cache_write_tokens", 0)
        fresh = max(0, usage.get("input_tokens", 0) - cached - written)
        try:  # a token count beyond a float's range cannot become one
            total = (fresh * self.input + cached * self.cached_input
                     + written * (self.input if self.cache_write is None else self.cache_write)
                     + usage.get("output_tokens", 0) * self.output) * _PER_TOKEN
        except OverflowError:
            raise CostOverflow() from None
        return finite_cost(total * (1.0 - self.batch_discount) if batch else total)


class CostOverflow(ConfigError):
    """A cost too large for a float (tokens, or a sum of costs, beyond any real run)."""

    def __init__(self, what: str = "a cost") -> None:
        super().__init__(f"{what} is too large to compute (it overflows a float); the usage "
                         "or the prices are not those of a real run")


def finite_cost(value: float, what: str = "a cost") -> float:
    """``value``, checked finite: a sum of costs that overflowed is :class:`CostOverflow`."""
    if not math.isfinite(value):
        raise CostOverflow(what)
    return value


@dataclass(frozen=True)
class PriceTable:
    """Prices by ``provider/model`` or ``model``; where they were read from."""

    prices: Mapping[str, ModelPrice]
    source: Path | None = None

    def price_of(self, provider: str, model: str) -> ModelPrice | None:
        return self.prices.get(f"{provider}/{model}") or self.prices.get(model)

    def cost(self, provider: str, model: str, usage: Mapping[str, int], *,
             batch: bool = False) -> float | None:
        """What ``usage`` cost with ``model``; ``None`` when the table has no price for it.

        Raises :class:`CostOverflow` naming the model and the table when it overflows.
        """
        price = self.price_of(provider, model)
        if price is None:
            return None
        try:
            return price.cost(usage, batch=batch)
        except CostOverflow:
            where = f" with the prices in {self.source}" if self.source else ""
            raise CostOverflow(f"the cost of model {model}{where}") from None


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
    from introspection_cli.localfiles import FileTooLarge, NotARegularFile, read_file

    try:
        data = read_file(path, limit=MAX_TABLE_BYTES)  # never blocks on a FIFO or a device
    except FileNotFoundError:
        if named:
            raise ConfigError(f"{PRICES_ENV}={path}: no such file; point it at a price "
                              "table (see docs/eval.md) or unset it") from None
        return PriceTable({})
    except NotARegularFile as exc:
        raise ConfigError(f"the price table {path} is {exc.kind}, not a regular file; point "
                          f"{PRICES_ENV} at a TOML file") from None
    except FileTooLarge:
        raise ConfigError(f"the price table {path} is larger than {MAX_TABLE_BYTES >> 20} "
                          "MiB; is it the right file?") from None
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


def _is_price(value: object) -> TypeGuard[int | float]:
    """A finite number from 0 to :data:`MAX_PRICE` (an integer of any size is compared as
    one: 10**400 is refused, not turned into a float that overflows)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return (isinstance(value, int) or math.isfinite(value)) and 0 <= value <= MAX_PRICE


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
        if not _is_price(value):
            shown = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:30]}..."
            raise ConfigError(f"{path}: [{model!r}] {name} = {shown} is not a price (a "
                              f"number of US dollars per million tokens, 0 to {MAX_PRICE:,})")
        values[name] = float(value)
    missing = [name for name in ("input", "cached_input", "output") if name not in values]
    if missing:
        raise ConfigError(f"{path}: [{model!r}] has no {', '.join(missing)}")
    if values.get("batch_discount", 0.0) > 1:
        raise ConfigError(f"{path}: [{model!r}] batch_discount is the share taken off with "
                          "--batch, from 0 to 1 (0.5: half price)")
    return ModelPrice(**values)
