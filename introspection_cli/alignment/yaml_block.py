"""Writing a new rubric into a judge file, changing no byte outside its ``instructions`` value.

The value is found by composing the file with PyYAML, whose marks give the
scalar's exact span, and only that span is rewritten:

* a literal (``|``) or folded (``>``) block keeps its header's comment, its
  content indentation and any blank lines after its content; its indicator and
  content are replaced by a literal block holding the new text;
* a plain or quoted scalar (on one line or several) becomes a literal block:
  the indicator takes the scalar's place, a comment after it on its line stays
  there, and the content follows on the next lines, indented two spaces past
  the key.

The new block uses the file's line ending (CR LF stays CR LF) and the chomping
indicator that gives exactly the new text back (``|-`` without a final line
break, ``|`` with one, ``|+`` with more), with an indentation indicator when
the text starts with a space. The result is parsed again with the recipe
loader: unless the ``instructions`` value is the new text and every other
value is unchanged, nothing is written (:class:`UnsupportedJudgeFile`). A
judge file that is not a block mapping (``{...}``), or whose ``instructions``
carries a tag or an anchor, is refused the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from introspection_cli.errors import DataError
from introspection_cli.fsutil import atomic_write_bytes, directory_lock
from introspection_cli.recipe.yamlload import YamlProblem, load_mapping

_BOM = "\ufeff"
_INDICATOR = re.compile(r"[|>][1-9+-]{0,2}")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_AFTER_FLOW_VALUE = re.compile(r"[ \t]*(?:#.*)?")

try:  # libyaml when PyYAML was built with it: the same nodes and marks, faster
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader


class UnsupportedJudgeFile(DataError):
    """The judge file's ``instructions`` cannot be replaced byte-exactly; nothing was written."""


@dataclass(frozen=True, slots=True)
class _Span:
    """Where the ``instructions`` value is in the decoded text, and how it is written."""

    start: int
    end: int
    style: str | None  # "|", ">", "'", '"', or None (plain)
    key_column: int
    newline: str


def replace_instructions(data: bytes, instructions: str, *, what: str = "the judge file") -> bytes:
    """``data`` (a judge file's bytes) with its ``instructions`` value set to ``instructions``.

    Raises :class:`UnsupportedJudgeFile` naming what stands in the way.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UnsupportedJudgeFile(f"{what} is not UTF-8 text") from None
    bom = _BOM if text.startswith(_BOM) else ""
    text = text[len(bom):]
    span = _locate(text, what)
    if span.style in ("|", ">"):
        new_text = _replace_block(text, span, instructions)
    else:
        new_text = _replace_flow(text, span, instructions, what)
    _verify(text, new_text, instructions, what)
    return (bom + new_text).encode("utf-8")


def _locate(text: str, what: str) -> _Span:
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise UnsupportedJudgeFile(f"{what} is not valid YAML ({exc})") from None
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        raise UnsupportedJudgeFile(f"{what} is not written as a block mapping (`key: value` "
                                   "lines); --write replaces instructions only there")
    for key, value in root.value:
        if isinstance(key, yaml.ScalarNode) and key.value == "instructions":
            if not isinstance(value, yaml.ScalarNode) or text[value.start_mark.index] in "!&*":
                raise UnsupportedJudgeFile(
                    f"{what}: instructions is not a plain, quoted or block string (it has a "
                    "tag, an anchor or an alias); write it as a `|` block to use --write")
            brk = _LINE_BREAK.search(text)
            return _Span(value.start_mark.index, value.end_mark.index, value.style,
                         key.start_mark.column, brk.group() if brk else "\n")
    raise UnsupportedJudgeFile(f"{what} has no instructions key")


def literal_block(value: str, indent: int, key_column: int, newline: str) -> tuple[str, str]:
    """The indicator and the content lines of a literal block holding exactly ``value``."""
    body = value.rstrip("\n")
    breaks = len(value) - len(body)
    lines = body.split("\n")
    indicator = "|"
    first = next((line for line in lines if line), "")
    if first.startswith(" "):  # the content would be read as more indented than it is
        if not 1 <= indent - key_column <= 9:
            indent = key_column + 2
        indicator += str(indent - key_column)
    indicator += "-" if breaks == 0 else "" if breaks == 1 else "+"
    content = "".join((" " * indent + line if line else "") + newline for line in lines)
    return indicator, content + newline * max(0, breaks - 1)


def _replace_block(text: str, span: _Span, instructions: str) -> str:
    header = _INDICATOR.match(text, span.start)
    assert header is not None  # the node is a block scalar: its text starts with | or >
    brk = _LINE_BREAK.search(text, header.end(), span.end)
    content_start = brk.end() if brk else span.end
    region = text[content_start:span.end]
    indent = _content_indent(region, span.key_column)
    indicator, content = literal_block(instructions, indent, span.key_column, span.newline)
    kept_tail = "" if indicator.endswith("+") else _blank_tail(region)
    return (text[:span.start] + indicator + text[header.end():content_start] + content
            + kept_tail + text[span.end:])


def _blank_tail(region: str) -> str:
    """The blank lines after a block's last content line (none for an empty block)."""
    lines = _LINE.findall(region)
    blank = 0
    while blank < len(lines) and not lines[-1 - blank].strip():
        blank += 1
    return "" if blank == len(lines) else "".join(lines[len(lines) - blank:])


def _content_indent(region: str, key_column: int) -> int:
    for line in _LINE_BREAK.split(region):
        if line.strip():
            return len(line) - len(line.lstrip(" "))
    return key_column + 2


def _replace_flow(text: str, span: _Span, instructions: str, what: str) -> str:
    brk = _LINE_BREAK.search(text, span.end)
    line_end = brk.start() if brk else len(text)
    rest = text[span.end:line_end]
    if not _AFTER_FLOW_VALUE.fullmatch(rest):
        raise UnsupportedJudgeFile(f"{what}: something other than a comment follows the "
                                   "instructions value on its line; put it on a line of its own")
    indicator, content = literal_block(instructions, span.key_column + 2, span.key_column,
                                       span.newline)
    after = text[brk.end():] if brk else ""
    newline = brk.group() if brk else span.newline
    return text[:span.start] + indicator + rest + newline + content + after


def _verify(old: str, new: str, instructions: str, what: str) -> None:
    """The new text reads as the old one with only ``instructions`` changed."""
    try:
        before, after = load_mapping(old).data, load_mapping(new).data
    except YamlProblem as exc:
        raise UnsupportedJudgeFile(f"{what}: replacing instructions would not give valid "
                                   f"YAML ({exc.message}); nothing was written") from None
    if after.get("instructions") != instructions or {**before, "instructions": instructions} \
            != after:
        raise UnsupportedJudgeFile(f"{what}: instructions cannot be replaced without changing "
                                   "another value of the file; nothing was written. Apply the "
                                   "diff by hand")


def write_instructions(path: Path, read: bytes, instructions: str) -> bytes:
    """Replace the judge file at ``path``, read earlier as ``read``, with its
    ``instructions`` set; atomic, keeping mode and owner. Refused, writing
    nothing, when the file changed since it was read. Returns the new bytes."""
    new = replace_instructions(read, instructions, what=str(path))
    with directory_lock(path):
        try:
            current = path.read_bytes()
        except OSError as exc:
            raise DataError(f"cannot read {path} before writing ({exc.strerror}); nothing "
                            "was written") from None
        if current != read:
            raise DataError(f"{path} changed on disk during the run; nothing was written. "
                            "Run judges align again")
        try:
            atomic_write_bytes(path, new, keep_owner=True)
        except OSError as exc:
            raise DataError(f"cannot write {path} ({exc.strerror}); the file was left as it "
                            "was") from None
    return new
