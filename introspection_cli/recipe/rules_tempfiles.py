"""``leftover-temp-file``: a temporary file that a killed write of this tool left in a recipe.

Atomic writes (``conversations get --append-to``, labelling, reports) go through
a hidden temporary file beside their target (:mod:`introspection_cli.fsutil`;
the names are :mod:`introspection_cli.tempnames`).
A write killed before its rename leaves that file, as large as the target, where
``git add -A`` would commit it. The next write to the same target removes it;
until then ``check`` says where it is. Earlier versions named it
``.TARGET.XXXXXXXX.tmp``; those are reported only beside an existing TARGET, so
another program's temp file is not taken for ours.
"""

from __future__ import annotations

import os
from pathlib import Path

from introspection_cli.diagnostics import Diagnostic, warning
from introspection_cli.tempnames import leftover_temp_target

#: Directories never searched: version control, dependencies, caches.
_SKIPPED = frozenset({".git", "node_modules", "__pycache__"})


def leftover_temp_files(root: Path, display: str) -> list[Diagnostic]:
    """A warning for each leftover temporary file below ``root`` (shown as ``display``)."""
    found = []
    for directory, subdirs, files in os.walk(root):  # links to directories are not followed
        subdirs[:] = sorted(name for name in subdirs if name not in _SKIPPED)
        for name in sorted(files):
            recognised = leftover_temp_target(name)
            if recognised is None:
                continue
            target, legacy = recognised
            if legacy and not os.path.lexists(os.path.join(directory, target)):
                continue
            relative = os.path.relpath(os.path.join(directory, name), root)
            found.append(warning(
                os.path.normpath(os.path.join(display, relative)), None, None,
                "leftover-temp-file",
                f"{name} is a temporary file an interrupted write of {target} left behind",
                f"delete it, and do not commit it: it is not part of the recipe (the next "
                f"write of {target} by introspection removes it too)"))
    return found
