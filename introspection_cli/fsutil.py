"""File writes that never leave a user's file half-written."""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from introspection_cli.errors import DataError, UsageError


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None,
                       keep_owner: bool = False) -> None:
    """Replace ``path`` with ``data`` atomically (temp file in the same dir, fsync, rename).

    ``mode`` sets the permission bits of the new file before it becomes visible;
    without it an existing file keeps its mode and a new one gets 0644 less umask.
    ``keep_owner`` gives the new file the existing file's owner and group; when
    the OS does not allow that, ``PermissionError`` is raised and nothing is replaced.
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    try:
        existing: os.stat_result | None = path.stat()
    except FileNotFoundError:
        existing = None
    if mode is None:
        if existing is not None:
            mode = existing.st_mode & 0o7777
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            if keep_owner and existing is not None:
                _take_owner(handle.fileno(), existing)
            os.fchmod(handle.fileno(), mode)  # after chown, which may clear setuid bits
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def _take_owner(fd: int, existing: os.stat_result) -> None:
    current = os.fstat(fd)
    if (current.st_uid, current.st_gid) != (existing.st_uid, existing.st_gid):
        os.fchown(fd, existing.st_uid, existing.st_gid)


@contextlib.contextmanager
def directory_lock(path: Path) -> Iterator[None]:
    """Hold ``flock(LOCK_EX)`` on ``path``'s directory while writing ``path``.

    Every writer of calibration files (``conversations get --append-to``, the
    label and split writers) takes this one lock, so none renames its copy over
    another's. The file itself is replaced by rename, so a lock on it would not
    be seen by the next writer; the directory stays. Raises :class:`DataError`
    when the directory cannot be opened or locked (nothing was written).
    """
    directory = path.parent
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise DataError(f"cannot open {directory} to lock it before writing ({exc.strerror}); "
                        "nothing was written") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            raise DataError(f"cannot lock {directory} before writing {path.name} "
                            f"({exc.strerror}); nothing was written") from None
        yield
    finally:
        os.close(fd)  # releases the lock


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
