"""The verdict cache: what the key covers, what is stored, and two processes at once."""

from __future__ import annotations

import dataclasses
import multiprocessing
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.evaluation.cache import (
    KeyMaker,
    VerdictCache,
    cache_key,
    default_cache_dir,
)
from introspection_cli.evaluation.providers.interface import ModelRequest
from introspection_cli.evaluation.verdict import ParsedVerdict, stored_verdict, validate_verdict

REQUEST = ModelRequest(model="m", system="sys", user="user", tool_name="submit_verdict",
                       tool_description="d", tool_schema={"type": "object"},
                       temperature=0.0, max_output_tokens=100)


def key(request: ModelRequest = REQUEST, *, provider: str = "openai",
        endpoint: str = "http://e/v1", sample: int = 0) -> str:
    return cache_key(provider=provider, endpoint=endpoint, request=request, sample=sample)


@pytest.mark.parametrize("changed", [
    {"provider": "anthropic"}, {"endpoint": "http://other/v1"}, {"sample": 1},
    {"request": dataclasses.replace(REQUEST, model="m2")},
    {"request": dataclasses.replace(REQUEST, system="sys ")},
    {"request": dataclasses.replace(REQUEST, user="user2")},
    {"request": dataclasses.replace(REQUEST, temperature=0.5)},
    {"request": dataclasses.replace(REQUEST, max_output_tokens=101)},
    {"request": dataclasses.replace(REQUEST, tool_schema={"type": "object", "x": 1})},
    {"request": dataclasses.replace(REQUEST, tool_description="d2")},
])
def test_every_part_of_the_request_changes_the_key(changed: dict[str, object]) -> None:
    assert key(**changed) != key()  # type: ignore[arg-type]


def test_key_is_stable() -> None:
    assert key() == key(dataclasses.replace(REQUEST))


def test_a_known_key_never_changes() -> None:
    # Users' caches hold verdicts under these keys: a change of layout must bump KEY_VERSION.
    assert key() == "e6e230aab9458f0f8f80ff37175c357316cc4bea2148e3c1894cc61753d6b5bf"


_texts = st.text(st.characters(codec="utf-8")) | st.sampled_from(
    ["", "é €", "\u2028\x7f\x00\"\\", "1234567890123456789", "\U0001f600\ue000"])


@given(system=_texts, user=_texts, model=_texts, endpoint=_texts,
       temperature=st.none() | st.floats(0, 2) | st.integers(0, 2),
       max_tokens=st.none() | st.integers(1, 10**6), samples=st.integers(1, 12))
def test_the_key_maker_gives_cache_key_byte_for_byte(
        system: str, user: str, model: str, endpoint: str, temperature: float | None,
        max_tokens: int | None, samples: int) -> None:
    template = dataclasses.replace(REQUEST, system=system, user="", model=model,
                                   temperature=temperature, max_output_tokens=max_tokens)
    maker = KeyMaker(provider="anthropic", endpoint=endpoint, template=template)
    request = dataclasses.replace(template, user=user, user_prefix_length=len(user) // 2)
    assert maker.keys(request, samples) == [
        key(request, provider="anthropic", endpoint=endpoint, sample=sample)
        for sample in range(samples)]


def test_the_key_maker_takes_the_general_way_for_another_judge() -> None:
    maker = KeyMaker(provider="openai", endpoint="http://e/v1", template=REQUEST)
    other = dataclasses.replace(REQUEST, system="another system prompt")
    assert maker.keys(other, 2) == [key(other), key(other, sample=1)]


def test_put_get_round_trip_and_miss(tmp_path: Path) -> None:
    with VerdictCache(tmp_path) as cache:
        assert cache.get("k") is None
        cache.put("k", ParsedVerdict("fail", "because"))
    with VerdictCache(tmp_path) as reopened:
        assert reopened.get("k") == ParsedVerdict("fail", "because")


def test_env_var_sets_the_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("INTROSPECTION_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"


def test_an_unusable_directory_is_not_used_with_a_warning(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a dir")
    with VerdictCache(blocker / "cache") as cache:
        cache.put("k", ParsedVerdict("pass", "r"))
        assert cache.get("k") is None
    assert len(cache.warnings) == 1 and "is not used" in cache.warnings[0]
    assert cache.write_failures == 0  # the warning says it all: nothing was meant to be saved


def _writer(directory: str, prefix: str, count: int) -> None:
    with VerdictCache(Path(directory)) as cache:
        for i in range(count):
            cache.put(f"{prefix}{i}", ParsedVerdict("pass", f"{prefix}{i}"))
            cache.get(f"{prefix}{i}")


def test_two_processes_write_at_once(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(tmp_path), p, 200)) for p in "ab"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    with VerdictCache(tmp_path) as cache:
        assert all(cache.get(f"{p}{i}") == ParsedVerdict("pass", f"{p}{i}")
                   for p in "ab" for i in range(200))


def _reference_key(request: ModelRequest, *, provider: str, endpoint: str, sample: int) -> str:
    """The key as first defined: SHA-256 of the rfc8785 package's serialisation."""
    import hashlib

    import rfc8785

    material = {
        "v": 1, "provider": provider, "endpoint": endpoint, "model": request.model,
        "parameters": {"temperature": request.temperature,
                       "max_output_tokens": request.max_output_tokens},
        "messages": [{"role": "system", "content": request.system},
                     {"role": "user", "content": request.user}],
        "tool": {"name": request.tool_name, "description": request.tool_description,
                 "schema": dict(request.tool_schema)},
        "sample": sample,
    }
    return hashlib.sha256(rfc8785.dumps(material)).hexdigest()


@pytest.mark.parametrize("request_", [
    REQUEST,
    dataclasses.replace(REQUEST, temperature=0.7, max_output_tokens=None),
    dataclasses.replace(REQUEST, temperature=1.0),  # written "1" by RFC 8785
    dataclasses.replace(REQUEST, user="tabs\tquotes\" control\x01 é 日本 😀 \ue000 \U0001f600"),
    dataclasses.replace(REQUEST, tool_schema={"\U0001f600": 1, "\ue000": 2, "b": [1e21, 1e-7]}),
], ids=["plain", "float", "integral-float", "unicode", "key-order-and-exponents"])
def test_keys_are_the_rfc8785_keys_so_existing_caches_still_hit(request_: ModelRequest) -> None:
    assert key(request_, sample=2) == _reference_key(request_, provider="openai",
                                                     endpoint="http://e/v1", sample=2)


@given(st.one_of(st.sampled_from(["pass", "fail", "not_applicable", "PASS", ""]), st.text()),
       st.one_of(st.text(), st.sampled_from([" ", "\u2003\n", "x" * 4097, "é" * 5000]),
                 st.none(), st.integers()))
def test_a_stored_verdict_is_read_back_as_validate_verdict_reads_it(verdict: str,
                                                                    reasoning: object) -> None:
    assert stored_verdict(verdict, reasoning) == validate_verdict(
        {"verdict": verdict, "reasoning": reasoning})


# --- token usage per entry ------------------------------------------------------------------

#: The verdicts table as caches written before token usage was kept have it.
_OLD_SCHEMA = """
CREATE TABLE verdicts (key TEXT PRIMARY KEY, verdict TEXT NOT NULL, reasoning TEXT NOT NULL,
                       created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')));
CREATE TABLE prompts (memo TEXT PRIMARY KEY, key TEXT NOT NULL);
INSERT INTO verdicts (key, verdict, reasoning) VALUES ('old', 'pass', 'from before');
INSERT INTO prompts (memo, key) VALUES ('old-memo', 'old');
"""


def _old_cache(directory: Path) -> None:
    import sqlite3

    directory.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(directory / "verdicts.sqlite3") as db:
        db.executescript(_OLD_SCHEMA)


def test_an_entry_keeps_the_tokens_its_reply_used(tmp_path: Path) -> None:
    """A cached row's tokens come from the cache: what the reply used when it was paid for."""
    from introspection_cli.evaluation.outcomes import Tokens

    spent = Tokens(1200, 80, 1024, 0)
    with VerdictCache(tmp_path) as cache:
        cache.put("k", ParsedVerdict("pass", "because", spent), "memo-k")
    with VerdictCache(tmp_path) as reopened:
        assert reopened.get("k") == ParsedVerdict("pass", "because")
        assert reopened.get_many(["k"])["k"].tokens == spent
        assert reopened.get_memos(["memo-k"])["memo-k"][1].tokens == spent
    # A run that reports no tokens does not pay to read them: the verdict alone.
    with VerdictCache(tmp_path, read_tokens=False) as verdicts_only:
        assert verdicts_only.get_many(["k"])["k"] == ParsedVerdict("pass", "because")
        assert verdicts_only.get_many(["k"])["k"].tokens is None
        assert verdicts_only.get_memos(["memo-k"])["memo-k"][1].tokens is None


def test_an_entry_from_an_older_cache_has_unknown_tokens_not_zero(tmp_path: Path) -> None:
    _old_cache(tmp_path)
    from introspection_cli.evaluation.outcomes import Tokens

    with VerdictCache(tmp_path) as cache:  # opening adds the columns; old entries stay
        old = cache.get("old")
        assert old == ParsedVerdict("pass", "from before") and old.tokens is None
        assert cache.get_memos(["old-memo"])["old-memo"][1].tokens is None
        cache.put("new", ParsedVerdict("fail", "now", Tokens(10, 2, 0, 0)))
    with VerdictCache(tmp_path) as cache:
        assert cache.get_many(["new"])["new"].tokens == Tokens(10, 2, 0, 0)
        assert cache.get("old") is not None and cache.get("old").tokens is None  # type: ignore[union-attr]


def test_a_read_only_older_cache_is_read_with_unknown_tokens(tmp_path: Path) -> None:
    """A cache from before token usage that this process may not write (so no columns can be
    added) is still read, its tokens unknown. Run in a child that obeys file modes."""
    import subprocess
    import sys

    from tests.hostile.harness import drop_dac

    _old_cache(tmp_path)
    database = tmp_path / "verdicts.sqlite3"
    database.chmod(0o444)
    tmp_path.chmod(0o555)
    code = ("import sys; from pathlib import Path; "
            "from introspection_cli.evaluation.cache import VerdictCache; "
            "cache = VerdictCache(Path(sys.argv[1])); "
            "old = cache.get_many(['old'])['old']; "
            "print(cache.readable, cache.writable, old.verdict, old.tokens)")
    try:
        child = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                               text=True, preexec_fn=drop_dac, check=False)
    finally:
        tmp_path.chmod(0o755)
        database.chmod(0o644)
    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == ["True", "False", "pass", "None"]
