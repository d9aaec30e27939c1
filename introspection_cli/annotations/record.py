"""One annotation: a rater's label of one conversation text, with an optional note.

A line of ``judges/<name>.annotations.jsonl``::

    {"annotation_version": 1, "conversation_id": "c1", "snapshot_hash": "sha256:...",
     "rater": "Ana", "label": "fail", "note": "promised a refund it cannot give",
     "at": "2026-11-20T10:04:11Z"}

The rater ``adjudicated`` is reserved: it records the label an adjudication
settled on (``judges label --adjudicate``), never a person's own label.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ANNOTATION_VERSION = 1
SCHEMA_NAME = "annotation"  # schemas/annotation.schema.json
#: The rater name an adjudicated label is recorded under.
ADJUDICATED = "adjudicated"
LABELS = ("pass", "fail", "not_applicable")
MAX_RATER = 64
MAX_NOTE = 4000

#: (conversation_id, snapshot_hash): one conversation text, as the fixture rules name it.
Unit = tuple[str, str]
#: (conversation_id, snapshot_hash, rater): what one line of the file is about.
Key = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class Annotation:
    """One rater's label of one conversation text (one line of the file)."""

    conversation_id: str
    snapshot_hash: str
    rater: str
    label: str
    note: str | None
    at: str

    @property
    def key(self) -> Key:
        return self.conversation_id, self.snapshot_hash, self.rater

    @property
    def unit(self) -> Unit:
        return self.conversation_id, self.snapshot_hash

    @property
    def adjudicated(self) -> bool:
        return self.rater == ADJUDICATED

    def as_json(self) -> dict[str, Any]:
        return {"annotation_version": ANNOTATION_VERSION,
                "conversation_id": self.conversation_id, "snapshot_hash": self.snapshot_hash,
                "rater": self.rater, "label": self.label, "note": self.note, "at": self.at}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Annotation:
        """The annotation a schema-valid line holds."""
        return cls(data["conversation_id"], data["snapshot_hash"], data["rater"],
                   data["label"], data["note"], data["at"])

    def line(self) -> bytes:
        """The line's bytes, without its newline (non-ASCII kept readable)."""
        return json.dumps(self.as_json(), ensure_ascii=False,
                          separators=(", ", ": ")).encode("utf-8")


def rater_problem(name: str) -> str | None:
    """Why ``name`` cannot name a rater, or None. Names are compared exactly as written."""
    if not name:
        return "a rater's name cannot be empty"
    if len(name) > MAX_RATER:
        return f"a rater's name has at most {MAX_RATER} characters"
    if name != name.strip() or "\ufeff" in (name[0], name[-1]):  # JSON Schema's \s has it
        return f"the rater's name {name!r} starts or ends with a space"
    if any(unicodedata.category(char) in ("Cc", "Zl", "Zp") for char in name):
        return f"the rater's name {name!r} holds a control character or a line break"
    return None


def note_problem(note: str) -> str | None:
    """Why ``note`` cannot be stored, or None (an empty note is no note: None)."""
    if len(note) > MAX_NOTE:
        return f"a note has at most {MAX_NOTE:,} characters (this one has {len(note):,})"
    return None


def clean_note(note: str | None) -> str | None:
    """A note as stored: surrounding white space removed; an empty one is no note."""
    if note is None:
        return None
    stripped = note.strip()
    return stripped or None
