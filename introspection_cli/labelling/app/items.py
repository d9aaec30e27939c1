"""The conversations a session shows: each once, with the line it has in each judge's file.

With one judge an item is one line of its file. With several, a conversation
is the same one in two files when both its ``conversation_id`` and its
``snapshot_hash`` agree (the hash covers the text the judges read, so a label
given on one transcript is right for both). Then:

* a conversation in some of the files only is shown once, with a label row for
  each judge whose file has it (the others say it is not in their file);
* one ``conversation_id`` with different hashes in two files is two
  conversations (the text changed between exports): each is shown, and
  labelled, on its own, with a note naming the other;
* a rejected line has no trusted identity: it is its own item, shown read-only
  for its judge alone.

Items come in the first judge's file order, then each further file's new
conversations in its order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from introspection_cli.labelling.app.judgefile import Identity, identity_of
from introspection_cli.labelling.calibration import CalibrationFile


@dataclass(frozen=True, slots=True)
class Item:
    """One conversation of the session: ``key`` 1-based, ``lines`` judge -> line at the start."""

    key: int
    identity: Identity | None
    lines: Mapping[str, int]
    #: judge -> the item holding this conversation_id with other text in that judge's file
    other_text: Mapping[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class _Found:
    identity: Identity | None
    lines: dict[str, int]


def match_items(files: Sequence[tuple[str, CalibrationFile]]) -> list[Item]:
    """Every conversation of ``files`` (judge name, file) once, matched by id and hash."""
    found: list[_Found] = []
    by_identity: dict[Identity, _Found] = {}
    for name, calibration in files:
        for line in calibration.lines:
            if line.is_blank:
                continue
            identity = identity_of(line)
            item = by_identity.get(identity) if identity is not None else None
            if item is None:
                item = _Found(identity, {})
                found.append(item)
                if identity is not None:
                    by_identity[identity] = item
            item.lines[name] = line.number
    keys_by_id: dict[str, list[int]] = {}
    for key, item in enumerate(found, start=1):
        if item.identity is not None:
            keys_by_id.setdefault(item.identity[0], []).append(key)
    return [Item(key, item.identity, item.lines, _other_text(key, item, found, keys_by_id))
            for key, item in enumerate(found, start=1)]


def _other_text(key: int, item: _Found, found: Sequence[_Found],
                keys_by_id: Mapping[str, list[int]]) -> dict[str, int]:
    """judge -> the item with the same conversation_id but another text in that judge's file."""
    if item.identity is None:
        return {}
    return {name: other for other in keys_by_id[item.identity[0]] if other != key
            for name in found[other - 1].lines if name not in item.lines}
