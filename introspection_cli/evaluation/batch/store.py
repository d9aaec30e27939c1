"""Where the ids of submitted batches are kept, so an interrupted run resumes them.

``batches.sqlite3`` beside the verdict cache records each batch the provider
accepted, with the verdict-cache key of every request it holds. A run looks
up its uncached requests there first: those held by a batch not yet collected
are waited for in that batch, never submitted again; only the others go into
new batches. So a run interrupted in any way (Ctrl-C, a crash, a closed laptop)
and started again pays once, and a run whose requests changed (an edited
rubric, another model) never takes results from a batch of other requests. A
batch is marked collected once its results are in the verdict cache; its
requests are then forgotten (a failed one is submitted anew by the next run).

The store is disposable like the cache: a corrupt file is renamed aside and a
fresh one made, with a warning. It holds ids and hashes, never a key or a prompt.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from introspection_cli.errors import ConfigError
from introspection_cli.evaluation.sqlite_store import (
    Failure,
    StoreFile,
    failure_of,
    immediate,
    set_aside,
)

STORE_FILE = "batches.sqlite3"
_SCHEMA_VERSION = 1
_BUSY_TIMEOUT_S = 10.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    provider TEXT NOT NULL,
    batch_id TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    requests INTEGER NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    collected_at TEXT,
    PRIMARY KEY (provider, batch_id)
);
CREATE TABLE IF NOT EXISTS batch_requests (
    key TEXT NOT NULL,
    provider TEXT NOT NULL,
    batch_id TEXT NOT NULL,
    PRIMARY KEY (provider, batch_id, key)
);
"""


@dataclass(frozen=True, slots=True)
class StoredBatch:
    """A batch submitted earlier and not yet collected."""

    provider: str
    batch_id: str
    created_at: str
    keys: frozenset[str]


class BatchStore:
    """The batch ids of one cache directory. Call :meth:`close` when done."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / STORE_FILE
        #: Things the user should know (a corrupt store set aside, a failed write).
        self.warnings: list[str] = []
        self._file = StoreFile(self.path, _SCHEMA, "SELECT count(*) FROM batches",
                               _BUSY_TIMEOUT_S, version=_SCHEMA_VERSION)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._db = self._file.connect()
        except sqlite3.Error as exc:
            if failure_of(exc) is not Failure.CORRUPT:  # cannot open or write it
                raise self._unusable(exc) from exc
            self._db = self._replace(exc)
        except OSError as exc:
            raise self._unusable(exc) from exc

    def _replace(self, problem: sqlite3.Error) -> sqlite3.Connection:
        """Set an unreadable store aside and start a new one, with a warning."""
        try:
            aside = set_aside(self.path)
            db = self._file.connect()
        except (OSError, sqlite3.Error) as exc:
            raise self._unusable(exc) from exc
        self.warnings.append(
            f"the batch-id store {self.path} was unreadable ({problem}); it was renamed to "
            f"{aside.name} and a new one started (batches submitted before are not resumed)")
        return db

    def _unusable(self, exc: Exception) -> ConfigError:
        return ConfigError(
            f"cannot keep batch ids in {self.path}: {exc}; set INTROSPECTION_CACHE_DIR to a "
            "writable directory (without it an interrupted --batch run could not be resumed)")

    def open_batches(self, provider: str, keys: Collection[str]) -> list[StoredBatch]:
        """The uncollected batches of ``provider`` holding any of ``keys``, newest first."""
        held: dict[str, set[str]] = {}
        created: dict[str, str] = {}
        try:
            rows = self._db.execute(
                "SELECT b.batch_id, b.created_at, r.key FROM batches b JOIN batch_requests r "
                "ON r.provider = b.provider AND r.batch_id = b.batch_id "
                "WHERE b.provider = ? AND b.collected_at IS NULL", (provider,)).fetchall()
        except sqlite3.Error as exc:
            self.warnings.append(f"could not read the batch-id store {self.path} ({exc}); "
                                 "earlier batches are not resumed")
            return []
        for batch_id, created_at, key in rows:
            held.setdefault(batch_id, set()).add(key)
            created[batch_id] = created_at
        wanted = [batch_id for batch_id, batch_keys in held.items()
                  if not batch_keys.isdisjoint(keys)]
        wanted.sort(key=lambda batch_id: created[batch_id], reverse=True)
        return [StoredBatch(provider, batch_id, created[batch_id], frozenset(held[batch_id]))
                for batch_id in wanted]

    def record(self, provider: str, batch_id: str, endpoint: str, keys: Iterable[str]) -> None:
        """Remember a batch the provider just accepted, with the keys of its requests."""
        keys = list(keys)
        try:
            with immediate(self._db) as db:
                db.execute(
                    "INSERT OR REPLACE INTO batches (provider, batch_id, endpoint, requests) "
                    "VALUES (?, ?, ?, ?)", (provider, batch_id, endpoint, len(keys)))
                db.executemany(
                    "INSERT OR IGNORE INTO batch_requests (key, provider, batch_id) "
                    "VALUES (?, ?, ?)", ((key, provider, batch_id) for key in keys))
        except sqlite3.Error as exc:
            self.warnings.append(
                f"batch {batch_id} could not be saved in {self.path} ({exc}); if this run "
                "is interrupted, the next one submits its requests again")

    def collected(self, provider: str, batch_id: str) -> None:
        """Mark a batch done with: its results are in the cache, its requests forgotten."""
        try:
            with immediate(self._db) as db:
                db.execute(
                    "UPDATE batches SET collected_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') "
                    "WHERE provider = ? AND batch_id = ?", (provider, batch_id))
                db.execute("DELETE FROM batch_requests WHERE provider = ? AND batch_id = ?",
                           (provider, batch_id))
        except sqlite3.Error as exc:
            self.warnings.append(
                f"batch {batch_id} could not be marked collected in {self.path} ({exc}); "
                "the next run reads its results again (at no cost)")

    def close(self) -> None:
        self._db.close()
