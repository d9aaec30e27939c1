"""Where a result came from: the tool version, the time, and the recipe's git commit.

Reports and certificates carry these so a number can be traced back to the
exact rubric and rows that produced it. Standard library only; ``git`` is run
as a subprocess with a time limit, and its absence is not an error.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from introspection_cli import __version__

#: Seconds a ``git`` call may take before the commit is reported as unknown.
_GIT_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class GitState:
    """The commit checked out where the recipe is, and whether the recipe differs from it."""

    commit: str
    dirty: bool

    def as_json(self) -> dict[str, object]:
        return {"commit": self.commit, "dirty": self.dirty}


def utc_now() -> str:
    """The current time in RFC 3339, UTC, to the second: ``2026-11-20T10:04:11Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def tool_version() -> str:
    return __version__


def git_state(path: Path) -> GitState | None:
    """The git commit of the work tree holding ``path`` and whether anything under ``path``
    (tracked or untracked, not ignored) differs from it; None outside a git work tree,
    before the first commit, or when git is not installed or does not answer in time."""
    commit = _git(path, "rev-parse", "--verify", "HEAD")
    if commit is None:
        return None
    status = _git(path, "status", "--porcelain", "--untracked-files=normal", "--", ".")
    return GitState(commit.strip(), bool(status and status.strip()))


def _git(path: Path, *args: str) -> str | None:
    try:
        result = subprocess.run(["git", "-C", str(path), *args], capture_output=True,
                                text=True, timeout=_GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout if result.returncode == 0 else None
