"""Which requests the live runs on one cache directory are asking a provider for, now.

Two ``judges eval`` runs of the same rows on one cache (started together, or one
while the other runs) must not pay for a request twice. Before a run sends a
request the verdict cache does not hold, it *claims* the request's cache key in
``claims.sqlite3`` beside the cache. A key another live run has claimed is not
sent but waited for (:mod:`.sharing`): its verdict reaches the cache, or the claim
is let go without one (the other run got an error, or ended) and is taken over.

A waiting run looks in the cache first: a verdict there settles a sample whether
or not its claim is still held, so a claim need only be let go when its sample
ends without a verdict (an error), and, all at once, when the run ends (one
statement, not a transaction per verdict). A killed run lets go of nothing, so a
claim is only as good as its owner is alive: each run holds an exclusive ``flock``
on its own file beside the board (``claims.sqlite3.<run>.lock``) for as long as it lives,
and the kernel drops that lock when the process dies, however it dies. A claim
whose owner's file is not locked is stale and is taken over. (A lock, not a pid:
pids are reused.) The file is locked before it gets its name, so a named file that
is not locked is never a run starting.

Like the cache, the board only saves money: when it cannot be opened or written
(locked, read-only, a file system without locks) the run goes on without it, with
a warning, and may then pay for a request another run is making at that moment.
A run opens it only to claim something: a fully cached run never does. Used from
one thread at a time (the cache's worker thread).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import socket
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from introspection_cli.evaluation.sqlite_store import (
    Failure,
    StoreFile,
    discard,
    failure_of,
    immediate,
    reason,
)

CLAIMS_FILE = "claims.sqlite3"
#: How long one claim or release waits for another run's (they take milliseconds).
_TIMEOUT_S = 2.0
#: Keys per statement (SQLite allows at least 999 parameters).
_CHUNK = 500
_OWNER = re.compile(r"[0-9a-f]{16}")
_CLAIMANT = re.compile(rf"{re.escape(CLAIMS_FILE)}\.([0-9a-f]{{16}})\.lock")
_HELD_BY_OTHERS = "SELECT key, owner FROM claims WHERE owner != ? AND key IN "
_RELEASE = "DELETE FROM claims WHERE owner = ? AND key IN "
_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS owners (
    owner TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class Claimant:
    """Another live run holding a claim, as a waiting run names it."""

    pid: int
    host: str

    def __str__(self) -> str:
        here = self.host == socket.gethostname()
        return f"pid {self.pid}" if here else f"pid {self.pid} on {self.host}"


class ClaimBoard:
    """This run's claims on the requests of one cache directory. Call :meth:`close`."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / CLAIMS_FILE
        self._directory = directory
        #: What the board could not do, a line each.
        self.warnings: list[str] = []
        self._owner = os.urandom(8).hex()
        self._db: sqlite3.Connection | None = None
        self._lock: int | None = None  # our flock'd file, held while the run lives
        self._usable = True
        self._held: set[str] = set()
        # Opened on the caller's thread, used on the cache's worker thread; claims do not
        # outlive their runs, so nothing waits for the disk.
        self._file = StoreFile(self.path, _SCHEMA, None, _TIMEOUT_S, synchronous="OFF",
                               shared_across_threads=True)

    # -- claiming ------------------------------------------------------------------

    def claim(self, keys: Iterable[str]) -> dict[str, Claimant]:
        """Claim ``keys`` for this run; returns those another live run holds, and who.

        The claims of a run that has died are taken over. Without a usable board every
        key is this run's (nothing is returned).
        """
        wanted = [key for key in dict.fromkeys(keys) if key not in self._held]
        if not wanted or not self._ready():
            return {}
        assert self._db is not None
        try:
            with immediate(self._db) as db:
                others = self._insert(db, wanted)
                dead = {owner for owner in set(others.values()) if not self._alive(owner)}
                if dead:  # within this transaction their keys are free for us
                    self._forget(db, dead)
                    self._insert(db, [key for key, owner in others.items() if owner in dead])
                    others = {key: owner for key, owner in others.items()
                              if owner not in dead}
                holders = self._holders(db, set(others.values()))
        except sqlite3.Error as exc:
            self._give_up(exc)
            return {}
        self._held.update(key for key in wanted if key not in others)
        return {key: holders.get(owner, Claimant(0, "?")) for key, owner in others.items()}

    def release(self, keys: Iterable[str]) -> None:
        """Let go of this run's claims on ``keys`` (their samples ended in errors)."""
        mine = [key for key in dict.fromkeys(keys) if key in self._held]
        if not mine or self._db is None:
            return
        self._held.difference_update(mine)
        try:
            with immediate(self._db) as db:
                for start in range(0, len(mine), _CHUNK):
                    chunk = mine[start:start + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    db.execute(_RELEASE + f"({marks})", (self._owner, *chunk))
        except sqlite3.Error as exc:  # held until this run ends: then stale
            self._give_up(exc)

    def close(self) -> None:
        """Let go of every claim of this run, and of its claimant file."""
        if self._db is not None:
            try:
                with immediate(self._db) as db:
                    self._forget(db, {self._owner})
            except sqlite3.Error:
                pass  # they are stale as soon as this process ends
            self._db.close()
            self._db = None
        self._held.clear()
        if self._lock is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._claimant(self._owner))
            os.close(self._lock)
            self._lock = None

    # -- the database ----------------------------------------------------------------

    def _ready(self) -> bool:
        """Open the board (and register this run) on first use; False when unusable."""
        if self._db is not None or not self._usable:
            return self._db is not None
        try:
            self._register()
            self._db = self._connect_afresh_if_corrupt()
            with immediate(self._db) as db:
                db.execute("INSERT OR REPLACE INTO owners (owner, pid, host) VALUES (?, ?, ?)",
                           (self._owner, os.getpid(), socket.gethostname()))
                self._sweep(db)
        except (OSError, sqlite3.Error) as exc:
            self._give_up(exc)
            return False
        return True

    def _connect_afresh_if_corrupt(self) -> sqlite3.Connection:
        """The board's database; a corrupt one is removed and a new one made (it held
        only the claims of runs, which then may pay for a request twice)."""
        try:
            return self._file.connect()
        except sqlite3.DatabaseError as exc:
            if failure_of(exc) is not Failure.CORRUPT:
                raise
            discard(self.path)
            self.warnings.append(f"the claims store {self.path} was corrupt ({exc}); a new "
                                 "one was started")
            return self._file.connect()

    def _insert(self, db: sqlite3.Connection, keys: Sequence[str]) -> dict[str, str]:
        """Claim the free ones of ``keys``; the others' owners, by key."""
        db.executemany("INSERT OR IGNORE INTO claims (key, owner) VALUES (?, ?)",
                       [(key, self._owner) for key in keys])
        others: dict[str, str] = {}
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start:start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            others.update(db.execute(_HELD_BY_OTHERS + f"({marks})",
                                     (self._owner, *chunk)).fetchall())
        return others

    @staticmethod
    def _forget(db: sqlite3.Connection, owners: set[str]) -> None:
        for owner in owners:
            db.execute("DELETE FROM claims WHERE owner = ?", (owner,))
            db.execute("DELETE FROM owners WHERE owner = ?", (owner,))

    @staticmethod
    def _holders(db: sqlite3.Connection, owners: set[str]) -> dict[str, Claimant]:
        found: dict[str, Claimant] = {}
        for owner in owners:
            row = db.execute("SELECT pid, host FROM owners WHERE owner = ?", (owner,)).fetchone()
            if row is not None:
                found[owner] = Claimant(int(row[0]), str(row[1]))
        return found

    def _sweep(self, db: sqlite3.Connection) -> None:
        """Forget the runs that died holding claims (or left a claimant file)."""
        owners = {row[0] for row in db.execute("SELECT owner FROM owners")}
        owners |= {row[0] for row in db.execute("SELECT DISTINCT owner FROM claims")}
        with contextlib.suppress(OSError), os.scandir(self._directory) as entries:
            owners |= {found.group(1) for found in map(_CLAIMANT.fullmatch,
                                                       (entry.name for entry in entries))
                       if found is not None}
        owners.discard(self._owner)
        self._forget(db, {owner for owner in owners if not self._alive(owner)})

    # -- who is alive --------------------------------------------------------------

    def _register(self) -> None:
        """Make this run's claimant file, locked before it gets its name."""
        self._directory.mkdir(parents=True, exist_ok=True)
        temporary = self._directory / f".{CLAIMS_FILE}.{self._owner}.new"
        fd = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.replace(temporary, self._claimant(self._owner))
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        self._lock = fd

    def _alive(self, owner: str) -> bool:
        """Whether the run ``owner`` still holds its claimant file's lock (a file that
        is gone, or not locked, is a run that has ended; its file is removed)."""
        if _OWNER.fullmatch(owner) is None:
            return False  # not one of ours: nothing can hold it
        path = self._claimant(owner)
        try:
            fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return False
        except OSError:
            return True  # cannot tell: leave its claims alone
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held (BlockingIOError), or cannot tell
            return True
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)  # still holding its lock: no run can be starting on it
            return False
        finally:
            os.close(fd)

    def _claimant(self, owner: str) -> Path:
        return self._directory / f"{CLAIMS_FILE}.{owner}.lock"

    def _give_up(self, exc: Exception) -> None:
        """Stop using the board, with a warning; this run's claims go stale when it ends."""
        self._usable = False
        if self._db is not None:
            self._db.close()
            self._db = None
        self._held.clear()
        self.warnings.append(
            f"the claims store {self.path} could not be used ({reason(exc)}): this run cannot see "
            "which requests another run on this cache is making right now, and may pay for "
            "some of them a second time")
