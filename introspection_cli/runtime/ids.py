"""Reading an ids file: one conversation id per line, ``#`` comments and blank lines ignored."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from introspection_cli.errors import UsageError
from introspection_cli.runtime.interface import MAX_IDS_PER_EXPORT


@dataclass(frozen=True, slots=True)
class IdsFile:
    """The distinct ids of an ids file in file order, and the ids that were listed twice."""

    ids: list[str]
    duplicates: list[str] = field(default_factory=list)


def parse_ids(text: str, *, source: str = "the ids file") -> IdsFile:
    """Parse ids-file text. A ``#`` starts a comment anywhere on a line.

    Raises :class:`UsageError` for an id containing whitespace, for no ids at
    all, and for more than :data:`MAX_IDS_PER_EXPORT` distinct ids.
    """
    ids: list[str] = []
    seen: set[str] = set()
    duplicates: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        value = raw.split("#", 1)[0].strip()
        if not value:
            continue
        if any(char.isspace() for char in value):
            raise UsageError(
                f"{source}:{number}: {value!r} is not one conversation id; put one id per line"
            )
        if value in seen:
            if value not in duplicates:
                duplicates.append(value)
            continue
        seen.add(value)
        ids.append(value)
    if not ids:
        raise UsageError(f"{source} lists no conversation ids; put one id per line")
    if len(ids) > MAX_IDS_PER_EXPORT:
        raise UsageError(
            f"{source} lists {len(ids)} conversation ids; the runtime exports at most "
            f"{MAX_IDS_PER_EXPORT} per call: split it into files of {MAX_IDS_PER_EXPORT} or fewer"
        )
    return IdsFile(ids=ids, duplicates=duplicates)


def read_ids_file(path: Path) -> IdsFile:
    """Read and parse an ids file (UTF-8)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise UsageError(f"ids file {path} does not exist") from None
    except IsADirectoryError:
        raise UsageError(f"ids file {path} is a directory; pass a file") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"ids file {path} is not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise UsageError(f"cannot read ids file {path}: {exc.strerror}") from None
    return parse_ids(text, source=str(path))
