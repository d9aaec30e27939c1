"""Reading an ids file: one conversation id per line, ``#`` comments and blank lines ignored."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from introspection_cli.errors import UsageError
from introspection_cli.localfiles import FileTooLarge, NotARegularFile, read_file

#: Tens of thousands of ids, with comments; a bound for a pipe that never ends.
MAX_IDS_FILE_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class IdsFile:
    """The distinct ids of an ids file in file order, and the ids that were listed twice."""

    ids: list[str]
    duplicates: list[str] = field(default_factory=list)


def parse_ids(text: str, *, source: str = "the ids file") -> IdsFile:
    """Parse ids-file text. A ``#`` starts a comment anywhere on a line.

    Raises :class:`UsageError` for an id containing whitespace and for no ids at
    all. Any number of ids is fine: the export asks the runtime for them in chunks.
    """
    ids: list[str] = []
    seen: set[str] = set()
    duplicates: list[str] = []
    # Lines end at \n only (a \r before it is dropped), as eval and check count them:
    # str.splitlines would also break at U+2028, \x0b, \x0c or \x85, and shift every
    # line number after one.
    for number, raw in enumerate(text.split("\n"), start=1):
        value = raw.removesuffix("\r").split("#", 1)[0].strip()
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
    return IdsFile(ids=ids, duplicates=duplicates)


def read_ids_file(path: Path) -> IdsFile:
    """Read and parse an ids file (UTF-8): a regular file, or a pipe (``<(command)``).

    Never blocks on a FIFO nobody writes to, nor reads a device forever.
    """
    try:
        data = read_file(path, limit=MAX_IDS_FILE_BYTES, allow_pipe=True)
    except FileNotFoundError:
        raise UsageError(f"ids file {path} does not exist") from None
    except NotARegularFile as exc:
        raise UsageError(f"ids file {path} is {exc.kind}; pass a file") from None
    except FileTooLarge:
        raise UsageError(f"ids file {path} is larger than {MAX_IDS_FILE_BYTES // 1024} KiB; "
                         "split it into smaller files and export each") from None
    except OSError as exc:
        raise UsageError(f"cannot read ids file {path}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"ids file {path} is not UTF-8 text (byte {exc.start})") from None
    return parse_ids(text, source=str(path))
