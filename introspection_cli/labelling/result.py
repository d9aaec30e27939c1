"""What a labelling command hands back to the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CommandResult:
    """What a labelling command prints and how it exits (the CLI only writes these out)."""

    stdout: str = ""
    problems: list[str] = field(default_factory=list)
    exit_code: int = 0
