"""What ``introspection doctor`` found: one :class:`Finding` per topic, and the report of them.

Values only, so the probes (:mod:`~introspection_cli.workflows.doctor_probes`), the
checks (:mod:`~introspection_cli.workflows.doctor`) and the renderers all read them
without importing one another.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from introspection_cli.errors import ExitCode

Status = Literal["ok", "note", "problem"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing doctor looked at: what it found, and for a problem, what to do."""

    topic: str
    status: Status
    detail: str
    fix: str | None = None
    #: The same facts for machines (JSON values; never a secret).
    facts: Mapping[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "status": self.status, "detail": self.detail,
                "fix": self.fix, "facts": dict(self.facts)}


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """Every finding, in the order they are printed."""

    findings: tuple[Finding, ...]

    @property
    def problems(self) -> int:
        return sum(f.status == "problem" for f in self.findings)

    @property
    def exit_code(self) -> ExitCode:
        """1 when anything needs fixing, else 0."""
        return ExitCode.PROBLEMS if self.problems else ExitCode.OK

    def as_json(self) -> dict[str, Any]:
        return {"ok": not self.problems, "problems": self.problems,
                "findings": [f.as_json() for f in self.findings]}
