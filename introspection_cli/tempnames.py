"""How the temporary files of atomic writes are named, and how to recognise one.

Its own module, without :mod:`tempfile`, because ``check`` (which runs on every
commit) recognises them too, and never writes.
"""

from __future__ import annotations

import re

#: What every temporary file of an atomic write carries after its target's name:
#: ``.TARGET.introspection-XXXXXXXX.tmp`` (``XXXXXXXX`` as :func:`tempfile.mkstemp` makes it).
TEMP_MARK = ".introspection-"
_TEMP_NAME = re.compile(r"\.(?P<target>.+)\.introspection-[a-z0-9_]{8}\.tmp")
#: The name earlier versions gave them (``mkstemp`` with prefix ``.TARGET.``, suffix ``.tmp``).
_LEGACY_TEMP_NAME = re.compile(r"\.(?P<target>.+)\.[a-z0-9_]{8}\.tmp")


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is how this tool names an atomic write's temporary file."""
    return _TEMP_NAME.fullmatch(name) is not None


def leftover_temp_target(name: str) -> tuple[str, bool] | None:
    """If ``name`` is a temporary file of an atomic write, its target's name and whether it
    is in the form earlier versions used (``.TARGET.XXXXXXXX.tmp``); else None."""
    match = _TEMP_NAME.fullmatch(name)
    if match is not None:
        return match.group("target"), False
    match = _LEGACY_TEMP_NAME.fullmatch(name)
    if match is not None:
        return match.group("target"), True
    return None
