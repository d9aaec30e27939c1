"""``judges eval --junit FILE``: the report as JUnit XML, for CI test reporters.

One ``<testsuite>`` per judge. Its first test case is the judge itself: it
fails when calibration rows were rejected or when no row was judged (an
all-error run measured nothing). Then one test case per gate of the report
(``--max-error-rate``, ``--min-agreement``...): a missed gate is a failure
whose message says what was reached. Each failure is counted once, so a CI
summary's failure count is the number of things to fix.

Test case names are stable from run to run (no measured value in them), so a
CI system can follow one gate's history. Model reasoning and conversation ids
are untrusted text: :mod:`xml.etree` escapes markup, and the characters XML 1.0
cannot carry at all (most C0 controls, lone surrogates) are written as visible
``\\uXXXX`` text first, so the file always parses.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from introspection_cli.reporting.formatting import REASONING_LIMIT, clean, edge_notes
from introspection_cli.reporting.metrics import REPORT_SPLITS
from introspection_cli.reporting.model import Transcripts
from introspection_cli.reporting.report import (
    EvalReport,
    HeldOut,
    JudgeEntry,
    ReportGate,
    ReportRow,
    as_report,
)
from introspection_cli.reporting.sentences import (
    disagreeing,
    erroring,
    gate_text,
    held_out_text,
    interval_text,
    kappa_text,
    provenance_text,
    scored_text,
)

if TYPE_CHECKING:  # a type only: JUnit has no baseline comparison
    from introspection_cli.reporting.baseline import Comparison

#: What XML 1.0 cannot hold even as a character reference.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 forbids written as visible ``\\uXXXX``."""
    return _NOT_XML.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def render_junit(report: EvalReport | Mapping[str, Any], *, color: bool = False,
                 comparison: Comparison | None = None,
                 transcripts: Transcripts | None = None) -> str:
    """The report as a JUnit XML document (``<testsuites>``), with an XML declaration: its
    gates and rows only (no baseline comparison, no conversation, no color)."""
    report = as_report(report)
    root = ET.Element("testsuites", name="introspection judges eval")
    totals = [0, 0]
    for judge in report.judges:
        suite = _judge_suite(report, judge)
        root.append(suite)
        totals[0] += int(suite.get("tests", "0"))
        totals[1] += int(suite.get("failures", "0"))
    root.set("tests", str(totals[0]))
    root.set("failures", str(totals[1]))
    root.set("errors", "0")
    ET.indent(root)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            + ET.tostring(root, encoding="unicode") + "\n")


def _judge_suite(report: EvalReport, judge: JudgeEntry) -> ET.Element:
    suite = ET.Element("testsuite", name=xml_text(f"judge {judge.name}"),
                       timestamp=xml_text(report.created_at or ""))
    properties = ET.SubElement(suite, "properties")
    provenance = provenance_text(report.tool_version, report.created_at, report.git)
    for key, value in (("recipe", report.recipe), ("provider", judge.provider),
                       ("model", judge.model), ("fingerprint", judge.fingerprint),
                       ("provenance", provenance)):
        if value:
            ET.SubElement(properties, "property", name=key, value=xml_text(value))
    # The judge's own case stands for the "a judged row" gate: counted once.
    cases = [_judge_case(judge)]
    cases += [_gate_case(judge.name, gate) for gate in report.gates
              if gate.judge == judge.name and gate.statistic != "judged"]
    suite.extend(cases)
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(case.find("failure") is not None for case in cases)))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    return suite


def _case(judge: str, name: str) -> ET.Element:
    return ET.Element("testcase", classname=xml_text(f"introspection.judges.{judge}"),
                      name=xml_text(name), time="0")


def _judge_case(judge: JudgeEntry) -> ET.Element:
    case = _case(judge.name, f"judge {judge.name}")
    problems = []
    if judge.rejected:
        lines = sorted({rejected.line for rejected in judge.rejected})
        problems.append(f"{len(lines)} calibration row(s) rejected (lines "
                        f"{', '.join(map(str, lines))})")
    everything = judge.scored
    if everything.judged == 0:
        problems.append(f"no row was judged ({everything.n} evaluated: "
                        f"{everything.errors} error(s), {everything.gated} gated)")
    if problems:
        failure = ET.SubElement(case, "failure", message=xml_text("; ".join(problems)),
                                type="judge")
        failure.text = xml_text("\n".join(f"line {r.line}: [{r.code}] {clean(r.message)}"
                                          for r in judge.rejected))
    ET.SubElement(case, "system-out").text = xml_text("\n".join(_summary_lines(judge)))
    return case


def _gate_case(judge: str, gate: ReportGate) -> ET.Element:
    case = _case(judge, gate_name(gate))
    if not gate.met:
        ET.SubElement(case, "failure", message=xml_text(gate_text(gate)), type="gate")
    return case


def gate_name(gate: ReportGate) -> str:
    """``tpr lower bound ≥ 0.8 on split dev``: a gate's bar, without what was reached."""
    if gate.statistic == "error_rate":
        return f"error rate ≤ {gate.bar:g} on split {gate.split}"
    subject = f"{gate.statistic} lower bound" if gate.bound == "low" else gate.statistic
    return f"{subject} ≥ {gate.bar:g} on split {gate.split}"


def _summary_lines(judge: JudgeEntry) -> list[str]:
    lines = [f"{judge.provider}/{judge.model}"]
    for split in REPORT_SPLITS:
        stats = judge.splits[split]
        if isinstance(stats, HeldOut):
            lines.append(f"{split}: {held_out_text(stats.n)}")
        elif stats.n:
            lines.append(f"{split}: n {stats.n}, judged {stats.judged}, gated "
                         f"{stats.gated}, errors {stats.errors}, agreement "
                         f"{interval_text(stats.agreement)}, na_agreement "
                         f"{interval_text(stats.na_agreement)}, kappa "
                         f"{kappa_text(stats.kappa)}, tpr {interval_text(stats.tpr)}, "
                         f"tnr {interval_text(stats.tnr)}")
    lines += [scored_text(judge.splits), *edge_notes(lines)]
    lines += _row_lines("disagreement", disagreeing(judge.rows))
    lines += _row_lines("error", erroring(judge.rows))
    return lines


def _row_lines(kind: str, rows: Sequence[ReportRow]) -> list[str]:
    lines = []
    for row in rows:
        why = row.error if row.outcome == "error" else row.reasoning
        lines.append(f"{kind}: line {row.line} {clean(row.conversation_id)}: expected "
                     f"{row.expected}, outcome {row.outcome}: "
                     f"{clean(why or 'no reason recorded', REASONING_LIMIT)}")
    return lines
