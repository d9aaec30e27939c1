"""An evaluation ledger as versions before the exposure file wrote it: test rows included.

The ledger no longer records a row evaluated in ``test`` (the recipe's exposure file
does), so a ledger holding some is one an earlier version left behind; tests build it
here, in that version's schema, to check what is migrated from it and what is not.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from introspection_cli.evaluation.ledger import LEDGER_FILE

#: The table as those versions made it, written out here on purpose rather than imported:
#: it is what migration must keep reading, whatever the ledger's own schema becomes.
_OLD_SCHEMA = """
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


def write_old_ledger(cache: Path, judge: str, fingerprint: str,
                     rows: Iterable[tuple[str, str, str]]) -> Path:
    """Add ``(conversation_id, split, outcome)`` rows of ``judge`` at ``fingerprint`` to
    the ledger in ``cache``, as an earlier version recorded them; the ledger's path."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / LEDGER_FILE
    with sqlite3.connect(path) as db:
        db.execute(_OLD_SCHEMA)
        db.executemany("INSERT OR REPLACE INTO evaluations (judge, fingerprint, "
                       "conversation_id, split, outcome) VALUES (?, ?, ?, ?, ?)",
                       [(judge, fingerprint, *row) for row in rows])
    db.close()
    return path
