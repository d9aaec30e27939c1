"""What the page is sent: a judge, a conversation with one label row per judge, what is left.

Plain JSON for the page's script (which sets every string as text). Nothing
here reads or writes a file: :mod:`.session` hands in the lines as they are now.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from introspection_cli.labelling.app.blinds import NO_RATER, Blinds
from introspection_cli.labelling.app.items import Item
from introspection_cli.labelling.app.judgefile import JudgeFile, row_version
from introspection_cli.labelling.app.review import Review
from introspection_cli.labelling.calibration import CalibrationLine

#: A rejected line is shown as raw text up to this many characters.
_RAW_LIMIT = 20_000
#: The end of the queue names at most this many conversations still to label.
REMAINING_SHOWN = 20


def judge_json(jf: JudgeFile) -> dict[str, Any]:
    """The judge's rubric as the side panel shows it, and its file."""
    judge = jf.judge
    return {"name": judge.name, "description": judge.description,
            "instructions": judge.instructions, "gated": jf.gated,
            "path": str(jf.file.path)}


def conversation_json(lines: Iterable[CalibrationLine | None]) -> dict[str, Any]:
    """The conversation, shown once: from a trusted line (every judge's has the same
    text), else what a rejected line shows of itself."""
    present = [line for line in lines if line is not None]
    for line in present:
        if line.row is not None:
            source = line.row.record.get("source", {})
            return {"conversation_id": line.row.conversation_id,
                    "exported_at": source.get("exported_at"),
                    "events": line.row.judge_input.get("events")}
    if present:
        return rejected_view(present[0])
    return {"conversation_id": None, "exported_at": None, "events": None,
            "raw": "(this conversation is no longer in any of the files)"}


def label_json(jf: JudgeFile, item: Item, line: CalibrationLine | None,
               review: Review | None, blinds: Blinds = NO_RATER) -> dict[str, Any]:
    """One judge's label row of a conversation: its line, label, split, gate and, under
    --review, what the report said; ``absent`` says why a judge has no row to label.

    For a rater, ``expected`` is their own label and ``note`` their own note: the
    row's ``expected`` and other raters' labels are never sent (it may be theirs)."""
    row = line.row if line is not None else None
    gate = jf.gate(line) if line is not None else None
    reviewed = review.rows.get(line.number) if review and line is not None else None
    entry: dict[str, Any] = {
        "judge": jf.name, "gated": jf.gated,
        "line": line.number if line is not None else None,
        "version": row_version(line.text) if line is not None else None,
        "writable": row is not None,
        "rejections": [{"code": r.code, "message": r.message}
                       for r in (line.blocking if line is not None else ())],
        "expected": row.expected if row is not None else None,
        "split": row.split if row is not None else None,
        "gate": gate.as_json() if gate is not None else None,
        "review": reviewed.as_json() if reviewed is not None else None,
        "absent": _absent(jf, item) if line is None else None,
        "note": None, "rated": False, "ratings": [], "conflict": None,
    }
    unit = jf.rated(line) if line is not None else None
    if blinds.rater is not None:
        mine = unit.ratings.get(blinds.rater) if unit is not None else None
        entry.update(expected=mine.label if mine else None, note=mine.note if mine else None,
                     rated=mine is not None)
        if entry["review"] is not None:
            entry["review"] = {**entry["review"], "expected_then": None}  # maybe another's
    elif unit is not None and (blinds.adjudicate or reviewed is not None):
        entry["ratings"] = [{"rater": rater, "label": a.label, "note": a.note, "at": a.at}
                            for rater, a in sorted(unit.ratings.items())]
        if blinds.adjudicate:
            settled = unit.adjudication
            entry.update(conflict=unit.conflict, rated=settled is not None,
                         note=settled.note if settled else None)
    return entry


def _absent(jf: JudgeFile, item: Item) -> str:
    if jf.name in item.other_text:
        return (f"{jf.name}'s file holds this conversation_id with other text (another "
                f"snapshot_hash): it is its own conversation here, number "
                f"{item.other_text[jf.name]}.")
    if jf.name in item.lines:
        return (f"Line {item.lines[jf.name]} of {jf.name}'s file no longer holds this "
                "conversation (the file changed on disk).")
    return (f"Not in {jf.name}'s calibration file: export it there too (--append-to) to "
            "label it for this judge.")


def remaining_json(remaining: Sequence[tuple[Item, list[tuple[str, CalibrationLine]]]]
                   ) -> dict[str, Any]:
    """The queue's rows still without a label (and rejected ones), counted and named."""
    shown = []
    for item, left in remaining[:REMAINING_SHOWN]:
        shown.append({"item": item.key,
                      "conversation_id": (item.identity[0] if item.identity else
                                          rejected_view(left[0][1])["conversation_id"]),
                      "labels": [{"judge": name, "line": line.number,
                                  "rejected": line.row is None} for name, line in left]})
    return {"unlabelled": sum(line.row is not None for _, left in remaining for _, line in left),
            "rejected": sum(line.row is None for _, left in remaining for _, line in left),
            "items": shown, "more": max(0, len(remaining) - REMAINING_SHOWN)}


def rejected_view(line: CalibrationLine) -> dict[str, Any]:
    """What can be shown of a rejected line: its events if it parses, else its raw text."""
    view: dict[str, Any] = {"conversation_id": None, "exported_at": None, "events": None,
                            "raw": line.text[:_RAW_LIMIT].decode("utf-8", "replace")}
    try:
        parsed = json.loads(line.text)
    except (ValueError, RecursionError):
        return view
    if isinstance(parsed, dict):
        judge_input = parsed.get("judge_input")
        events = judge_input.get("events") if isinstance(judge_input, dict) else None
        if isinstance(events, list):
            view["events"] = events
        source = parsed.get("source")
        if isinstance(source, dict) and isinstance(source.get("conversation_id"), str):
            view["conversation_id"] = source["conversation_id"]
    return view
