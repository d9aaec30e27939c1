"""Prompt memos: a re-run finds a row's cached verdicts without rendering its prompt.

A verdict is cached under the key of its exact request (:mod:`.cache_keys`), and
that key takes rendering the prompt. But a row's request is a function of

* the code that renders and keys it: every source file and template of this
  package (by content), the libraries it renders and hashes with (by installed
  version) and the Python running it;
* the judge as the prompt reads it: its instructions and its gate (matchers in
  their order; a matcher's fields by name, as the prompt shows them);
* the request's fixed parts: provider, endpoint, model, the parameters as sent,
  the verdict tool;
* the row's ``judge_input``, which a verified row names by its ``snapshot_hash``
  (the SHA-256 of its canonical JSON, checked against the row when it is read).
  Rendering and gating read only what the canonical form keeps, so two inputs
  with one hash give one prompt (tests/evaluation/test_memo.py checks it).

A *memo* is a SHA-256 over all of these and the sample index. The cache keeps
which key each memo's request had (:class:`~.cache.VerdictCache`), so a re-run
of unchanged rows finds its verdicts by memo and renders nothing; any change to
any of those inputs changes the memo, which then simply misses, and the row is
rendered and keyed as always. A row without a hash (``judges estimate``'s rows)
has no memo, nor does any row when the sources cannot be read (a frozen build).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from introspection_cli.evaluation.plan import JudgePlan, request_template
from introspection_cli.evaluation.providers.interface import without_userinfo
from introspection_cli.fixture.canonical import canonical_json

#: Bumped when what a memo covers changes.
MEMO_VERSION = 1
_PACKAGE = Path(__file__).resolve().parent.parent
#: The package's files that can take part in a prompt: its code and its templates.
_SOURCE_SUFFIXES = (".py", ".j2")
#: The installed libraries a prompt or a key passes through (tests/evaluation/test_memo.py
#: checks that rendering and keying import no other).
LIBRARIES = ("jinja2", "markupsafe", "orjson", "regex", "rfc8785")


@functools.cache
def code_digest() -> str | None:
    """The digest of everything but the data a prompt is made from, or ``None`` when the
    sources or the libraries' versions cannot be read."""
    digest = hashlib.sha256()
    try:
        for relative, path in _sources():
            with open(path, "rb") as source:
                content = source.read()  # its length is the size: no stat of its own
            digest.update(b"%s\0%d\0" % (relative.encode(), len(content)))
            digest.update(content)
    except OSError:
        return None
    for library in LIBRARIES:
        installed = _installed_version(library)
        if installed is None:
            return None
        digest.update(b"\0" + installed.encode())
    digest.update(b"\0" + f"{sys.version}\0{sys.implementation.cache_tag}".encode())
    return digest.hexdigest()


def _sources() -> Iterator[tuple[str, str]]:
    """Every source file and template of the package, in a fixed order (by path
    component, as paths compare), as its relative POSIX name and its path.

    Plain strings, not ``Path`` objects: a run found by memo computes this on
    every start, for a couple of hundred files."""
    root = str(_PACKAGE)
    found: list[tuple[list[str], str]] = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = [name for name in subdirectories if name != "__pycache__"]
        parts = os.path.relpath(directory, root).split(os.sep) if directory != root else []
        found += [([*parts, name], os.path.join(directory, name))
                  for name in files if name.endswith(_SOURCE_SUFFIXES)]
    if not found:
        raise OSError("no sources")
    for parts, path in sorted(found):
        yield "/".join(parts), path


def _installed_version(library: str) -> str | None:
    """Where ``library`` is imported from and its installed distribution's ``.dist-info``
    name (which holds the version), found without importing it (or importlib.metadata)."""
    spec = importlib.util.find_spec(library)
    if spec is None or spec.origin is None:
        return None
    location = Path(spec.origin).parent
    folder = location.parent if spec.submodule_search_locations else location
    prefix = library.lower().replace("-", "_") + "-"
    try:
        names = sorted(name for name in os.listdir(folder)
                       if name.lower().startswith(prefix) and name.endswith(".dist-info"))
    except OSError:
        return None
    return f"{spec.origin}\0{','.join(names)}" if names else None


class MemoMaker:
    """The memos of one plan's rows (see the module docstring)."""

    def __init__(self, plan: JudgePlan, *, provider: str, endpoint: str) -> None:
        code = code_digest()
        self._start: hashlib._Hash | None = None
        if code is None:
            return
        fixed = request_template(plan.judge, provider, plan.model)  # no prompt rendered
        judge = plan.judge
        identity = {
            "v": MEMO_VERSION,
            "code": code,
            "provider": provider,
            "endpoint": without_userinfo(endpoint),
            "model": fixed.model,
            "parameters": [fixed.temperature, fixed.max_output_tokens],
            "tool": [fixed.tool_name, fixed.tool_description, dict(fixed.tool_schema)],
            "instructions": judge.instructions,
            "gate": None if judge.gate is None else [
                [matcher.event, {name: [value.raw, value.pattern, value.flags]
                                 for name, value in matcher.fields.items()}]
                for matcher in judge.gate],
        }
        self._start = hashlib.sha256(canonical_json(identity))

    def memos(self, snapshot_hash: str | None, samples: int) -> Sequence[str | None]:
        """The memo of each sample of a row (``None`` each when the row has no hash)."""
        if self._start is None or snapshot_hash is None:
            return [None] * samples
        row = self._start.copy()
        row.update(b"\0" + snapshot_hash.encode())
        if samples == 1:  # the usual run: one digest, not a copy of one
            row.update(b"\0" b"0")
            return [row.hexdigest()]
        memos = []
        for sample in range(samples):
            digest = row.copy()
            digest.update(b"\0%d" % sample)
            memos.append(digest.hexdigest())
        return memos
