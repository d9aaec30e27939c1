"""How the run's SQLite stores open their files, and what counts as a broken one.

Four stores live beside the verdict cache, each a SQLite file: the verdict
cache itself (:mod:`.cache`), the evaluation ledger (:mod:`.ledger`), the
batch-id store (:mod:`.batch.store`) and the claims board (:mod:`.claims`).
All of them are disposable and none may stall a run, so they open their files
the same way, here:

* a connection in autocommit mode (each store opens its own transactions), with
  a busy timeout (how long a statement waits for another process's lock) and the
  store's pragmas (WAL, ``synchronous``; the WAL switch waits the busy timeout too,
  which SQLite does not do for it while another process is creating the file), its
  schema created and, for a store that versions it, ``user_version`` checked and
  set, then a probe read that proves the file holds the store's tables (:meth:`StoreFile.connect`);
* a read-only open for a file this process may not write: ``mode=ro``, else
  ``immutable=1``, which reads the database file alone where WAL's side files
  cannot be made (:meth:`StoreFile.connect_read_only`);
* the failures a store degrades on, told apart by SQLite's own error names: a
  corrupt file (also a schema version this code cannot read), a lock another
  process holds, a file this process may not write (:func:`failure_of`);
* a corrupt file moved aside with its write-ahead log, under a name saying when
  (:func:`set_aside`), or removed (:func:`discard`, for a store whose content
  only matters while its runs live).

What each store does about a failure (read what it can, warn, start afresh,
stop) is its own, and so are its schema and its queries.
"""

from __future__ import annotations

import contextlib
import enum
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: How often a WAL switch refused by another connection's lock is tried again.
_WAL_RETRY_S = 0.005


class Failure(enum.Enum):
    """What kind of failure a :class:`sqlite3.Error` is, for a store deciding what to do."""

    CORRUPT = "corrupt"  # not a database, a malformed page, a schema version not ours
    BUSY = "busy"  # another process holds the lock past the busy timeout
    READ_ONLY = "read-only"  # this process may not write (or create) the file
    OTHER = "other"


class SchemaMismatch(sqlite3.DatabaseError):
    """A store's file carries a schema version this code does not read."""


@dataclass(frozen=True, slots=True)
class StoreFile:
    """One store's database file and how it is opened."""

    path: Path
    #: The statements that create the store's tables, each ``IF NOT EXISTS``.
    schema: str
    #: A read that fails unless the file is a database holding the store's tables.
    probe: str | None
    #: Seconds a statement waits for another process's lock.
    busy_timeout: float
    wal: bool = True
    #: ``PRAGMA synchronous`` (None: SQLite's default, FULL).
    synchronous: str | None = None
    #: The ``user_version`` the schema is kept at (None: not versioned). A new file
    #: (version 0) gets it; any other version is a :class:`SchemaMismatch`.
    version: int | None = None
    #: Opened on one thread and used on another (one operation at a time).
    shared_across_threads: bool = False

    def connect(self) -> sqlite3.Connection:
        """The database opened for reading and writing, created if need be, its schema
        made; raises :class:`sqlite3.Error` (the connection closed) when it cannot be."""
        db = self._open(str(self.path), uri=False)
        try:
            if self.wal:
                self._enter_wal(db)
            if self.synchronous is not None:
                db.execute(f"PRAGMA synchronous = {self.synchronous}")
            if self.version is not None:
                found = db.execute("PRAGMA user_version").fetchone()[0]
                if found not in (0, self.version):
                    raise SchemaMismatch(f"schema version {found}, not {self.version}")
            db.executescript(self.schema)
            if self.version is not None:
                db.execute(f"PRAGMA user_version = {self.version}")
            self._probe(db)
        except BaseException:
            db.close()
            raise
        return db

    def _enter_wal(self, db: sqlite3.Connection) -> None:
        """Switch ``db`` to WAL, waiting up to the busy timeout for another connection's
        write lock. SQLite answers a journal-mode switch blocked by a writer in rollback
        mode (another process creating the same file a moment earlier) with SQLITE_BUSY at
        once, without calling the busy handler, so the wait is done here."""
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if failure_of(exc) is not Failure.BUSY or time.monotonic() >= deadline:
                    raise
            time.sleep(_WAL_RETRY_S)

    def connect_read_only(self, *, immutable_too: bool = False) -> sqlite3.Connection:
        """The database opened for reading only; with ``immutable_too``, a file that
        cannot be read that way (its directory is read-only: no WAL side files) is read
        as immutable. Raises :class:`sqlite3.Error` when it cannot be read at all."""
        location = self.path.resolve().as_uri()
        try:
            return self._read_only(f"{location}?mode=ro")
        except sqlite3.Error:
            if not immutable_too:
                raise
        return self._read_only(f"{location}?mode=ro&immutable=1")

    def _read_only(self, uri: str) -> sqlite3.Connection:
        db = self._open(uri, uri=True)
        try:
            self._probe(db)
        except BaseException:
            db.close()
            raise
        return db

    def _open(self, target: str, *, uri: bool) -> sqlite3.Connection:
        db = sqlite3.connect(target, uri=uri, timeout=self.busy_timeout, isolation_level=None,
                             check_same_thread=not self.shared_across_threads)
        try:
            set_busy_timeout(db, self.busy_timeout)
        except BaseException:
            db.close()
            raise
        return db

    def _probe(self, db: sqlite3.Connection) -> None:
        if self.probe is not None:
            db.execute(self.probe).fetchall()


def set_busy_timeout(db: sqlite3.Connection, seconds: float) -> None:
    """How long ``db``'s next statements wait for another process's lock."""
    db.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")


@contextlib.contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction on ``db`` (in autocommit mode) that takes the write lock at once
    (``BEGIN IMMEDIATE``, waiting the busy timeout for another writer) instead of failing
    when a read inside it upgrades; committed on success, rolled back on an error."""
    with db:
        db.execute("BEGIN IMMEDIATE")
        yield db


def failure_of(exc: BaseException) -> Failure:
    """What kind of failure ``exc`` is, by SQLite's error name (not its message)."""
    if isinstance(exc, SchemaMismatch):
        return Failure.CORRUPT
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith("SQLITE_CORRUPT") or name == "SQLITE_NOTADB":
        return Failure.CORRUPT
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return Failure.BUSY
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        return Failure.READ_ONLY
    return Failure.OTHER


def reason(exc: BaseException) -> str:
    """``exc`` as the end of a warning: a lock is named as one, anything else as it says."""
    if failure_of(exc) is Failure.BUSY:
        return "it is locked by another process"
    return getattr(exc, "strerror", None) or str(exc)


def set_aside(path: Path) -> Path:
    """Move a corrupt database out of the way, with its write-ahead log (which holds
    committed pages not yet in the file); its shared-memory index is only removed.
    Returns the new name, ``<name>.corrupt-<UTC time>`` (``-2``, ``-3``... when taken).
    Raises :class:`OSError` when the file cannot be moved."""
    aside = _aside_name(path)
    os.replace(path, aside)
    log = path.with_name(f"{path.name}-wal")
    if log.exists():
        os.replace(log, aside.with_name(f"{aside.name}-wal"))
    with contextlib.suppress(FileNotFoundError):
        path.with_name(f"{path.name}-shm").unlink()
    return aside


def discard(path: Path) -> None:
    """Remove a database and its side files (a store whose content is worth nothing once
    its runs have ended)."""
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")


def _aside_name(path: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    candidate = path.with_name(f"{path.name}.corrupt-{stamp}")
    number = 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.corrupt-{stamp}-{number}")
    return candidate
