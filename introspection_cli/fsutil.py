"""File writes that never leave a user's file half-written.

An atomic write goes through a temporary file beside its target, named
``.TARGET.introspection-XXXXXXXX.tmp`` so that it is recognisable: the writer
holds ``flock`` on it while it lives, so a temp file nobody holds is one a
killed write left behind. The next write to the same target removes those
(:func:`atomic_write_bytes`), and ``check`` warns about them
(``leftover-temp-file``; the names are :mod:`introspection_cli.tempnames`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from introspection_cli.errors import DataError, UsageError
from introspection_cli.tempnames import TEMP_MARK, is_temp_name

_MAKE_ATTEMPTS = 5


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None,
                       keep_owner: bool = False) -> None:
    """Replace ``path`` with ``data`` atomically (temp file in the same dir, fsync, rename).

    ``mode`` sets the permission bits of the new file before it becomes visible;
    without it an existing file keeps its mode and a new one gets 0644 less umask.
    ``keep_owner`` gives the new file the existing file's owner and group; when
    the OS does not allow that, ``PermissionError`` is raised and nothing is replaced.
    Temporary files earlier killed writes of ``path`` left are removed first.
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
    remove_stale_temp_files(path)
    fd, tmp_name = _held_temp_file(directory, path.name)
    try:
        with os.fdopen(fd, "wb") as handle:
            if keep_owner and existing is not None:
                _take_owner(handle.fileno(), existing)
            os.fchmod(handle.fileno(), mode)  # after chown, which may clear setuid bits
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            os.replace(tmp_name, path)  # still holding the lock: no cleaner takes it now
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def atomic_create_bytes(path: Path, data: bytes) -> None:
    """Create ``path`` holding ``data``, atomically, and never over an existing file.

    The data goes to a temporary file beside it first (fsynced, mode 0666 less
    umask), which is then hard-linked to ``path``: the link fails with
    :class:`FileExistsError` when anything, even a dangling symlink, took the
    name meanwhile, so nothing is ever replaced. On a file system without hard
    links the temporary file is renamed instead, after checking the name is free.
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    umask = os.umask(0)
    os.umask(umask)
    fd, tmp_name = _held_temp_file(directory, path.name)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o666 & ~umask)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            try:
                os.link(tmp_name, path, follow_symlinks=False)
            except OSError as exc:  # FileExistsError included: never replace anything
                if exc.errno not in _NO_HARD_LINKS:
                    raise
                if os.path.lexists(path):
                    raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST),
                                          str(path)) from None
                os.replace(tmp_name, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)


#: What ``link(2)`` fails with where the file system has no hard links (FAT, some FUSE).
_NO_HARD_LINKS = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK,
                            errno.ENOSYS})


def _held_temp_file(directory: Path, name: str) -> tuple[int, str]:
    """A new temporary file for ``name`` in ``directory``, locked (``flock``) by us.

    Between creating it and locking it, a cleaner may find it unlocked and remove
    it; the file is then made again, so a write never fails because of that.
    """
    for _ in range(_MAKE_ATTEMPTS):
        fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{name}{TEMP_MARK}",
                                        suffix=".tmp")
        if _lock_if_free(fd) is False:  # a cleaner holds it and is removing it
            os.close(fd)
            continue
        if _same_file(tmp_name, fd):
            return fd, tmp_name
        os.close(fd)
    raise OSError(errno.EAGAIN, f"could not create a temporary file for {name} in {directory}")


def _lock_if_free(fd: int) -> bool | None:
    """Take ``flock(LOCK_EX)`` on ``fd`` without waiting: True, False (held by another
    process), or None when the file system has no such locks (NFS without lockd)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return None
    return True


def _same_file(name: str, fd: int) -> bool:
    try:
        named = os.stat(name, follow_symlinks=False)
    except OSError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def remove_stale_temp_files(path: Path) -> list[Path]:
    """Remove the temporary files killed writes of ``path`` left beside it; returns them.

    Only files named as this tool names them and that no live writer holds
    (its ``flock``) are removed; anything unsure (locks unsupported, a race) is left.
    """
    directory = path.parent if str(path.parent) else Path(".")
    prefix = f".{path.name}{TEMP_MARK}"
    try:
        with os.scandir(directory) as entries:
            names = [entry.name for entry in entries if entry.name.startswith(prefix)
                     and is_temp_name(entry.name)]
    except OSError:
        return []
    return [directory / name for name in names if _remove_if_unheld(directory / name)]


def _remove_if_unheld(candidate: Path) -> bool:
    try:
        fd = os.open(candidate, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode) or not _lock_if_free(fd):
            return False
        if not _same_file(str(candidate), fd):
            return False
        os.unlink(candidate)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


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
