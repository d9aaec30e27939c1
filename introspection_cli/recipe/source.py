"""Reading recipe files: directory entry -> bytes -> text -> YAML, every failure as a Diagnostic.

Recipe trees come from anywhere (a cloned repository, a pre-commit run), so
nothing here trusts a name: an entry is looked at with ``lstat``/``stat``
before it is opened, so a FIFO or device named ``x.yaml`` is reported, never
opened (opening a FIFO for reading blocks until a writer appears; reading
``/dev/zero`` never ends). Symbolic links are allowed only when they resolve
inside the recipe, and files are read only up to a size limit.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from introspection_cli.diagnostics import Diagnostic, error
from introspection_cli.recipe.yamlload import (
    Document,
    ScalarMode,
    YamlProblem,
    decode,
    load_mapping,
)

#: Largest YAML file (judge, agent, SKILL.md front matter) read. Real ones are a few kB;
#: parsing time and memory grow with structure, so a cap is what keeps ``check`` bounded.
MAX_YAML_BYTES = 1024 * 1024
#: Largest Markdown file (SYSTEM.md, SKILL.md) read: far beyond any model's context window.
MAX_TEXT_BYTES = 16 * 1024 * 1024

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))


def problem_diagnostic(display: str, problem: YamlProblem) -> Diagnostic:
    """A :class:`YamlProblem` as a positioned error in ``display``."""
    mark = problem.mark
    return error(display, mark.line if mark else None, mark.column if mark else None,
                 problem.code, problem.message, problem.hint)


def is_inside(real_path: str, real_root: str) -> bool:
    """True when the resolved ``real_path`` is ``real_root`` or below it."""
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


def entry_problem(path: Path, display: str, real_root: str) -> Diagnostic | None:
    """Why ``path`` cannot be read as a recipe file, found without opening it; None if it can.

    A symbolic link must resolve to a regular file inside ``real_root`` (the
    recipe's resolved root): ``broken-symlink`` when it resolves to nothing
    (dangling, or a loop), ``symlink-outside`` when it leaves the recipe. Anything
    but a regular file is ``not-a-file``; a failing ``stat`` is ``file-unreadable``.
    """
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            return _link_problem(path, display, real_root)
    except OSError as exc:
        return unreadable(display, exc)
    return kind_problem(info.st_mode, display)


def _link_problem(path: Path, display: str, real_root: str) -> Diagnostic | None:
    target = os.readlink(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
            return unreadable(display, exc)
        why = "a loop of links" if exc.errno == errno.ELOOP else "nothing"
        return error(display, None, None, "broken-symlink",
                     f"symbolic link to {target}, which resolves to {why}",
                     "point the link at a file inside the recipe, or remove it")
    if not is_inside(os.path.realpath(path), real_root):
        return error(display, None, None, "symlink-outside",
                     f"symbolic link to {target}, which is outside the recipe",
                     "copy the file into the recipe instead")
    return kind_problem(info.st_mode, display)


def kind_problem(mode: int, display: str) -> Diagnostic | None:
    """``not-a-file`` when ``mode`` is not a regular file's."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return error(display, None, None, "not-a-file", f"expected a file, found {kind}",
                 "replace it with a regular file, or rename or remove it")


def unreadable(display: str, exc: OSError) -> Diagnostic:
    """``file-unreadable`` for an OS error (the path itself is already in ``display``)."""
    return error(display, None, None, "file-unreadable",
                 f"cannot read it: {exc.strerror or type(exc).__name__}",
                 "check its permissions")


def read_bytes(path: Path, display: str, limit: int) -> tuple[bytes | None, list[Diagnostic]]:
    """The contents of the regular file ``path``, or why not.

    Opened non-blocking and checked again with ``fstat`` after opening, so a
    file swapped for a FIFO since :func:`entry_problem` looked cannot block.
    A file larger than ``limit`` bytes is ``file-too-large`` and is not read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return None, [unreadable(display, exc)]
    try:
        info = os.fstat(fd)
        problem = kind_problem(info.st_mode, display)
        if problem is not None:
            return None, [problem]
        if info.st_size > limit:
            return None, [_too_large(display, info.st_size, limit)]
        data = _read_up_to(fd, limit + 1, info.st_size)
    except OSError as exc:
        return None, [unreadable(display, exc)]
    finally:
        os.close(fd)
    if len(data) > limit:  # grew while we read it
        return None, [_too_large(display, len(data), limit)]
    return data, []


def _read_up_to(fd: int, most: int, expected: int) -> bytes:
    # One read() of the stat size (plus one byte, to see EOF) serves nearly every file.
    chunks = []
    while most > 0:
        chunk = os.read(fd, min(most, max(expected + 1, 1 << 16)))
        if not chunk:
            break
        chunks.append(chunk)
        most -= len(chunk)
    return b"".join(chunks)


def _too_large(display: str, size: int, limit: int) -> Diagnostic:
    return error(display, None, None, "file-too-large",
                 f"the file is larger than {limit // (1024 * 1024)} MiB "
                 f"({size / (1024 * 1024):.1f} MiB or more), so it is not read",
                 "recipe files hold prompts and settings: keep them small")


def read_text(path: Path, display: str,
              limit: int = MAX_TEXT_BYTES) -> tuple[str | None, list[Diagnostic]]:
    """Read ``path`` as UTF-8; a BOM is reported but the text is still returned."""
    data, found = read_bytes(path, display, limit)
    if data is None:
        return None, found
    try:
        text, problems = decode(data)
    except YamlProblem as problem:
        return None, [problem_diagnostic(display, problem)]
    return text, [problem_diagnostic(display, p) for p in problems]


def read_yaml(path: Path, display: str, *, what: str = "file",
              scalars: ScalarMode = "core") -> tuple[Document | None, list[Diagnostic]]:
    """Read and parse a YAML mapping file."""
    text, found = read_text(path, display, MAX_YAML_BYTES)
    if text is None:
        return None, found
    try:
        return load_mapping(text, what=what, scalars=scalars), found
    except YamlProblem as problem:
        return None, [*found, problem_diagnostic(display, problem)]
