"""Run the real CLI on hostile input: exit code, output, wall time, peak memory, files untouched.

The CLI runs as the grandchild of the test: a small launcher process (forked
from the test, then exec'd) forks it and reaps it with :func:`os.wait4`, whose
resource usage gives the CLI's peak resident memory (``ru_maxrss``, KiB on
Linux). Linux keeps a process's peak across ``exec``, so a CLI forked straight
from a pytest process grown to 400 MB would "peak" at 400 MB before running a
line; forked from the launcher, it starts from the launcher's few MB.
``RLIMIT_AS`` caps the address space so a runaway allocation fails inside the
child instead of exhausting the machine.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import resource
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: A hang guard, not a performance figure (those live in bench/): generous on a shared machine.
TIME_CEILING_S = 20.0
#: Peak resident memory allowed to one ``check`` child.
MEMORY_CEILING_MB = 500
_ADDRESS_SPACE_LIMIT = 4 * 1024**3
_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE = 1
_CAP_DAC_READ_SEARCH = 2


@dataclass(frozen=True)
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float


def run_cli_measured(args: list[str], cwd: Path, *, honour_permissions: bool = False,
                     extra_env: dict[str, str] | None = None,
                     stdin_bytes: bytes = b"") -> Outcome:
    """Run ``python -m introspection_cli ARGS`` in ``cwd``; kill it at :data:`TIME_CEILING_S`.

    ``honour_permissions`` makes a root child obey file modes (see :func:`drop_dac`).
    A child still running at the ceiling is killed and reported with returncode -9.
    The child reads ``stdin_bytes`` on stdin.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTROSPECTION_")}
    env.pop("NO_COLOR", None)
    env.update(extra_env or {})
    preexec = _limits_and_dac_drop if honour_permissions else _limits
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.TemporaryFile() as stdin, tempfile.TemporaryDirectory() as scratch:
        stdin.write(stdin_bytes)
        stdin.seek(0)
        report = Path(scratch) / "usage"
        start = time.monotonic()
        launcher = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(report), *args],
                                    cwd=cwd, env=env, stdin=stdin, stdout=out, stderr=err,
                                    preexec_fn=preexec, start_new_session=True)
        killed = not _wait_with_deadline(launcher, start + TIME_CEILING_S)
        seconds = time.monotonic() - start
        status, peak_kib = (-signal.SIGKILL, 0) if killed else _read_report(report)
        out.seek(0)
        err.seek(0)
        return Outcome(status, out.read().decode("utf-8", "replace"),
                       err.read().decode("utf-8", "replace"), seconds, peak_kib / 1024)


#: Forks the CLI, waits for it, and writes "exit-code peak-KiB" to the file argv[1] names.
_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execv(sys.executable, [sys.executable, "-m", "introspection_cli", *sys.argv[2:]])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as report:
    report.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""


def _read_report(report: Path) -> tuple[int, int]:
    code, peak = report.read_text().split()
    return int(code), int(peak)


def _wait_with_deadline(launcher: subprocess.Popen[bytes], deadline: float) -> bool:
    """Wait for the launcher; at ``deadline`` kill it and the CLI. Whether it finished."""
    while launcher.poll() is None:
        if time.monotonic() > deadline:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
            return False
        time.sleep(0.02)
    return True


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_ADDRESS_SPACE_LIMIT, _ADDRESS_SPACE_LIMIT))


def _limits_and_dac_drop() -> None:
    _limits()
    drop_dac()


def drop_dac() -> None:
    """Make a root child obey file permission bits.

    Running the child as ``nobody`` does not work here: the interpreter lives
    under /root, which ``nobody`` cannot enter. Dropping the two capabilities
    that let root bypass permission checks from the bounding set keeps uid 0
    (so the interpreter stays reachable) while ``chmod 000`` takes effect.
    A non-root user obeys permissions already.
    """
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def snapshot_tree(root: Path) -> dict[str, str]:
    """A fingerprint of every entry below ``root``, never opening anything but regular files.

    Symbolic links are recorded by target (not followed), FIFOs, sockets and
    devices by type and mode only, so taking the snapshot cannot block or loop.
    Unreadable files are fingerprinted by size and mode (the test runs as root,
    which can read them anyway).
    """
    found: dict[str, str] = {}
    for directory, subdirs, files in os.walk(root):
        for name in (*subdirs, *files):
            path = os.path.join(directory, name)
            info = os.lstat(path)
            key = os.path.relpath(path, root)
            if stat.S_ISLNK(info.st_mode):
                found[key] = "link:" + os.readlink(path)
            elif stat.S_ISREG(info.st_mode):
                found[key] = f"file:{oct(info.st_mode)}:{_sha256(path)}"
            else:
                found[key] = f"other:{oct(info.st_mode)}"
    return found


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


Builder = Callable[[Path], list[str]]
