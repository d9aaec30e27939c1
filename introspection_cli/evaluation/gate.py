"""Gate evaluation (SPEC §1.1): does a gated judge apply to a conversation, and why.

A gated judge applies when **any** matcher matches **any** event; a matcher
matches an event when the type is equal and **every** field matches. Regex
matching has a time limit, and a timeout is reported (:class:`GateTimeout`),
never treated as a silent miss. (A search that cannot take long, an alternation of
literals on a value of modest length, runs without one: the limit itself costs
about a microsecond a search, and ``judges status`` runs the gate on every row.)
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from introspection_cli.fixture.canonical import CanonicalizationError
from introspection_cli.fixture.canonical import canonical_json as canonical_bytes
from introspection_cli.recipe.model import REGEX_FLAG_NAMES, Matcher
from introspection_cli.recipe.regex_cost import expanded_size
from introspection_cli.recipe.regex_literal import MAX_COST

#: Seconds one regex search may take on one event value before the row is an error.
DEFAULT_REGEX_TIMEOUT = 1.0

_MISSING = object()


@dataclass(frozen=True, slots=True)
class GateMatch:
    """One event a matcher matched: shown to the model as the reason the judge runs."""

    event_index: int  # 0-based position in judge_input.events
    event_type: str
    matcher_index: int  # 0-based position in the judge's `on` list
    matcher_line: int | None


@dataclass(frozen=True, slots=True)
class GateResult:
    applies: bool
    matches: tuple[GateMatch, ...] = ()


class GateTimeout(Exception):
    """A regex ran past its time limit on an event value."""

    def __init__(self, pattern: str, event_index: int, field: str) -> None:
        super().__init__(
            f"gate regex /{pattern}/ timed out on event {event_index + 1} field {field!r}")
        self.pattern = pattern
        self.event_index = event_index
        self.field = field


UNGATED = GateResult(applies=True)


def evaluate_gate(gate: Sequence[Matcher] | None, events: Sequence[Mapping[str, Any]], *,
                  timeout: float = DEFAULT_REGEX_TIMEOUT) -> GateResult:
    """Every (event, matcher) pair that matches; ``applies`` when there is at least one.

    Raises :class:`GateTimeout` when any regex search runs out of time, even if
    another matcher matched: the row's gate decision is then unknown.
    """
    if gate is None:
        return UNGATED
    return _compiled_gate(gate).evaluate(events, timeout)


def compile_gate(gate: Sequence[Matcher]) -> CompiledGate:
    """``gate`` compiled once, for a caller that asks it about many rows in a loop
    (``.applies(events, timeout)`` is :func:`gate_applies` without the lookup)."""
    return _compiled_gate(gate)


def gate_applies(gate: Sequence[Matcher] | None, events: Sequence[Mapping[str, Any]], *,
                 timeout: float = DEFAULT_REGEX_TIMEOUT) -> bool:
    """Whether any matcher matches any event, stopping at the first match (``judges status``
    counts gate misses and needs no list of matches).

    Raises :class:`GateTimeout` when a regex runs out of time before anything matched:
    the answer is then unknown. (A row that matched and would time out on a later
    event is a match here; :func:`evaluate_gate`, which lists every match, reports it as
    a timeout.)
    """
    if gate is None:
        return True
    return _compiled_gate(gate).applies(events, timeout)


#: An exact field of a matcher: its name and its text.
_ExactField = tuple[str, str]
#: A ``/regex/`` field: its name, the compiled pattern, the answers it gave for short
#: values, the longest value it searches without a time limit (:func:`_untimed_length`),
#: and, for an alternation of literals, the literals (:func:`_literals`).
_SearchedField = tuple[str, Any, dict[str, bool], int, "_Literals | None"]
#: Per matcher: its index, its line, its exact fields and its regex fields.
_CompiledMatcher = tuple[int, int | None, tuple[_ExactField, ...], tuple[_SearchedField, ...]]

#: Values of up to this many characters have their search answer remembered (tool names,
#: statuses, canned replies recur on every row); at most this many per field, then the
#: memory starts afresh, so it stays a few hundred KB.
_REMEMBERED_LENGTH = 256
_REMEMBERED_VALUES = 2048


class CompiledGate:
    """A gate's matchers grouped by event type, patterns compiled: the per-event work is a
    dict lookup and the field comparisons.

    A matcher needs every field, so comparing the exact fields before searching the
    regex ones changes no answer; it only saves the searches of a matcher already
    missed (``name: /lookup_.*/`` with ``status: error`` on an event whose status is
    ``ok``). A search that runs out of time is never remembered: it raises every time.
    """

    def __init__(self, gate: Sequence[Matcher]) -> None:
        self.by_type: dict[str, list[_CompiledMatcher]] = {}
        for index, matcher in enumerate(gate):
            exact = tuple((name, value.raw) for name, value in matcher.fields.items()
                          if value.pattern is None)
            searched: tuple[_SearchedField, ...] = tuple(
                (name, _compile(value.pattern, value.flags), {}, _untimed_length(value.pattern),
                 _literals(value.pattern, value.flags))
                for name, value in matcher.fields.items() if value.pattern is not None)
            self.by_type.setdefault(matcher.event, []).append((index, matcher.line, exact,
                                                               searched))

    def evaluate(self, events: Sequence[Mapping[str, Any]], timeout: float) -> GateResult:
        matches: list[GateMatch] = []
        for event_index, event in enumerate(events):
            kind = event.get("type")
            if not isinstance(kind, str):
                continue
            # Unknown event types equal no matcher's type, so they never match.
            candidates = self.by_type.get(kind)
            if not candidates:
                continue
            for matcher_index, line, exact, searched in candidates:
                if _fields_match(exact, searched, event, event_index, timeout):
                    matches.append(GateMatch(event_index, kind, matcher_index, line))
        return GateResult(applies=bool(matches), matches=tuple(matches))

    def applies(self, events: Sequence[Mapping[str, Any]], timeout: float) -> bool:
        by_type = self.by_type
        for event_index, event in enumerate(events):
            kind = event.get("type")
            candidates = by_type.get(kind) if isinstance(kind, str) else None
            for _, _, exact, searched in candidates or ():
                if _fields_match(exact, searched, event, event_index, timeout):
                    return True
        return False


def _fields_match(exact: tuple[_ExactField, ...], searched: tuple[_SearchedField, ...],
                  event: Mapping[str, Any], event_index: int, timeout: float) -> bool:
    """Every field matches (the first miss ends it)."""
    for name, raw in exact:
        value = event.get(name, _MISSING)
        # A string equal to the text is the usual match; a string that differs is a miss.
        if value != raw and (value is _MISSING or isinstance(value, str)
                             or canonical_json(value) != raw):
            return False
    for name, compiled, remembered, untimed_length, literals in searched:
        value = event.get(name, _MISSING)
        if value is _MISSING:
            return False
        text = value if isinstance(value, str) else canonical_json(value)
        found = remembered.get(text)
        if found is None:
            found = literals.find(text) if literals is not None else None
            if found is None:
                found = _search(compiled, text, untimed_length, timeout, event_index, name)
            if len(text) <= _REMEMBERED_LENGTH:
                if len(remembered) >= _REMEMBERED_VALUES:
                    remembered.clear()
                remembered[text] = found
        if not found:
            return False
    return True


def _search(compiled: Any, text: str, untimed_length: int, timeout: float, event_index: int,
            name: str) -> bool:
    if len(text) <= untimed_length:  # cannot take long (and the limit costs a µs)
        return compiled.search(text) is not None
    try:
        return compiled.search(text, timeout=timeout) is not None
    except TimeoutError as exc:
        raise GateTimeout(compiled.pattern, event_index, name) from exc


#: Characters outside a set that stand for themselves (none is special in ``regex``), or
#: an escaped non-alphanumeric character (itself).
_LITERAL = r"(?:[^\\.^$*+?{}\[\]()|]|\\[^0-9A-Za-z])*"
_ALTERNATION = rf"{_LITERAL}(?:\|{_LITERAL})*"
#: ``refund|invoice``, ``^(lookup_invoice|create_refund)$``: literals, one optional group.
_LITERAL_ALTERNATION = re.compile(rf"\^?(?:{_ALTERNATION}|\((?:\?:)?{_ALTERNATION}\))\$?",
                                  re.DOTALL)
#: Pattern length times value length below which a literal alternation runs untimed: the
#: search then tries each literal at each position at most once, well under a millisecond.
_UNTIMED_WORK = 200_000


def _untimed_length(pattern: str) -> int:
    """The longest value ``pattern`` may search without a time limit: 0 unless it is an
    alternation of literals (no repetition, class or backreference: it cannot backtrack
    more than once per literal and position), then as long as that stays cheap."""
    if _LITERAL_ALTERNATION.fullmatch(pattern) is None:
        return 0
    return _UNTIMED_WORK // max(1, len(pattern))


#: ``refund|invoice`` or ``(?:refund|invoice)``: an alternation of literals, not anchored.
_UNANCHORED_LITERALS = re.compile(
    rf"\((?:\?:)?(?P<grouped>{_ALTERNATION})\)|(?P<bare>{_ALTERNATION})", re.DOTALL)
_LITERAL_PIECE = re.compile(r"\\(.)|([^\\|]+)|(\|)", re.DOTALL)
#: The characters outside ASCII that ``regex`` matches to an ASCII letter when ignoring
#: case (İ, ſ and the Kelvin sign; they are also the ones ``str.lower`` turns into
#: ASCII), found by trying every code point (a test does it again).
_FOLDS_ONTO_ASCII = re.compile("[\u0130\u017f\u212a]")


class _Literals:
    """An alternation of literals answered with ``in``: the same answer as the ``regex``
    search, at a fraction of its cost (``judges status`` asks it about every row).

    Case-sensitive, ``literal in text`` is the search. Ignoring case, with ASCII
    literals, ``literal in text.lower()`` is, unless the text holds a character that
    ``regex`` folds onto an ASCII letter: then :meth:`find` does not know (None).
    """

    __slots__ = ("fold", "literals")

    def __init__(self, literals: tuple[str, ...], fold: bool) -> None:
        self.literals = literals
        self.fold = fold

    def find(self, text: str) -> bool | None:
        if self.fold:
            if not text.isascii() and _FOLDS_ONTO_ASCII.search(text):
                return None
            text = text.lower()
        return any(map(text.__contains__, self.literals))  # no generator: it runs per row


def _literals(pattern: str, flags: str) -> _Literals | None:
    """The literals of an unanchored alternation of them; None for any other pattern (and
    under ``x``, where spaces are not literal, or ``i`` with a literal beyond ASCII)."""
    whole = _UNANCHORED_LITERALS.fullmatch(pattern) if "x" not in flags else None
    if whole is None:
        return None
    branches = [""]
    for piece in _LITERAL_PIECE.finditer(whole["grouped"] if whole["grouped"] is not None
                                         else whole["bare"]):
        escaped, run, bar = piece.groups()
        if bar is not None:
            branches.append("")
        else:
            branches[-1] += escaped if escaped is not None else run
    if "i" not in flags:
        return _Literals(tuple(branches), fold=False)
    if not all(branch.isascii() for branch in branches):
        return None
    return _Literals(tuple(branch.lower() for branch in branches), fold=True)


#: The last few gates compiled (judges are evaluated one after another); their patterns also
#: stay in the bounded pattern cache below, so this holds only a handful of gates' worth.
_GATES_KEPT = 4
_gates: OrderedDict[int, tuple[Sequence[Matcher], CompiledGate]] = OrderedDict()


def _compiled_gate(gate: Sequence[Matcher]) -> CompiledGate:
    if not isinstance(gate, tuple):  # a list could change under its id: compile it afresh
        return CompiledGate(gate)
    with _cache_lock:
        hit = _gates.get(id(gate))
        if hit is not None and hit[0] is gate:
            _gates.move_to_end(id(gate))
            return hit[1]
    compiled = CompiledGate(gate)
    with _cache_lock:
        _gates[id(gate)] = (gate, compiled)  # the gate is kept alive, so its id is not reused
        while len(_gates) > _GATES_KEPT:
            _gates.popitem(last=False)
    return compiled


def as_match_text(value: object) -> str:
    """A string as it is; any other JSON value as its canonical (RFC 8785) JSON text."""
    return value if isinstance(value, str) else canonical_json(value)


def canonical_json(value: object) -> str:
    """RFC 8785 JSON text of ``value`` (strings included, quoted)."""
    try:
        # The fixture module's serialiser: the same bytes as the rfc8785 package,
        # through the C JSON encoder in the common case (it runs for every event of
        # every row, when gating and when rendering the transcript).
        return canonical_bytes(value).decode("utf-8")
    except CanonicalizationError:
        pass
    try:
        # A whole float from 2^53 up is written as its digits and reads back as an
        # integer beyond JCS's range: written as the float it is, it keeps its text and
        # its neighbours keep theirs, so a row renders and gates the same read back from
        # its canonical form (what its snapshot_hash covers) as it did.
        return canonical_bytes(_exact_floats(value)).decode("utf-8")
    except CanonicalizationError:
        # Other integers beyond 2^53 have no JCS text; sorted compact JSON is the closest.
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


#: The integers RFC 8785 writes: within ±(2**53 - 1).
_SAFE_INTEGER = 2 ** 53 - 1


def _exact_floats(value: object) -> object:
    """``value`` with each integer beyond :data:`_SAFE_INTEGER` that is the JCS text of a
    float (its digits, below 10**21) made that float."""
    if type(value) is int:
        if _SAFE_INTEGER < abs(value) < 10 ** 21:
            as_float = float(value)
            if canonical_bytes(as_float) == str(value).encode():
                return as_float
        return value
    if type(value) is dict:
        return {key: _exact_floats(item) for key, item in value.items()}
    if type(value) is list:
        return [_exact_floats(item) for item in value]
    return value


#: Compiled patterns kept between events: at most this many, of at most this much
#: estimated compile cost together (regex_cost units, about 300 bytes each). A judge
#: file's literals may cost up to MAX_COST; the cache holds a few files' worth, so a
#: recipe of many judges with costly gates does not keep them all in memory.
_CACHE_ENTRIES = 256
_CACHE_COST = 4 * MAX_COST
_cache: OrderedDict[tuple[str, str], tuple[Any, int]] = OrderedDict()
_cache_cost = 0
_cache_lock = threading.Lock()


def _compile(pattern: str, flags: str) -> Any:
    """The compiled pattern, from a cache bounded by count and by estimated cost."""
    global _cache_cost
    key = (pattern, flags)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit[0]
    import regex  # here: a run whose gates have no regex (or no gate) never loads it

    bits = 0
    for flag in flags:
        bits |= getattr(regex, REGEX_FLAG_NAMES[flag])
    # kept out of regex's own cache (up to 500 patterns, unbounded in size): this one bounds it
    compiled = regex.compile(pattern, bits, cache_pattern=False)
    cost = expanded_size(pattern, verbose="x" in flags, ignorecase="i" in flags,
                         limit=_CACHE_COST).cost
    with _cache_lock:
        if key not in _cache:
            _cache[key] = (compiled, cost)
            _cache_cost += cost
        while _cache and (len(_cache) > _CACHE_ENTRIES or _cache_cost > _CACHE_COST):
            _, (_, evicted) = _cache.popitem(last=False)
            _cache_cost -= evicted
    return compiled
