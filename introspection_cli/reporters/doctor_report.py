"""Reporters for ``introspection doctor``: text and JSON."""

from __future__ import annotations

import json

from introspection_cli.workflows.doctor_findings import DoctorReport

_WIDTH = max(len("problem"), len("note"), len("ok"))


def render_doctor_text(report: DoctorReport) -> str:
    """One line per finding (``status  topic  detail``), each problem's fix under it, then
    how many problems there are."""
    topic_width = max(len(f.topic) for f in report.findings)
    lines = []
    for finding in report.findings:
        lines.append(f"{finding.status:<{_WIDTH}}  {finding.topic:<{topic_width}}  "
                     f"{finding.detail}")
        if finding.fix:
            lines.append(f"{'':<{_WIDTH}}  {'':<{topic_width}}  fix: {finding.fix}")
    count = report.problems
    lines += ["", "no problems found" if not count else
              f"{count} problem{'s' if count > 1 else ''} found: fix "
              f"{'them' if count > 1 else 'it'} as said above, then run `introspection "
              "doctor` again"]
    return "\n".join(lines) + "\n"


def render_doctor_json(report: DoctorReport) -> str:
    """``{"ok", "problems", "findings": [{"topic", "status", "detail", "fix", "facts"}]}``."""
    return json.dumps(report.as_json(), indent=2, ensure_ascii=False) + "\n"
