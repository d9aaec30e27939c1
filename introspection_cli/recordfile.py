"""Files of JSON records, one per line, that the tool appends to in the recipe.

``judges/<name>.exposure.jsonl`` and ``judges/<name>.annotations.jsonl`` are read
the same way: within a byte bound, each line strict JSON (no repeated key, no
NaN) checked against its published schema, every line that is not a record named
with its number. This module is that one reader; each file's own module adds
what its schema cannot say. Standard library only (``check`` reads both).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from introspection_cli import strictjson
from introspection_cli.errors import DataError


class RecordFileError(DataError):
    """The file cannot be read, or a line of it is not a record (exit 1)."""

    def __init__(self, path: Path, message: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")
        self.path, self.line, self.problem = path, line, message


@dataclass(frozen=True, slots=True)
class LineProblem:
    line: int
    message: str


def split_records(data: bytes) -> list[bytes]:
    """The file's lines (what follows the final newline is no line)."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def decode_line(line: bytes) -> tuple[Any, str | None]:
    """(the line's JSON value, None), or (None, why it is not strict JSON)."""
    try:
        return strictjson.loads(line), None
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON: {exc.msg} (column {exc.colno})"
    except (ValueError, RecursionError) as exc:  # a repeated key, NaN, too deep
        return None, f"not valid JSON: {exc}"


def schema_problem(data: Any, schema: str, what: str) -> str | None:
    """``not <what>: at $.path: message`` for the first place ``data`` breaks
    ``schemas/<schema>.schema.json`` (the shallowest first), or None."""
    from introspection_cli.minischema import Validator
    from introspection_cli.resources import load_schema

    errors = sorted(Validator(load_schema(schema)).iter_errors(data),
                    key=lambda e: (len(e.absolute_path), [str(p) for p in e.absolute_path]))
    if not errors:
        return None
    first = errors[0]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path)
    return f"not {what}: at ${where}: {first.message}"


def read_bounded(path: Path, limit: int, kind: str,
                 error: Callable[[Path, str], RecordFileError]) -> bytes:
    """The file's bytes (b"" when there is none), at most ``limit``; ``error(path,
    message)`` for one that cannot be read (``kind`` names what it should be)."""
    from introspection_cli.localfiles import FileTooLarge, NotARegularFile, read_file

    try:
        return read_file(path, limit=limit)
    except FileNotFoundError:
        return b""
    except FileTooLarge:
        raise error(path, f"it is over {limit >> 20} MiB, far larger than {kind}") from None
    except NotARegularFile as exc:
        raise error(path, f"it is {exc.kind}, not {kind}") from None
    except OSError as exc:
        raise error(path, f"cannot read it ({exc.strerror or exc})") from None
