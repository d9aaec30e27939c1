"""Exposure: what a judge's test rows have been shown to, and whether that leaves them fresh.

Every evaluation of test rows (``judges eval --split test`` or
``--threshold-split test``, ``judges certify``, ``judges estimate --report`` on a
test split) is a *look*, one line of ``judges/<name>.exposure.jsonl`` in the
recipe (:mod:`.exposure_file` reads and writes it). A look records the
procedure, (fingerprint, samples), the rows it saw as ``[conversation_id,
snapshot_hash, expected]`` and a digest of the outcomes it got.

From the looks that saw any of the rows now in the test split,
:func:`derive_exposure` says how many procedures looked, how many looks, which
rows seen then are no longer in test (``moved``: moved to another split or
removed), which were relabelled after being seen, and whether the same
procedure on the same rows ever gave other outcomes (``rerolled``). The
exposure is **clean** when one procedure looked, nothing was moved or
relabelled and nothing rerolled: looking again after labelling more rows under
one procedure stays clean. Pure functions and values; standard library only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import starmap
from typing import Any

EXPOSURE_VERSION = 1
LABELS = ("pass", "fail", "not_applicable")
#: Look outcomes: an error row is no outcome (the model gave no verdict to see).
OUTCOMES = ("pass", "fail", "not_applicable", "gated")


@dataclass(frozen=True, slots=True)
class SeenRow:
    """One row a look saw. ``snapshot_hash`` and ``expected`` are None only in looks
    migrated from the old evaluation ledger, which did not record them."""

    conversation_id: str
    snapshot_hash: str | None
    expected: str | None

    def as_json(self) -> list[str | None]:
        return [self.conversation_id, self.snapshot_hash, self.expected]


#: (fingerprint, samples); samples None: a migrated look, which did not record it.
Procedure = tuple[str, int | None]


@dataclass(frozen=True, slots=True)
class Look:
    """One evaluation of a judge's test rows (one line of its exposure file)."""

    at: str
    fingerprint: str
    samples: int | None
    temperature: float | None
    rows: tuple[SeenRow, ...]
    outcomes_digest: str
    tool_version: str
    migrated_from: str | None = None

    @property
    def procedure(self) -> Procedure:
        return self.fingerprint, self.samples

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "exposure_version": EXPOSURE_VERSION, "at": self.at,
            "fingerprint": self.fingerprint, "samples": self.samples,
            "temperature": self.temperature, "rows": [row.as_json() for row in self.rows],
            "outcomes_digest": self.outcomes_digest, "tool_version": self.tool_version}
        if self.migrated_from is not None:
            data["migrated_from"] = self.migrated_from
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Look:
        """The look a schema-valid line holds (:func:`.exposure_file.parse_line` checks)."""
        return cls(data["at"], data["fingerprint"], data["samples"], data["temperature"],
                   tuple(starmap(SeenRow, data["rows"])), data["outcomes_digest"],
                   data["tool_version"], data.get("migrated_from"))


def pairs_digest(pairs: Iterable[tuple[str, str]]) -> str:
    """``sha256:`` of the sorted lines ``first + " " + second``, each ending in a newline:
    the same for the same pairs in any order."""
    lines = sorted(f"{first} {second}\n" for first, second in pairs)
    return "sha256:" + hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def outcomes_digest(outcomes: Iterable[tuple[str, str]]) -> str:
    """The digest (:func:`pairs_digest`) of ``(conversation_id, outcome)`` of the rows a
    look judged: equal for the same outcomes in any order."""
    return pairs_digest(outcomes)


@dataclass(frozen=True, slots=True)
class Exposure:
    """What the looks at the rows now in test add up to (see the module docstring)."""

    procedures: int
    looks: int
    moved: tuple[str, ...]
    relabelled: tuple[str, ...]
    rerolled: bool
    #: Distinct fingerprints among the looks (``judges status``'s "judge versions").
    fingerprints: int = 0

    @property
    def clean(self) -> bool:
        """One procedure looked, and nothing was moved, relabelled or re-rolled."""
        return (self.procedures == 1 and not self.moved and not self.relabelled
                and not self.rerolled)

    def as_json(self) -> dict[str, Any]:
        """The certificate's ``exposure`` member."""
        return {"procedures": self.procedures, "looks": self.looks, "moved": list(self.moved),
                "relabelled": list(self.relabelled), "rerolled": self.rerolled}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Exposure:
        return cls(data["procedures"], data["looks"], tuple(data["moved"]),
                   tuple(data["relabelled"]), data["rerolled"])

    def same_record(self, other: Exposure) -> bool:
        """Whether both say the same (``fingerprints`` is not part of the record)."""
        return self.as_json() == other.as_json()

    def problems(self) -> list[str]:
        """Why it is not clean, one phrase each (empty when clean)."""
        found = []
        if self.procedures == 0:
            found.append("no look at held-out test rows made it (certified on dev or train "
                         "rows, which are not held out)")
        if self.procedures > 1:
            found.append(f"{self.procedures} procedures (judge version and samples) have "
                         "looked at these test rows")
        for ids, what in ((self.moved, "seen in test, then moved out of it or removed"),
                          (self.relabelled, "relabelled after being seen")):
            if ids:
                shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
                found.append(f"{len(ids)} row(s) {what} ({shown})")
        if self.rerolled:
            found.append("the same procedure judged the same rows again and gave other "
                         "outcomes (a re-roll)")
        return found


def derive_exposure(looks: Sequence[Look], test_rows: Mapping[str, tuple[str, str]], *,
                    latest: Mapping[str, str] | None = None) -> Exposure:
    """The exposure of ``test_rows`` (conversation id -> (snapshot_hash, expected) of every
    labelled row now in test) from ``looks``: every look that saw any of them counts.

    ``latest`` is the per-row outcome (conversation id -> outcome, error rows left out) of
    the newest look, ``looks[-1]``, when the caller knows it (the run that made it, or the
    certificate listing it): an earlier look of the same procedure at rows it also judged
    is then a re-roll when those rows came out otherwise, even though the newest look saw
    more rows (a row labelled between two runs must not hide a re-roll)."""
    relevant = [look for look in looks
                if any(row.conversation_id in test_rows for row in look.rows)]
    seen = {row.conversation_id for look in relevant for row in look.rows}
    moved = sorted(seen - test_rows.keys())
    relabelled = sorted({row.conversation_id for look in relevant for row in look.rows
                         if row.conversation_id in test_rows and row.expected is not None
                         and row.expected != test_rows[row.conversation_id][1]})
    digests: dict[tuple[Procedure, frozenset[SeenRow]], set[str]] = {}
    for look in relevant:
        digests.setdefault((look.procedure, frozenset(look.rows)), set()).add(
            look.outcomes_digest)
    rerolled = any(len(found) > 1 for found in digests.values()) or (
        latest is not None and bool(looks) and _rerolled_within(looks, latest))
    return Exposure(_procedures(relevant), len(relevant), tuple(moved), tuple(relabelled),
                    rerolled, len({look.fingerprint for look in relevant}))


def _rerolled_within(looks: Sequence[Look], latest: Mapping[str, str]) -> bool:
    """Whether an earlier look of the newest look's procedure, at rows the newest look saw
    too, got outcomes on them other than the newest look's (``latest``)."""
    newest = looks[-1]
    seen = set(newest.rows)
    for look in looks[:-1]:
        if look.procedure != newest.procedure or not look.rows or not seen.issuperset(
                look.rows) or any(row.conversation_id not in latest for row in look.rows):
            continue
        again = outcomes_digest((row.conversation_id, latest[row.conversation_id])
                                for row in look.rows)
        if again != look.outcomes_digest:
            return True
    return False


def _procedures(looks: Sequence[Look]) -> int:
    """Distinct (fingerprint, samples). A migrated look (samples unknown) joins the
    procedures of its fingerprint, and counts as one only when its fingerprint has none."""
    known = {look.procedure for look in looks if look.samples is not None}
    fingerprints = {fingerprint for fingerprint, _ in known}
    unknown = {look.fingerprint for look in looks if look.samples is None} - fingerprints
    return len(known) + len(unknown)


def looks_under(looks: Sequence[Look], procedure: Procedure,
                test_rows: Mapping[str, tuple[str, str]]) -> int:
    """How many of the looks at ``test_rows`` were made under ``procedure``."""
    return sum(look.procedure == procedure and any(
        row.conversation_id in test_rows for row in look.rows) for look in looks)
