"""The one way the run's SQLite stores open their files and recognise a broken one."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from introspection_cli.evaluation.sqlite_store import (
    Failure,
    SchemaMismatch,
    StoreFile,
    discard,
    failure_of,
    immediate,
    reason,
    set_aside,
)

SCHEMA = "CREATE TABLE IF NOT EXISTS things (name TEXT PRIMARY KEY);"


def store(path: Path, **options: object) -> StoreFile:
    return StoreFile(path, SCHEMA, "SELECT count(*) FROM things", 0.2, **options)  # type: ignore[arg-type]


def test_a_new_file_gets_its_schema_pragmas_and_version(tmp_path: Path) -> None:
    db = store(tmp_path / "s.sqlite3", synchronous="OFF", version=3).connect()
    try:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA synchronous").fetchone() == (0,)
        assert db.execute("PRAGMA user_version").fetchone() == (3,)
        assert db.execute("PRAGMA busy_timeout").fetchone() == (200,)
        with immediate(db):
            db.execute("INSERT INTO things VALUES ('a')")
    finally:
        db.close()
    again = store(tmp_path / "s.sqlite3", version=3).connect()
    assert again.execute("SELECT name FROM things").fetchall() == [("a",)]
    again.close()


def test_another_schema_version_is_a_corrupt_file_and_is_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 9")
    with pytest.raises(SchemaMismatch, match="schema version 9, not 1") as info:
        store(path, version=1).connect()
    assert failure_of(info.value) is Failure.CORRUPT
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (9,)


@pytest.mark.parametrize("content", [b"not a database at all" * 100,
                                     b"SQLite format 3\x00" + b"\x01" * 4000])
def test_garbage_is_corrupt_whichever_way_it_is_opened(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "s.sqlite3"
    path.write_bytes(content)
    for opening in (store(path).connect, store(path).connect_read_only):
        with pytest.raises(sqlite3.DatabaseError) as info:
            opening()
        assert failure_of(info.value) is Failure.CORRUPT, info.value


def test_a_lock_held_elsewhere_is_busy_within_the_timeout(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store(path, wal=False).connect().close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(sqlite3.OperationalError) as info:  # the probe waits 0.2 s
            store(path, wal=False).connect_read_only()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert failure_of(info.value) is Failure.BUSY
    assert reason(info.value) == "it is locked by another process"


def test_a_write_through_a_read_only_open_is_read_only(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store(path).connect().close()
    db = store(path).connect_read_only()
    with pytest.raises(sqlite3.OperationalError) as info:
        db.execute("INSERT INTO things VALUES ('a')")
    db.close()
    assert failure_of(info.value) is Failure.READ_ONLY
    assert failure_of(sqlite3.OperationalError("no such table: x")) is Failure.OTHER


def test_a_missing_file_is_not_created_by_a_read_only_open(tmp_path: Path) -> None:
    with pytest.raises(sqlite3.OperationalError):
        store(tmp_path / "missing.sqlite3").connect_read_only(immutable_too=True)
    assert not (tmp_path / "missing.sqlite3").exists()


def test_a_file_set_aside_keeps_its_log_and_loses_its_index(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    for suffix, content in (("", b"db"), ("-wal", b"log"), ("-shm", b"index")):
        Path(f"{path}{suffix}").write_bytes(content)
    aside = set_aside(path)
    assert aside.name.startswith("s.sqlite3.corrupt-") and aside.name.endswith("Z")
    assert aside.read_bytes() == b"db"
    assert aside.with_name(f"{aside.name}-wal").read_bytes() == b"log"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([aside.name, f"{aside.name}-wal"])
    path.write_bytes(b"again")  # set aside within the same second: a name of its own
    second = set_aside(path)
    assert second != aside and second.read_bytes() == b"again" and aside.read_bytes() == b"db"


def test_a_discarded_store_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").write_bytes(b"x")
    discard(path)
    discard(path)  # nothing left to remove: not an error
    assert list(tmp_path.iterdir()) == []


def test_a_file_another_connection_is_still_creating_is_waited_for(tmp_path: Path) -> None:
    # Two runs opening one new store at once: the first holds the write lock in rollback
    # mode (before its own WAL switch). SQLite refuses the second's WAL switch with
    # SQLITE_BUSY at once, without its busy handler; the store waits as for any lock.
    path = tmp_path / "s.sqlite3"
    first = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    first.executescript(SCHEMA)
    first.execute("BEGIN IMMEDIATE")
    first.execute("INSERT INTO things VALUES ('a')")
    releases = threading.Timer(0.05, lambda: first.execute("COMMIT"))
    releases.start()
    try:
        db = store(path).connect()  # waits at most its busy timeout, 0.2 s
    finally:
        releases.join()
        first.close()
    try:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("SELECT name FROM things").fetchall() == [("a",)]
    finally:
        db.close()


def test_a_writer_that_keeps_its_lock_is_busy_after_the_timeout(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.executescript(SCHEMA)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO things VALUES ('a')")
    started = time.monotonic()
    try:
        with pytest.raises(sqlite3.OperationalError) as info:
            store(path).connect()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert failure_of(info.value) is Failure.BUSY
    assert time.monotonic() - started >= 0.2
