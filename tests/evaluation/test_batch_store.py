"""The batch-id store: what it remembers, what it forgets, and that it is disposable."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from introspection_cli.errors import ConfigError
from introspection_cli.evaluation.batch.store import STORE_FILE, BatchStore


def test_open_batches_are_found_by_any_of_their_requests(tmp_path: Path) -> None:
    store = BatchStore(tmp_path)
    store.record("openai", "batch_1", "http://x/v1", ["k1", "k2"])
    store.record("openai", "batch_2", "http://x/v1", ["k3"])
    store.record("anthropic", "batch_1", "http://y", ["k1"])
    found = store.open_batches("openai", {"k2", "k9"})
    assert [(b.batch_id, b.keys) for b in found] == [("batch_1", frozenset({"k1", "k2"}))]
    assert store.open_batches("openai", {"k9"}) == []
    store.collected("openai", "batch_1")
    assert store.open_batches("openai", {"k1", "k2"}) == []
    assert [b.batch_id for b in store.open_batches("anthropic", {"k1"})] == ["batch_1"]
    store.close()
    # Kept across processes: a new store on the same directory sees the same batches.
    again = BatchStore(tmp_path)
    assert [b.batch_id for b in again.open_batches("openai", {"k3"})] == ["batch_2"]
    assert again.warnings == []
    again.close()


def test_the_newest_batch_comes_first(tmp_path: Path) -> None:
    store = BatchStore(tmp_path)
    store.record("openai", "old", "e", ["k1"])
    store._db.execute("UPDATE batches SET created_at = '2020-01-01T00:00:00Z'")
    store.record("openai", "new", "e", ["k1"])
    assert [b.batch_id for b in store.open_batches("openai", {"k1"})] == ["new", "old"]
    store.close()


@pytest.mark.parametrize("content", [b"garbage" * 200, b"SQLite format 3\x00" + b"\x01" * 4000])
def test_a_corrupt_store_is_renamed_aside_and_replaced(tmp_path: Path, content: bytes) -> None:
    (tmp_path / STORE_FILE).write_bytes(content)
    store = BatchStore(tmp_path)
    (warning,) = store.warnings
    assert "renamed" in warning and "not resumed" in warning
    store.record("openai", "b", "e", ["k"])
    assert [b.batch_id for b in store.open_batches("openai", {"k"})] == ["b"]
    store.close()
    (aside,) = tmp_path.glob(f"{STORE_FILE}.corrupt-*")
    assert aside.read_bytes() == content


def test_a_store_from_another_schema_version_is_set_aside(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / STORE_FILE) as db:
        db.execute("PRAGMA user_version = 99")
    store = BatchStore(tmp_path)
    assert "schema version 99" in store.warnings[0]
    store.close()


def test_a_directory_that_is_a_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="cannot keep batch ids"):
        BatchStore(tmp_path / "file")


def test_a_failed_write_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    store = BatchStore(tmp_path)
    blocker = sqlite3.connect(tmp_path / STORE_FILE, timeout=0)
    blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    store._db.execute("PRAGMA busy_timeout = 10")
    store.record("openai", "b", "e", ["k"])
    blocker.rollback()
    blocker.close()
    assert "could not be saved" in store.warnings[0]
    store.close()
