"""Where a judge's annotations live: ``judges/<name>.annotations.jsonl``.

Its own module, with nothing but :mod:`pathlib`: ``check`` lists these files and
``judges eval`` looks for one on every run (for the raters' ceiling) without
loading the annotation's record or its file.
"""

from __future__ import annotations

from pathlib import Path

ANNOTATIONS_SUFFIX = ".annotations.jsonl"


def annotations_path(judges_dir: Path, judge: str) -> Path:
    """Where ``judge``'s annotations live: beside its judge file."""
    return judges_dir / f"{judge}{ANNOTATIONS_SUFFIX}"
