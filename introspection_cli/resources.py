"""Files shipped with the package: the JSON Schemas."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from introspection_cli.errors import UsageError

_PACKAGE_DIR = Path(__file__).resolve().parent


def schemas_dir() -> Path:
    """The directory holding ``*.schema.json``.

    In a wheel the schemas are installed inside the package
    (``introspection_cli/schemas``); in a source checkout or an editable
    install they are the repository's top-level ``schemas/``.
    """
    installed = _PACKAGE_DIR / "schemas"
    if installed.is_dir():
        return installed
    return _PACKAGE_DIR.parent / "schemas"


def schema_names() -> list[str]:
    """Names accepted by :func:`load_schema` (``judge``, ``agent``, ...)."""
    return sorted(p.name.removesuffix(".schema.json") for p in schemas_dir().glob("*.schema.json"))


@cache
def schema_text(name: str) -> str:
    """The text of ``schemas/<name>.schema.json``; UsageError for an unknown name."""
    path = schemas_dir() / f"{name}.schema.json"
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        known = ", ".join(schema_names()) or "none found"
        raise UsageError(f"no schema named '{name}' (known: {known})") from None


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The parsed schema ``name``."""
    schema: dict[str, Any] = json.loads(schema_text(name))
    return schema
