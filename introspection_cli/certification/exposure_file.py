"""``judges/<name>.exposure.jsonl``: reading, validating and appending looks.

The file lives in the recipe, beside the judge, so what the test rows were
shown to travels with them (another cache directory, another machine, a
colleague's checkout) and shows in review. It is only ever appended to, the
way calibration rows are written: under the lock on ``judges/`` every writer of
calibration files holds, by re-reading it and renaming a temporary file with
the old bytes and the new line over it, keeping its mode and owner. Each line
is one :class:`~.exposure.Look`, checked against ``schemas/exposure.schema.json``
(``introspection check``: ``exposure-invalid``).

The first look written for a judge carries over what the old evaluation ledger
beside the verdict cache (``evaluations.sqlite3``) knows of its test rows: one
migrated look per fingerprint (:func:`migrated_looks`), read once, when the file
is created.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from introspection_cli import strictjson
from introspection_cli.certification.exposure import LABELS, Look, outcomes_digest
from introspection_cli.errors import DataError

if TYPE_CHECKING:
    from introspection_cli.evaluation.ledger import Ledger

EXPOSURE_SUFFIX = ".exposure.jsonl"
SCHEMA_NAME = "exposure"  # schemas/exposure.schema.json
#: Far more than years of looks; a larger file is not read into memory.
MAX_EXPOSURE_BYTES = 64 << 20
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")
_SHA256_LINES = re.compile(r"(?:sha256:[0-9a-f]{64}\n)*sha256:[0-9a-f]{64}")


def exposure_path(judges_dir: Path, judge: str) -> Path:
    """Where ``judge``'s exposure file lives: beside its judge file."""
    return judges_dir / f"{judge}{EXPOSURE_SUFFIX}"


class ExposureError(DataError):
    """The exposure file cannot be read, or a line of it is not a look (exit 1)."""

    def __init__(self, path: Path, message: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")
        self.path, self.line, self.problem = path, line, message


@dataclass(frozen=True, slots=True)
class LineProblem:
    line: int
    message: str


def parse_looks(data: bytes, *, build: bool = True) -> tuple[list[Look], list[LineProblem]]:
    """Every look in the file's bytes, and every line that is not one (a blank line is
    not); with ``build=False`` only the problems (``check`` needs no looks)."""
    looks: list[Look] = []
    problems: list[LineProblem] = []
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # what follows the final newline is no line
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            problems.append(LineProblem(number, "a blank line; every line is one look"))
            continue
        parsed = parse_line(line, build=build)
        if isinstance(parsed, str):
            problems.append(LineProblem(number, parsed))
        elif parsed is not None:
            looks.append(parsed)
    return looks, problems


def parse_line(line: bytes, *, build: bool = True) -> Look | str | None:
    """The look on one line (None when not ``build``), or why it is not one (its schema,
    then what the schema's items cannot say: a row's hash, its label, a conversation seen
    twice)."""
    try:
        data = strictjson.loads(line)
    except UnicodeDecodeError:
        return "not UTF-8 text"
    except json.JSONDecodeError as exc:
        return f"not valid JSON: {exc.msg} (column {exc.colno})"
    except (ValueError, RecursionError) as exc:  # a repeated key, NaN, too deep
        return f"not valid JSON: {exc}"
    problem = _schema_problem(data)
    if problem is not None:
        return problem
    problem = _rows_problem(data["rows"])
    if problem is not None:
        return problem
    return Look.from_json(data) if build else None


def _schema_problem(data: Any) -> str | None:
    from introspection_cli.recipe.minischema import Validator
    from introspection_cli.resources import load_schema

    # The envelope with one row is checked against the schema (which is the contract);
    # the rows, all of one shape, by _rows_problem, which is the schema's items and
    # more, at a hundredth of the time on a 200-row look.
    sample = {**data, "rows": data["rows"][:1]} if isinstance(data, dict) and isinstance(
        data.get("rows"), list) else data
    errors = sorted(Validator(load_schema(SCHEMA_NAME)).iter_errors(sample),
                    key=lambda e: (len(e.absolute_path), [str(p) for p in e.absolute_path]))
    if not errors:
        return None
    first = errors[0]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path)
    return f"not an exposure record: at ${where}: {first.message}"


def _rows_problem(rows: list[Any]) -> str | None:
    """Why a look's rows are not rows, or None. Checked over all rows at once first (a
    look of the whole test split is thousands), row by row only to name a bad one."""
    if _rows_valid(rows):
        return None
    seen: set[str] = set()
    for index, row in enumerate(rows):
        if not (isinstance(row, list) and len(row) == 3 and all(
                (isinstance(v, str) and v) or v is None for v in row)):
            return (f"not an exposure record: at $.rows[{index}]: a row is "
                    "[conversation_id, snapshot_hash, expected]")
        conversation_id, snapshot, expected = row
        if conversation_id is None:
            return f"not an exposure record: at $.rows[{index}]: no conversation_id"
        if snapshot is not None and not _SHA256.fullmatch(snapshot):
            return f"not an exposure record: at $.rows[{index}][1]: not a snapshot_hash"
        if expected is not None and expected not in LABELS:
            return (f"not an exposure record: at $.rows[{index}][2]: {expected!r} is not a "
                    "label (pass, fail, not_applicable)")
        if conversation_id in seen:
            return f"conversation {conversation_id} appears twice in one look"
        seen.add(conversation_id)
    return None


def _rows_valid(rows: list[Any]) -> bool:
    if not all(type(row) is list and len(row) == 3 for row in rows):
        return False
    ids = [row[0] for row in rows]
    if not all(type(cid) is str and cid for cid in ids) or len(set(ids)) != len(ids):
        return False
    hashes = {row[1] for row in rows} - {None}
    labels = {row[2] for row in rows}
    return (all(type(snapshot) is str for snapshot in hashes)
            and (not hashes or _SHA256_LINES.fullmatch("\n".join(hashes)) is not None)
            and labels <= {*LABELS, None})


def read_bytes(path: Path) -> bytes:
    """The file's bytes (b"" when there is none); bounded. Raises :class:`ExposureError`."""
    from introspection_cli.localfiles import FileTooLarge, NotARegularFile, read_file

    try:
        data = read_file(path, limit=MAX_EXPOSURE_BYTES)
    except FileNotFoundError:
        return b""
    except FileTooLarge:
        raise ExposureError(path, f"it is over {MAX_EXPOSURE_BYTES >> 20} MiB, far larger "
                            "than an exposure file") from None
    except NotARegularFile as exc:
        raise ExposureError(path, f"it is {exc.kind}, not an exposure file") from None
    except OSError as exc:
        raise ExposureError(path, f"cannot read it ({exc.strerror or exc})") from None
    return data


def read_looks(path: Path) -> list[Look]:
    """Every look of the file (none when there is no file). Raises :class:`ExposureError`
    naming the first line that is not a look: nothing is decided on a file nobody can
    read whole."""
    looks, problems = parse_looks(read_bytes(path))
    if problems:
        raise ExposureError(path, problems[0].message, problems[0].line)
    return looks


def append_looks(path: Path, looks: Sequence[Look], *,
                 migrate: Callable[[], list[Look]] | None = None) -> list[Look]:
    """Append ``looks`` to the file, atomically and under the calibration writers' lock;
    the file's looks afterwards. When the file does not exist yet, ``migrate()``'s looks
    (the old ledger's) go first. Raises :class:`ExposureError` when the file holds a line
    that is not a look (nothing is written) or cannot be written."""
    from introspection_cli.fsutil import atomic_write_bytes, directory_lock

    with directory_lock(path):
        content = read_bytes(path)
        existing, problems = parse_looks(content)
        if problems:
            raise ExposureError(path, problems[0].message + "; nothing was appended (fix or "
                                "remove the line: `introspection check` lists it)",
                                problems[0].line)
        added = [*(migrate() if migrate is not None and not content else ()), *looks]
        if content and not content.endswith(b"\n"):
            content += b"\n"
        content += b"".join(_line(look) for look in added)
        try:
            atomic_write_bytes(path, content, keep_owner=True)
        except OSError as exc:
            raise ExposureError(path, f"cannot write it ({exc.strerror or exc}); the test "
                                "rows' exposure was not recorded") from None
    return [*existing, *added]


def _line(look: Look) -> bytes:
    return json.dumps(look.as_json(), ensure_ascii=False, separators=(", ", ": ")).encode(
        "utf-8") + b"\n"


def migrated_looks(ledger: Ledger, judge: str, at: str, tool_version: str) -> list[Look]:
    """One look per fingerprint under which the old ledger saw ``judge``'s rows in test:
    the rows it recorded (conversation ids; hash, label and samples it did not keep)."""
    looks = []
    for fingerprint, rows in sorted(ledger.test_evaluations(judge).items()):
        looks.append(Look(max((when for _, _, when in rows), default=at), fingerprint, None,
                          None, tuple(_unknown(cid) for cid, _, _ in rows),
                          outcomes_digest((cid, outcome) for cid, outcome, _ in rows),
                          tool_version, str(ledger.path)))
    return looks


def _unknown(conversation_id: str) -> Any:
    from introspection_cli.certification.exposure import SeenRow

    return SeenRow(conversation_id, None, None)


def look_rows(rows: Iterable[tuple[str, str | None, str, str]]) -> tuple[
        tuple[Any, ...], str] | None:
    """The seen rows and the outcomes digest of ``(conversation_id, snapshot_hash,
    expected, outcome)`` test rows, error rows left out; None when no row is left."""
    from introspection_cli.certification.exposure import SeenRow

    judged = [row for row in rows if row[3] != "error"]
    if not judged:
        return None
    seen = tuple(SeenRow(cid, snapshot, expected) for cid, snapshot, expected, _ in judged)
    return seen, outcomes_digest((cid, outcome) for cid, _, _, outcome in judged)

