"""Reading the user's files without ever blocking on one that is not a regular file.

``open()`` on a FIFO waits for a writer, forever if none comes, and a device
can be read forever. So, as ``check`` does (``not-a-file``), the kind is
checked with ``stat`` first, the file is opened non-blocking and checked again
with ``fstat`` (it may have been swapped meanwhile), and only then read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from introspection_cli.fsutil import kind_of


class NotARegularFile(Exception):
    """The path exists but is not a regular file; ``kind`` says what it is ("a FIFO ...")."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class FileTooLarge(Exception):
    """The file holds more than the caller's limit."""


def refuse_non_regular(path: Path) -> None:
    """Raise :class:`NotARegularFile` if ``path`` exists and is not a regular file.

    Follows symlinks; a missing path (or a dangling link) is fine.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise NotARegularFile(kind_of(mode))


def read_file(path: Path, *, limit: int | None = None, allow_pipe: bool = False) -> bytes:
    """The bytes of the regular file ``path``, never blocking on anything else.

    With ``allow_pipe``, a pipe is read too (``--ids-file <(command)``): it is
    opened non-blocking, so a FIFO nobody writes to reads as empty instead of
    hanging. Raises :class:`NotARegularFile`, :class:`FileTooLarge` (more than
    ``limit`` bytes) or ``OSError`` (``FileNotFoundError`` for a missing file).
    """
    _check_kind(os.stat(path).st_mode, allow_pipe)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        _check_kind(mode, allow_pipe)  # again: it may have been swapped since the stat
        if stat.S_ISFIFO(mode):
            os.set_blocking(fd, True)  # wait for a writer that is there, not for one to come
        return _read_all(fd, limit)
    finally:
        os.close(fd)


def _check_kind(mode: int, allow_pipe: bool) -> None:
    if not (stat.S_ISREG(mode) or (allow_pipe and stat.S_ISFIFO(mode))):
        raise NotARegularFile(kind_of(mode))


def _read_all(fd: int, limit: int | None) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if limit is not None and size > limit:
            raise FileTooLarge()
