"""File writes that never leave a user's file half-written."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from introspection_cli.errors import UsageError


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically (temp file in the same dir, fsync, rename).

    ``mode`` sets the permission bits of the new file before it becomes visible;
    without it an existing file keeps its mode and a new one gets 0644 less umask.
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def atomic_write_text(path: Path, text: str, *, mode: int | None = None) -> None:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def path_problem(exc: OSError | RuntimeError) -> str:
    """The OS's reason a path cannot be used, for messages ("Not a directory", "Too many
    levels of symbolic links"); ``Path.resolve`` reports a symlink loop as RuntimeError."""
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    return "a symlink loop"


def kind_of(mode: int) -> str:
    """What a ``st_mode`` is, for messages ("a directory", "a FIFO (named pipe)"...)."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_output_target(path: Path, *, flag: str) -> bool:
    """Refuse, before any work, an output path that an atomic write could not replace.

    The write is a temp file in the target's directory renamed over the target, so
    that directory must exist and be writable, and an existing target (followed
    through a symlink) must be a regular file. Returns whether the target exists.
    Raises :class:`UsageError` naming ``flag`` and the path.
    """
    try:
        mode = os.stat(path).st_mode  # follows a symlink
    except FileNotFoundError:
        mode = None
    except OSError as exc:  # a symlink loop, a name too long, a file used as a directory
        return _unusable(path, flag, exc)
    if mode is not None and not stat.S_ISREG(mode):
        raise UsageError(f"{flag} {path} is {kind_of(mode)}, not a regular file; "
                         "pass a file name")
    try:
        directory = path.resolve().parent
        has_directory = directory.is_dir()
    except (OSError, RuntimeError) as exc:
        return _unusable(path, flag, exc)
    if not has_directory:
        raise UsageError(f"{flag} {path}: its directory does not exist")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: the directory {directory} is not writable")
    return mode is not None


def _unusable(path: Path, flag: str, exc: OSError | RuntimeError) -> bool:
    if isinstance(exc, NotADirectoryError | FileNotFoundError):
        raise UsageError(f"{flag} {path}: its directory does not exist "
                         f"({path_problem(exc)})") from None
    raise UsageError(f"{flag} {path} cannot be used ({path_problem(exc)}); pass another "
                     "file name") from None
