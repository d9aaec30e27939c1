"""Accounting for every request of an ended batch: exactly one result each, or an error.

Nothing in a batch's results is trusted to match the batch: a request may come
back twice (the same result, or another), not at all, or on a torn line, and
lines may name requests the batch does not hold. A :class:`Reconciler` reads
every line before any result is used; then each request of the batch gets one
outcome: its result when exactly one readable line named it, else an error
saying which of those it was. So no copy of a duplicated result wins, whichever
comes first. What did not match is counted in a :class:`Reconciliation`, for the
batch's summary line and a warning.

Until the end only what ``hold`` keeps of each result is held (the sink keeps a
reply's verdict and tokens, not its text), so memory follows the number of
requests, not the size of their results.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from introspection_cli.evaluation.batch.interface import (
    ItemResult,
    ResultLine,
    UnreadableLine,
    provider_text,
)
from introspection_cli.evaluation.batch.jsonl import MAX_LINE_BYTES
from introspection_cli.evaluation.providers.interface import (
    ProviderError,
    ProviderServiceError,
)

Held = TypeVar("Held")
#: Lines naming requests the batch does not hold: how many of their ids are named.
_EXAMPLES = 3


@dataclass(frozen=True, slots=True)
class Reconciliation:
    """How an ended batch's results matched its requests (counts of requests or lines)."""

    requests: int
    #: Requests with exactly one readable result (that result is theirs).
    results: int
    #: Requests whose outcome is an error: their one result is one, or none is usable.
    failed: int
    #: Requests named by more than one line.
    duplicated: int = 0
    #: Requests no line named, and requests named only by a line that is no result.
    missing: int = 0
    unreadable: int = 0
    #: Lines that are no result, by problem (``torn``, ``too large``, ``unnamed``).
    torn: int = 0
    too_large: int = 0
    unnamed: int = 0
    #: Lines naming a request the batch does not hold, and the first few ids they name.
    unknown: int = 0
    unknown_ids: tuple[str, ...] = ()

    @property
    def affected(self) -> int:
        """Requests the mismatch made errors (not counting a result that is an error)."""
        return self.duplicated + self.missing + self.unreadable

    def problems(self) -> list[str]:
        """Each kind of mismatch in a few words (empty when the results match)."""
        found = []
        if self.duplicated:
            found.append(f"{_count(self.duplicated, 'request')} had more than one result")
        if self.missing:
            found.append(f"{_count(self.missing, 'request')} had no result")
        for number, what, rest in ((self.torn, "torn result line", ""),
                                   (self.too_large, "result line", f" over {_CAP}"),
                                   (self.unnamed, "result line", " naming no request")):
            if number:
                found.append(_count(number, what) + rest)
        if self.unknown:
            named = ", ".join(repr(name) for name in self.unknown_ids)
            more = ", ..." if self.unknown > len(self.unknown_ids) else ""
            found.append(f"{_count(self.unknown, 'result line')} name requests the batch "
                         f"does not hold ({named}{more})")
        return found


class Reconciler(Generic[Held]):
    """Reads the lines of one ended batch, then gives each of its requests one outcome."""

    def __init__(self, batch_id: str, keys: Collection[str],
                 hold: Callable[[ItemResult], Held]) -> None:
        self._batch_id = batch_id
        self._keys = keys
        self._hold = hold
        self._first: dict[str, Held | UnreadableLine] = {}
        self._copies: Counter[str] = Counter()
        self._differ: set[str] = set()
        self._problems: Counter[str] = Counter()
        self._anonymous = 0  # unreadable lines that name none of the batch's requests
        self._unknown = 0
        self._unknown_ids: list[str] = []

    def add(self, line: ResultLine) -> None:
        """Account for one line of the batch's results."""
        if isinstance(line, UnreadableLine):
            self._problems[line.problem] += 1
            if line.custom_id is not None and line.custom_id in self._keys:
                self._note(line.custom_id, line)
            else:
                self._anonymous += 1
            return
        key, result = line
        if key in self._keys:
            self._note(key, self._hold(result))
            return
        self._unknown += 1
        if len(self._unknown_ids) < _EXAMPLES:
            self._unknown_ids.append(provider_text(key[:64]))

    def _note(self, key: str, value: Held | UnreadableLine) -> None:
        if key in self._first:
            if not _same(self._first[key], value):
                self._differ.add(key)
        else:
            self._first[key] = value
        self._copies[key] += 1

    def outcomes(self, missing_reason: str) -> Iterator[tuple[str, Held | ProviderError]]:
        """Every request's outcome, once every line is read; ``missing_reason`` says why
        a request no line named has no result."""
        for key in self._keys:
            copies = self._copies[key]
            if copies > 1:
                yield key, ProviderServiceError(self._duplicated(key, copies))
            elif copies == 0:
                yield key, ProviderServiceError(self._missing(missing_reason))
            else:
                value = self._first[key]
                yield key, (ProviderServiceError(self._unreadable(value))
                            if isinstance(value, UnreadableLine) else value)

    def reconciliation(self) -> Reconciliation:
        """What the lines read so far say about the batch, in counts."""
        single = [value for key, value in self._first.items() if self._copies[key] == 1]
        unreadable = sum(1 for value in single if isinstance(value, UnreadableLine))
        errors = sum(1 for value in single if isinstance(value, ProviderError))
        requests, results = len(self._keys), len(single) - unreadable
        return Reconciliation(
            requests, results, requests - results + errors,
            duplicated=len(self._first) - len(single), missing=requests - len(self._first),
            unreadable=unreadable, torn=self._problems["torn"],
            too_large=self._problems["too large"], unnamed=self._problems["unnamed"],
            unknown=self._unknown, unknown_ids=tuple(self._unknown_ids))

    def _duplicated(self, key: str, copies: int) -> str:
        agree = ("they differ" if key in self._differ
                 else "the same result twice" if copies == 2
                 else f"the same result {copies} times")
        return (f"batch {self._batch_id} returned {copies} results for this request "
                f"({agree}); none is used, as which one is right cannot be told")

    def _missing(self, reason: str) -> str:
        if not self._anonymous:
            return reason
        lines = _count(self._anonymous, "result line")
        return (f"{reason}; {lines} could not be read (torn, over {_CAP} or naming no "
                "request) and may have held it")

    def _unreadable(self, line: UnreadableLine) -> str:
        what = ("is torn (not a whole JSON object)" if line.problem == "torn"
                else f"is larger than {_CAP}, so it was skipped")
        return f"batch {self._batch_id}: the result line for this request {what}"


#: The line cap as people say it: a 4 MiB reply, and room for its envelope.
_CAP = f"{MAX_LINE_BYTES // 2**20} MiB"


def _same(first: object, other: object) -> bool:
    """Whether two copies of a result say the same (errors: the same kind and message)."""
    if isinstance(first, ProviderError) or isinstance(other, ProviderError):
        return type(first) is type(other) and str(first) == str(other)
    return first == other


def _count(number: int, what: str) -> str:
    return f"{number} {what}" if number == 1 else f"{number} {what}s"
