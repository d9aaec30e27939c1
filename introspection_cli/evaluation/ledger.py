"""The evaluation ledger: the outcomes each judge version gave outside ``test``, on this machine.

Beside the verdict cache, in its own file (``evaluations.sqlite3``), every run
of ``judges eval`` and ``judges certify`` records, per judge, the fingerprint
it ran under and each row's conversation id, split and outcome, for the rows it
evaluated outside ``test`` (error rows are not recorded: the model gave no
verdict). ``judges status`` and ``judges plan`` score the outcomes recorded under
a judge's current fingerprint against its dev rows' current labels: its **dev
figures**.

No row evaluated in ``test`` is recorded here: what the test rows have been
shown to is kept in the recipe, in ``judges/<name>.exposure.jsonl``
(:mod:`introspection_cli.certification.exposure_file`), where another cache
directory, machine or recipe cannot blur it. Versions before that file recorded
test rows here too; those rows are kept as they are (a later run never
overwrites one) and read once, when a judge's exposure file is first written
(:meth:`Ledger.test_evaluations`), for the conversations that judge's
calibration file holds.

The ledger is disposable, like the cache: a corrupt file is renamed aside and
a fresh one started, and a ledger that cannot be opened, read or written (read
only, locked by another run past a short wait) never stops or stalls a run.
Each problem is reported once as a warning and the run goes on without it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from introspection_cli.evaluation.sqlite_store import (
    Failure,
    StoreFile,
    failure_of,
    immediate,
    set_aside,
)

if TYPE_CHECKING:  # `judges status` reads the ledger and needs none of a run's values
    from introspection_cli.evaluation.outcomes import EvalRun, RowOutcome

LEDGER_FILE = "evaluations.sqlite3"
#: Seconds to wait for another run's write; the ledger is never worth a stall.
_BUSY_TIMEOUT_S = 2.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS evaluations (
    judge TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    split TEXT,
    outcome TEXT NOT NULL,
    evaluated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    PRIMARY KEY (judge, fingerprint, conversation_id)
) WITHOUT ROWID
"""


_RECORD = """
INSERT INTO evaluations (judge, fingerprint, conversation_id, split, outcome)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (judge, fingerprint, conversation_id) DO UPDATE
SET split = excluded.split, outcome = excluded.outcome, evaluated_at = excluded.evaluated_at
WHERE split IS NOT 'test' AND (split IS NOT excluded.split OR outcome IS NOT excluded.outcome)
"""


@dataclass(frozen=True, slots=True)
class EvaluatedRow:
    """One row a judge version gave an outcome for (never an error)."""

    conversation_id: str
    split: str | None
    outcome: str


@dataclass
class Ledger:
    """Record and query evaluations; every failure becomes one line in :attr:`warnings`."""

    path: Path
    warnings: list[str] = field(default_factory=list)
    _db: sqlite3.Connection | None = field(default=None, repr=False)
    _writable: bool = field(default=False, repr=False)
    _failed: bool = field(default=False, repr=False)

    def record(self, judge: str, fingerprint: str,
               rows: Iterable[EvaluatedRow | RowOutcome]) -> None:
        """Record ``rows`` outside ``test`` as evaluated by ``judge`` at ``fingerprint``
        (latest outcome wins, but never over a test row an earlier version recorded: it
        waits there for the exposure file's migration)."""
        values = [(judge, fingerprint, row.conversation_id, row.split, row.outcome)
                  for row in rows if row.split != "test"]
        if not values:
            return
        with self._failures("could not record this run's evaluations in"):
            db = self._connection(create=True)
            if db is None:
                return
            with immediate(db):
                # Only what changed is written: a re-run of the same rows with the same
                # outcomes (the usual case) then modifies no page, and commits without
                # waiting for the disk. Comparing here, with the rows read at once, is
                # cheaper than asking the upsert to compare each row (_RECORD still does).
                recorded = {conversation_id: (split, outcome)
                            for conversation_id, split, outcome in db.execute(
                                "SELECT conversation_id, split, outcome FROM evaluations "
                                "WHERE judge = ? AND fingerprint = ?", (judge, fingerprint))}
                latest = {value[2]: value for value in values}  # a repeated row: its last
                changed = [value for value in latest.values()
                           if recorded.get(value[2], (None,))[0] != "test"
                           and recorded.get(value[2]) != (value[3], value[4])]
                if changed:
                    db.executemany(_RECORD, changed)

    def test_evaluations(self, judge: str) -> dict[str, list[tuple[str, str, str]]]:
        """fingerprint -> ``(conversation_id, outcome, evaluated_at)`` of every row ``judge``
        was evaluated on while it was in ``test``, by a version before exposure files (for
        migrating to one)."""
        with self._failures("could not read"):
            db = self._connection(create=False)
            if db is None:
                return {}
            found: dict[str, list[tuple[str, str, str]]] = {}
            for fingerprint, conversation_id, outcome, at in db.execute(
                    "SELECT fingerprint, conversation_id, outcome, evaluated_at FROM evaluations"
                    " WHERE judge = ? AND split = 'test' ORDER BY conversation_id", (judge,)):
                found.setdefault(str(fingerprint), []).append(
                    (str(conversation_id), str(outcome), str(at)))
            return found
        return {}

    def outcomes(self, judge: str, fingerprint: str) -> dict[str, str]:
        """Conversation id -> the outcome last recorded for ``judge`` at ``fingerprint``."""
        with self._failures("could not read"):
            db = self._connection(create=False)
            if db is None:
                return {}
            # Straight into the dict: no list of 20,000 tuples for the collector to walk.
            return {str(conversation_id): str(outcome) for conversation_id, outcome in db.execute(
                "SELECT conversation_id, outcome FROM evaluations "
                "WHERE judge = ? AND fingerprint = ?", (judge, fingerprint))}
        return {}

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    def _connection(self, *, create: bool) -> sqlite3.Connection | None:
        """The open database (writable when ``create``); None when there is none to read."""
        if self._db is not None and (self._writable or not create):
            return self._db
        if self._failed or (not create and not self.path.exists()):
            return None  # opening failed and was reported once: do not retry every call
        self.close()
        try:
            db = self._open(create)
        except (OSError, sqlite3.Error):
            self._failed = True
            raise
        if db is None:  # corrupt: moved aside
            if not create or self.path.exists():
                self._failed = True
                return None
            db = self._open(create)
        self._db, self._writable = db, create
        return db

    def _open(self, create: bool) -> sqlite3.Connection | None:
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        store = StoreFile(self.path, _SCHEMA, "SELECT count(*) FROM evaluations LIMIT 1",
                          _BUSY_TIMEOUT_S, wal=False)
        try:
            return store.connect() if create else store.connect_read_only()
        except sqlite3.DatabaseError as exc:
            # Read only, a file without the table is no ledger either (an empty file).
            if failure_of(exc) is not Failure.CORRUPT and "no such table" not in str(exc):
                raise
            self._set_aside(create)
            return None

    def _set_aside(self, create: bool) -> None:
        try:
            aside = set_aside(self.path)
        except OSError as exc:
            self.warnings.append(f"the evaluation ledger {self.path} is corrupt and could not "
                                 f"be moved aside ({exc.strerror or exc}); delete it")
            return
        self.warnings.append(f"the evaluation ledger {self.path} was corrupt: moved aside to "
                             f"{aside.name}{'; a fresh one was started' if create else ''}")

    @contextlib.contextmanager
    def _failures(self, doing: str) -> Iterator[None]:
        try:
            yield
        except (OSError, sqlite3.Error) as exc:
            self.warnings.append(f"{doing} the evaluation ledger {self.path} ({exc}); dev "
                                 "figures may be incomplete")


def open_ledger(cache_dir: Path) -> Ledger:
    """The ledger beside the verdict cache in ``cache_dir``; opened lazily, never raises."""
    return Ledger(cache_dir / LEDGER_FILE)


def record_run(ledger: Ledger, run: EvalRun) -> list[str]:
    """Record every judged or gated row of ``run`` outside ``test`` (its test rows are the
    exposure file's); the ledger's problems, one line each."""
    for judge in run.judges:
        if judge.fingerprint is None:
            continue
        ledger.record(judge.name, judge.fingerprint,
                      (row for row in judge.rows if row.outcome != "error"))
    return list(dict.fromkeys(ledger.warnings))
