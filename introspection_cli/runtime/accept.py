"""Deciding which of the runtime's exported objects get written, and what to say about the rest.

A requested conversation is either written or a failure (exit 1), with one
reason per conversation. Everything else the runtime sends (a conversation
nobody asked for, a second copy, an ``errors`` entry for a conversation that
was written anyway) is a warning: it is not a requested conversation lost.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from introspection_cli import strictjson
from introspection_cli.fixture import check_line, line_conversation_id
from introspection_cli.runtime.interface import ExportBatch

#: Labels are added after export: an unlabelled row is what the runtime should send.
_IGNORED_ON_EXPORT = frozenset({"fixture-unlabelled"})


@dataclass(frozen=True, slots=True)
class ExportFailure:
    """Something requested that was not written, and why.

    ``conversation_id`` is None for an object that names no conversation, so
    which requested conversation it was cannot be told.
    """

    conversation_id: str | None
    reason: str


@dataclass(slots=True)
class Accepted:
    """The lines to write, the requested conversations not written, and warnings."""

    rows: list[bytes] = field(default_factory=list)
    failures: list[ExportFailure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Kind:
    """What is being exported: how to name an object's conversation and judge its line."""

    noun: str
    fault: str  # what a line with problems is, for messages
    identify: Callable[[bytes], str | None]
    problems: Callable[[bytes, int], list[str]]


def accept_fixtures(wanted: list[str], batch: ExportBatch, first_line: int) -> Accepted:
    """Verify each fixture line as ``check`` would (labels aside); keep one per requested id.

    ``first_line`` is the line number the first new row gets, for the rejections.
    """
    return _Sorting(_FIXTURE, wanted).sort(batch, first_line)


def accept_bundles(wanted: list[str], batch: ExportBatch) -> Accepted:
    """Keep each conversation bundle that is valid JSON (no repeated key, NaN or Infinity)
    and names a requested conversation (top-level ``conversation_id``), in ids-file order."""
    return _Sorting(_BUNDLE, wanted).sort(batch, 1)


class _Sorting:
    """One pass over an export answer, sorting each object into written, failed or warned."""

    def __init__(self, kind: _Kind, wanted: list[str]) -> None:
        self.kind = kind
        self.wanted = wanted
        self.requested = set(wanted)
        self.accepted: dict[str, bytes] = {}
        self.result = Accepted()
        # Per requested id: (why it failed, how to mention it if another copy was written).
        self.troubles: dict[str, list[tuple[str, str]]] = {}

    def sort(self, batch: ExportBatch, first_line: int) -> Accepted:
        # The conversation an unreadable entry was about is unknown: if it was requested,
        # it is reported below as neither exported nor reported.
        self.result.warnings.extend(f"the runtime sent an unreadable error, ignored: {why}"
                                    for why in batch.unreadable_errors)
        for line in batch.lines:
            self._take(line, first_line + len(self.accepted))
        for error in batch.errors:
            said = f"[{error.code}] {error.message}"
            if error.conversation_id in self.requested:
                self.troubles.setdefault(error.conversation_id, []).append(
                    (f"the runtime could not export it: {said}",
                     f"reported an error for it ({said})"))
            else:
                self.result.warnings.append(
                    f"{error.conversation_id}: the runtime reported an error for this "
                    f"conversation, which was not requested: {said}")
        return self._finish()

    def _take(self, line: bytes, number: int) -> None:
        kind, result = self.kind, self.result
        conversation_id = kind.identify(line)
        detail = "; ".join(kind.problems(line, number))
        if conversation_id is None:
            # Nothing to match it to a requested id: not written, and the id it was
            # meant for is reported below as neither exported nor reported.
            result.warnings.append(f"the runtime sent a {kind.noun} that names no "
                                   "conversation; not written" + (f": {detail}" if detail
                                                                  else ""))
        elif conversation_id not in self.requested:
            result.warnings.append(f"{conversation_id}: the runtime sent this conversation, "
                                   "which was not requested; not written")
        elif detail:
            self.troubles.setdefault(conversation_id, []).append(
                (f"the runtime sent a {kind.noun} that {kind.fault}: {detail}",
                 f"also sent a copy that {kind.fault} ({detail})"))
        elif conversation_id in self.accepted:
            result.warnings.append(f"{conversation_id}: the runtime sent this conversation more "
                                   "than once; wrote the first copy")
        else:
            self.accepted[conversation_id] = line

    def _finish(self) -> Accepted:
        result = self.result
        result.rows = [self.accepted[i] for i in self.wanted if i in self.accepted]
        for conversation_id in self.wanted:
            troubles = self.troubles.get(conversation_id, [])
            if conversation_id in self.accepted:
                result.warnings.extend(f"{conversation_id}: written, but the runtime {also}"
                                       for _, also in troubles)
            elif troubles:
                result.failures.append(ExportFailure(
                    conversation_id, "; ".join(why for why, _ in troubles)))
            else:
                result.failures.append(ExportFailure(
                    conversation_id, f"the runtime returned neither a {self.kind.noun} nor an "
                                     "error for it"))
        return result


def _fixture_problems(line: bytes, number: int) -> list[str]:
    """What ``check`` says about the line, labels aside (no cross-row rule), in the words
    of a row the runtime sent: a mismatch is the runtime's fault, not an edit to undo.

    ``check_line`` is what ``check`` runs on each line, called directly (as ``check``
    does) rather than through ``verify_fixture_line``: how deep a row may nest before
    it cannot be read or hashed depends on the Python stack below, so one frame more
    here rejected rows ``check`` accepts.
    """
    _, rejections = check_line(line, number, from_runtime=True)
    return [f"[{r.code}] {r.message}" for r in rejections if r.code not in _IGNORED_ON_EXPORT]


def _bundle_problems(line: bytes, number: int) -> list[str]:
    try:
        strictjson.loads(line)
    except (ValueError, RecursionError) as exc:
        return [str(exc) or type(exc).__name__]
    return []


def _bundle_id(line: bytes) -> str | None:
    """A bundle's top-level ``conversation_id``, if it has one (read leniently: for messages)."""
    try:
        bundle = json.loads(line)
    except (ValueError, RecursionError):
        return None
    conversation_id = bundle.get("conversation_id") if isinstance(bundle, dict) else None
    return conversation_id if isinstance(conversation_id, str) else None


_FIXTURE = _Kind("fixture", "fails verification", line_conversation_id, _fixture_problems)
_BUNDLE = _Kind("conversation", "is not valid JSON", _bundle_id, _bundle_problems)
