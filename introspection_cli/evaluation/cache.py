"""An on-disk cache of successful verdicts, shared safely by concurrent runs.

SQLite in WAL mode with a busy timeout: two ``judges eval`` processes may read
and write the same cache at once. The key covers everything that can change a
verdict (provider, model, endpoint, parameters, the exact messages, the tool
schema, the sample index), so editing one rubric re-calls only that judge.
Only valid verdicts are stored; errors are retried on the next run. The API key
is never part of a key or a value.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

from introspection_cli.errors import ConfigError
from introspection_cli.evaluation.providers.interface import ModelRequest, without_userinfo
from introspection_cli.evaluation.verdict import InvalidReply, ParsedVerdict, validate_verdict
from introspection_cli.fixture.canonical import canonical_json

CACHE_DIR_ENV = "INTROSPECTION_CACHE_DIR"
CACHE_FILE = "verdicts.sqlite3"
#: Bumped when the key layout changes, so old entries are simply never hit again.
KEY_VERSION = 1
_BUSY_TIMEOUT_S = 30.0
#: Verdicts are written in batches: one transaction per verdict costs more than the call
#: saves at high concurrency. An interrupted run loses at most this many.
_BATCH = 32

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    key TEXT PRIMARY KEY,
    verdict TEXT NOT NULL,
    reasoning TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
)
"""


def default_cache_dir() -> Path:
    """``$INTROSPECTION_CACHE_DIR``, else the platform's user cache dir for introspection."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    import platformdirs  # only runs that use the cache pay for it

    return Path(platformdirs.user_cache_dir("introspection"))


def cache_key(*, provider: str, endpoint: str, request: ModelRequest, sample: int) -> str:
    """SHA-256 over the canonical JSON of everything that determines one sample's answer."""
    material = {
        "v": KEY_VERSION,
        "provider": provider,
        "endpoint": without_userinfo(endpoint),  # credentials in a URL are not an identity
        "model": request.model,
        "parameters": {"temperature": request.temperature,
                       "max_output_tokens": request.max_output_tokens},
        "messages": [{"role": "system", "content": request.system},
                     {"role": "user", "content": request.user}],
        "tool": {"name": request.tool_name, "description": request.tool_description,
                 "schema": dict(request.tool_schema)},
        "sample": sample,
    }
    # canonical_json gives the rfc8785 package's bytes (so keys are unchanged), through
    # the C JSON encoder unless the text needs the reference: ~10x faster on prompts.
    return hashlib.sha256(canonical_json(material)).hexdigest()


class VerdictCache:
    """Get and put verdicts by :func:`cache_key`. Use as a context manager."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / CACHE_FILE
        self.write_failures = 0
        self._pending: list[tuple[str, str, str]] = []
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S,
                                       isolation_level=None)
            self._db.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(
                f"cannot open the verdict cache at {self.path}: {exc}; set "
                f"{CACHE_DIR_ENV} to a writable directory or pass --no-cache") from exc

    def get(self, key: str) -> ParsedVerdict | None:
        """The cached verdict for ``key``; ``None`` when absent or no longer valid."""
        try:
            row = self._db.execute(
                "SELECT verdict, reasoning FROM verdicts WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None  # an unreadable entry is a miss, not a failed run
        if row is None:
            return None
        parsed = validate_verdict({"verdict": row[0], "reasoning": row[1]})
        return None if isinstance(parsed, InvalidReply) else parsed

    def put(self, key: str, verdict: ParsedVerdict) -> None:
        """Queue a valid verdict for writing; written in batches and on :meth:`close`."""
        self._pending.append((key, verdict.verdict, verdict.reasoning))
        if len(self._pending) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        """Write queued verdicts in one transaction. A failed write is counted, never fatal."""
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        try:
            with self._db:  # the connection is in autocommit mode: open a transaction
                # IMMEDIATE takes the write lock now, waiting (busy_timeout) for another
                # run's write to finish, instead of failing when a read upgrades.
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany(
                    "INSERT OR REPLACE INTO verdicts (key, verdict, reasoning) VALUES (?, ?, ?)",
                    batch)
        except sqlite3.Error:
            self.write_failures += len(batch)

    def close(self) -> None:
        self.flush()
        self._db.close()

    def __enter__(self) -> VerdictCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
