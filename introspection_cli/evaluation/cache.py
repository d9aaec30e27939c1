"""An on-disk cache of successful verdicts: shared by concurrent runs, and disposable.

SQLite in WAL mode: two ``judges eval`` processes may read and write the same
cache at once (a reader never waits for a writer; writers wait briefly for each
other). Only valid verdicts are stored; errors are retried on the next run. The
keys are :mod:`~introspection_cli.evaluation.cache_keys`'; the API key is never
part of a key or a value. Beside each verdict the cache keeps the memo of the
request it answered (:mod:`~introspection_cli.evaluation.memo`), so a re-run of
unchanged rows finds its verdicts without rendering a prompt, and the tokens its
reply used, so a re-run can say what its rows cost although it paid nothing (an
entry written before the tokens were kept reads as unknown, never as 0).

The cache only saves money, so it never stops or stalls a run:

* a corrupt database (not a database, truncated, a malformed page, found when
  opened or when read) is renamed aside (``verdicts.sqlite3.corrupt-<time>``)
  and a fresh one made, with a warning;
* a read-only cache is read but not written; one that cannot be opened at all, or
  is locked by another process (a reader waits at most ``_READ_TIMEOUT_S``, a
  writer ``_WRITE_TIMEOUT_S``, once: then that side is given up), is used as far as
  it can be, with a warning;
* a run uses it through :class:`~introspection_cli.evaluation.cache_worker.CacheWorker`,
  which runs every read and write on one worker thread, so the event loop never
  waits for the disk or a lock (a fully cached re-run reads its verdicts before any
  event loop starts, and starts none).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from introspection_cli.evaluation.cache_dir import CACHE_DIR_ENV as CACHE_DIR_ENV
from introspection_cli.evaluation.cache_dir import default_cache_dir as default_cache_dir
from introspection_cli.evaluation.cache_keys import KEY_VERSION, KeyMaker, cache_key
from introspection_cli.evaluation.outcomes import Tokens
from introspection_cli.evaluation.sqlite_store import (
    Failure,
    StoreFile,
    failure_of,
    immediate,
    reason,
    set_aside,
    set_busy_timeout,
)
from introspection_cli.evaluation.verdict import InvalidReply, ParsedVerdict, stored_verdict

__all__ = ["CACHE_DIR_ENV", "CACHE_FILE", "KEY_VERSION", "KeyMaker", "VerdictCache",
           "cache_key", "default_cache_dir"]

CACHE_FILE = "verdicts.sqlite3"
#: How long one read waits for a lock another process holds before reads are given up.
_READ_TIMEOUT_S = 0.5
#: How long one write waits for another writer (a concurrent run's batch takes
#: milliseconds) before writes are given up.
_WRITE_TIMEOUT_S = 2.0
#: Verdicts are written in batches: one transaction per verdict costs more than the call
#: saves at high concurrency. An interrupted run loses at most this many.
WRITE_BATCH = 32
#: Keys per SELECT (SQLite allows at least 999 parameters).
_LOOKUP_CHUNK = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    key TEXT PRIMARY KEY,
    verdict TEXT NOT NULL,
    reasoning TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    input_tokens INTEGER,
    output_tokens INTEGER,
    cached_input_tokens INTEGER,
    cache_write_tokens INTEGER
);
CREATE TABLE IF NOT EXISTS prompts (
    memo TEXT PRIMARY KEY,
    key TEXT NOT NULL
);
"""
#: The columns keeping the tokens each verdict's reply used, in :class:`Tokens` order.
#: Added to a cache made before them when it is opened; NULL in its old entries.
_TOKEN_COLUMNS = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens")
#: The reads, keyed by whether they read the tokens too (the table keeps them, and the
#: run asked for them).
_BY_KEY = {True: "SELECT key, verdict, reasoning, input_tokens, output_tokens, "
                 "cached_input_tokens, cache_write_tokens FROM verdicts WHERE key IN",
           False: "SELECT key, verdict, reasoning FROM verdicts WHERE key IN"}
_BY_MEMO = {True: "SELECT p.memo, v.key, v.verdict, v.reasoning, v.input_tokens, "
                  "v.output_tokens, v.cached_input_tokens, v.cache_write_tokens FROM prompts p "
                  "JOIN verdicts v ON v.key = p.key WHERE p.memo IN",
            False: "SELECT p.memo, v.key, v.verdict, v.reasoning FROM prompts p "
                   "JOIN verdicts v ON v.key = p.key WHERE p.memo IN"}
_INSERT = {True: "INSERT OR REPLACE INTO verdicts (key, verdict, reasoning, input_tokens, "
                 "output_tokens, cached_input_tokens, cache_write_tokens) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?)",
           False: "INSERT OR REPLACE INTO verdicts (key, verdict, reasoning) VALUES (?, ?, ?)"}
#: A row to write: a verdict under its key, (when known) the memo that renders to it, and
#: the tokens its reply used.
Entry = tuple[str, str, str, str | None, Tokens | None]


class VerdictCache:
    """Get and put verdicts by key. Use as a context manager, from one thread at a time.

    ``warnings`` says, one line each, what the cache could not do (read, write, its
    old content); ``write_failures`` counts verdicts that were not saved because a
    write failed. Verdicts read back carry the tokens their replies used only with
    ``read_tokens`` (else ``None``, as for an entry from before they were kept): a
    re-run of 4,000 rows reads them in about 5 ms more, which only a run that reports
    them should pay. They are always written.
    """

    def __init__(self, directory: Path, *, read_tokens: bool = True) -> None:
        self.path = directory / CACHE_FILE
        self._read_tokens = read_tokens
        self.write_failures = 0
        self.warnings: list[str] = []
        self._pending: list[Entry] = []
        self._db: sqlite3.Connection | None = None
        # check_same_thread off: CacheWorker opens on the caller's thread and then uses
        # the connection on its worker thread only, one operation at a time.
        self._file = StoreFile(self.path, _SCHEMA, "SELECT 1 FROM verdicts LIMIT 1",
                               _READ_TIMEOUT_S, synchronous="NORMAL",
                               shared_across_threads=True)
        self.readable = self.writable = False
        self._write_failed = False  # writes stopped after a failure: count what is lost
        self._tokens_kept = False  # the table has _TOKEN_COLUMNS (see _find_token_columns)
        self._open()

    # -- opening -------------------------------------------------------------------

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._give_up(f"cannot create its directory ({exc.strerror or exc})")
            return
        try:
            self._db = self._file.connect()
            self._find_token_columns(add=True)
            self.readable = self.writable = True
        except sqlite3.Error as exc:
            self._close_db()
            kind = failure_of(exc)
            if kind is Failure.CORRUPT:
                self._start_afresh(exc)
            elif kind is Failure.READ_ONLY:
                self._open_read_only()
            elif kind is Failure.BUSY:
                self._give_up(reason(exc))
            else:
                self._give_up(f"it cannot be opened ({exc})")

    def _open_read_only(self) -> None:
        """Read a cache this process may not write (WAL needs a writable directory; an
        immutable open reads the database file alone)."""
        if not self.path.is_file():
            self._give_up("its directory is read-only")
            return
        try:
            self._db = self._file.connect_read_only(immutable_too=True)
        except sqlite3.Error:
            self._give_up("it is read-only and cannot be read either")
            return
        self.readable = True
        self._find_token_columns(add=False)
        self.warnings.append(f"the verdict cache {self.path} is read-only: verdicts are "
                             "read from it, and this run's are not saved")

    def _find_token_columns(self, *, add: bool) -> None:
        """Whether the verdicts table keeps token usage; with ``add``, add the columns to a
        cache made before them, all in one transaction. If that fails (another run holds
        the lock), this run reads tokens as unknown and writes without them; a later run
        adds them."""
        missing = [column for column in _TOKEN_COLUMNS if column not in self._columns()]
        if missing and add:
            assert self._db is not None
            try:
                with immediate(self._db) as db:
                    for column in missing:
                        db.execute(f"ALTER TABLE verdicts ADD COLUMN {column} INTEGER")
            except sqlite3.OperationalError:
                pass  # locked, or another run added them first: looked for again below
            missing = [column for column in _TOKEN_COLUMNS if column not in self._columns()]
        self._tokens_kept = not missing

    def _columns(self) -> set[str]:
        assert self._db is not None
        return {row[1] for row in self._db.execute("PRAGMA table_info(verdicts)")}

    def _start_afresh(self, exc: sqlite3.Error) -> None:
        """Move a corrupt database (and its WAL) aside and make a new, empty one."""
        self._close_db()
        try:
            aside = set_aside(self.path)
        except OSError as error:
            self._give_up(f"it is corrupt ({exc}) and cannot be moved aside "
                          f"({error.strerror or error})")
            return
        self.warnings.append(f"the verdict cache {self.path} was corrupt ({exc}); it was moved "
                             f"aside to {aside.name} and a fresh one started, so verdicts it "
                             "held are asked for again")
        self._open()

    def _give_up(self, why: str) -> None:
        self._close_db()
        self.readable = self.writable = False
        self.warnings.append(f"the verdict cache {self.path} is not used: {why}; this run "
                             "neither reads nor saves verdicts")

    def _close_db(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    # -- reading -------------------------------------------------------------------

    def get(self, key: str) -> ParsedVerdict | None:
        """The cached verdict for ``key``; ``None`` when absent or no longer valid."""
        return self.get_many([key]).get(key)

    def get_many(self, keys: Sequence[str]) -> dict[str, ParsedVerdict]:
        """The cached verdicts among ``keys`` (valid ones only), read in a few queries."""
        found: dict[str, ParsedVerdict] = {}
        with_tokens = self._read_tokens and self._tokens_kept
        for row in self._rows_in(_BY_KEY[with_tokens], keys):
            parsed = stored_verdict(row[1], row[2], _tokens_of(row[3:]) if with_tokens else None)
            if not isinstance(parsed, InvalidReply):
                found[row[0]] = parsed
        return found

    def get_memos(self, memos: Sequence[str]) -> dict[str, tuple[str, ParsedVerdict]]:
        """The key and cached verdict each of ``memos`` renders to (see :mod:`.memo`);
        a memo whose verdict is gone, or a cache without memos, is a miss."""
        found: dict[str, tuple[str, ParsedVerdict]] = {}
        with_tokens = self._read_tokens and self._tokens_kept
        for row in self._rows_in(_BY_MEMO[with_tokens], memos,
                                 missing_table_is_empty=True):  # read-only, from before memos
            parsed = stored_verdict(row[2], row[3], _tokens_of(row[4:]) if with_tokens else None)
            if not isinstance(parsed, InvalidReply):
                found[row[0]] = (row[1], parsed)
        return found

    def _rows_in(self, select: str, values: Sequence[str], *,
                 missing_table_is_empty: bool = False) -> Iterator[tuple[Any, ...]]:
        """The rows of ``select`` (ending in ``IN``) for ``values``, a chunk of them per
        query. A read that fails is counted and warned about (:meth:`_failed`) and ends
        the rows; so does a missing table, silently, when ``missing_table_is_empty``."""
        for start in range(0, len(values), _LOOKUP_CHUNK):
            if not self.readable or self._db is None:
                return
            chunk = values[start:start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            try:
                rows = self._db.execute(f"{select} ({marks})", chunk).fetchall()
            except sqlite3.Error as exc:
                if not (missing_table_is_empty and isinstance(exc, sqlite3.OperationalError)
                        and "no such table" in str(exc)):
                    self._failed("read", exc)  # a fresh cache after corruption holds nothing
                return
            yield from rows

    # -- writing -------------------------------------------------------------------

    def put(self, key: str, verdict: ParsedVerdict, memo: str | None = None) -> None:
        """Queue a valid verdict for writing; written in batches and on :meth:`close`."""
        self._pending.append((key, verdict.verdict, verdict.reasoning, memo, verdict.tokens))
        if len(self._pending) >= WRITE_BATCH:
            self.flush()

    def flush(self) -> None:
        """Write the queued verdicts in one transaction."""
        batch, self._pending = self._pending, []
        self.write(batch)

    def write(self, batch: Sequence[Entry]) -> None:
        """Write ``(key, verdict, reasoning, memo, tokens)`` rows in one transaction (a row
        with an empty verdict only records its memo). A failed write is counted and warned
        about once, never raised."""
        if not batch:
            return
        if not self.writable or self._db is None:
            if self._write_failed:
                self.write_failures += sum(1 for entry in batch if entry[1])
            return  # otherwise read-only or not used: a warning says so already
        try:
            # A write waits longer for another run's write to finish than a read does.
            set_busy_timeout(self._db, _WRITE_TIMEOUT_S)
            with immediate(self._db) as db:
                self._write_verdicts(db, [entry for entry in batch if entry[1]])
                db.executemany(
                    "INSERT OR REPLACE INTO prompts (memo, key) VALUES (?, ?)",
                    [(entry[3], entry[0]) for entry in batch if entry[3] is not None])
        except sqlite3.Error as exc:
            self.write_failures += sum(1 for entry in batch if entry[1])
            self._failed("write", exc)
        finally:
            if self._db is not None:
                set_busy_timeout(self._db, _READ_TIMEOUT_S)

    def _write_verdicts(self, db: sqlite3.Connection, entries: Sequence[Entry]) -> None:
        """Insert verdicts, with their tokens where the table keeps them."""
        if not self._tokens_kept:
            db.executemany(_INSERT[False], [entry[:3] for entry in entries])
            return
        db.executemany(_INSERT[True], [
            (*entry[:3], *(entry[4] if entry[4] is not None else (None,) * 4))
            for entry in entries])

    def _failed(self, doing: str, exc: sqlite3.Error) -> None:
        """A read or write failed: start afresh when corrupt, else stop doing it."""
        if failure_of(exc) is Failure.CORRUPT and self.writable:
            self._start_afresh(exc)
            return
        why = reason(exc)
        if doing == "read":
            self.readable = False
            self.warnings.append(f"the verdict cache {self.path} could not be read ({why}); "
                                 "this run reads no more verdicts from it")
        else:
            self.writable, self._write_failed = False, True
            self.warnings.append(f"the verdict cache {self.path} could not be written "
                                 f"({why}); this run saves no more verdicts in it")

    def close(self) -> None:
        self.flush()
        self._close_db()

    def __enter__(self) -> VerdictCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _tokens_of(counts: tuple[Any, ...]) -> Tokens | None:
    """The tokens stored with a verdict; None when unknown (NULL: written before they were
    kept) or not counts at all (a cache edited by hand)."""
    first, second, third, fourth = counts
    if type(first) is int and type(second) is int and type(third) is int \
            and type(fourth) is int and min(counts) >= 0:
        return Tokens(first, second, third, fourth)
    return None
