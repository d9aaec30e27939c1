"""A YAML loader that keeps source positions and speaks YAML 1.2 core scalars.

PyYAML's parser (the libyaml C parser when available) composes the node
graph; we turn nodes into plain Python values ourselves so that:

* every value and key keeps its line and column (:class:`Positions`);
* plain scalars follow the YAML 1.2 core schema (:mod:`~.yamlscalars`): only
  ``true``/``false`` are booleans, so ``on:`` stays the string ``on``, ``1:30``
  stays a string and dates are not parsed;
* a duplicate key is an error naming both lines;
* aliases are shared, never copied, and a document whose aliases would expand
  past :data:`NODE_BUDGET` nodes (a "billion laughs" file) is rejected after
  visiting each distinct node once.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from introspection_cli.diagnostics import escape_text
from introspection_cli.recipe.yamlscalars import resolve_core_scalar

try:  # libyaml is much faster; the pure-Python parser gives the same nodes
    from yaml.cyaml import CParser as _Parser  # type: ignore[attr-defined]

    #: libyaml reports a bad character's position as a byte offset into the UTF-8
    #: text (the pure-Python reader, as a character offset).
    _READER_OFFSET_IN_BYTES = True
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    _READER_OFFSET_IN_BYTES = False

    class _Parser(yaml.reader.Reader, yaml.scanner.Scanner,  # type: ignore[no-redef]
                  yaml.parser.Parser, yaml.composer.Composer):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            yaml.composer.Composer.__init__(self)

#: Maximum number of nodes a document may expand to, aliases included.
NODE_BUDGET = 100_000
#: Maximum nesting depth of collections; recipe files never come close.
MAX_DEPTH = 100

PathT = tuple[str | int, ...]
ScalarMode = Literal["core", "string"]

_PLAIN = "tag:introspection:plain"
_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"


#: Longest piece of user text a message quotes.
QUOTE_LIMIT = 80


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """User text as a message shows it: single-quoted, escaped, cut after ``limit`` characters."""
    shown = text if len(text) <= limit else text[:limit - 1] + "…"
    return f"'{escape_text(shown)}'"


@dataclass(frozen=True, slots=True)
class Mark:
    """A 1-based source position."""

    line: int
    column: int


class YamlProblem(Exception):
    """A file that cannot be read as a YAML mapping; carries a diagnostic's parts."""

    def __init__(self, code: str, message: str, mark: Mark | None,
                 hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.mark = mark
        self.hint = hint


@dataclass
class Positions:
    """Where each value (by path) and each mapping key (by path incl. the key) starts."""

    values: dict[PathT, Mark] = field(default_factory=dict)
    keys: dict[PathT, Mark] = field(default_factory=dict)

    def value(self, path: PathT) -> Mark:
        """Position of the value at ``path``, or of its nearest recorded ancestor."""
        while path not in self.values and path:
            path = path[:-1]
        return self.values.get(path, Mark(1, 1))

    def key(self, path: PathT) -> Mark:
        """Position of the key that ends ``path`` (the value's position when unknown)."""
        return self.keys.get(path) or self.value(path)


@dataclass
class Document:
    """A loaded YAML mapping with the positions of everything in it."""

    data: dict[str, Any]
    positions: Positions


class _Composer(_Parser, yaml.resolver.BaseResolver):
    """Composes nodes only; tags plain scalars so we can resolve them ourselves."""

    def __init__(self, stream: str) -> None:
        _Parser.__init__(self, stream)
        yaml.resolver.BaseResolver.__init__(self)

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode:
            return _PLAIN if implicit[0] else _STR
        return _SEQ if kind is yaml.SequenceNode else _MAP


def decode(data: bytes) -> tuple[str, list[YamlProblem]]:
    """Decode UTF-8 ``data``; a BOM is reported (and stripped), bad bytes raise."""
    problems: list[YamlProblem] = []
    if data.startswith(b"\xef\xbb\xbf"):
        problems.append(YamlProblem(
            "bom", "file starts with a UTF-8 byte order mark", Mark(1, 1),
            "save the file as UTF-8 without a BOM"))
        data = data[3:]
    try:
        return data.decode("utf-8"), problems
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        column = len(data[line_start:exc.start].decode("utf-8", "replace")) + 1
        raise YamlProblem(
            "encoding", f"invalid UTF-8 byte 0x{data[exc.start]:02x}",
            Mark(line, column), "save the file as UTF-8") from None


def load_mapping(text: str, *, line_offset: int = 0, scalars: ScalarMode = "core",
                 what: str = "file") -> Document:
    """Parse ``text`` as one YAML document that must be a mapping.

    ``line_offset`` is added to every line (for YAML embedded in another file,
    such as SKILL.md front matter). ``scalars="string"`` keeps every plain
    scalar as its source text, as the Agent Skills reference validator does.
    Raises :class:`YamlProblem`.
    """
    if not text.strip():
        raise YamlProblem("yaml-empty", f"{what} is empty", Mark(1 + line_offset, 1),
                          "add the required keys")
    composer = _Composer(text)
    lines = _Lines.for_text(text)
    try:
        node = composer.get_single_node()
    except yaml.MarkedYAMLError as exc:
        raise _syntax_problem(exc, text, line_offset, lines) from None
    except yaml.YAMLError as exc:  # ReaderError: a character YAML does not allow
        raise _reader_problem(exc, text, line_offset) from None
    except RecursionError:  # the pure-Python composer recurses once per nesting level
        raise YamlProblem("yaml-too-deep", f"nesting deeper than {MAX_DEPTH} levels", None,
                          "flatten the structure") from None
    finally:
        composer.dispose()
    if node is None:
        raise YamlProblem("yaml-empty", f"{what} has no content (only comments)",
                          Mark(1 + line_offset, 1), "add the required keys")
    builder = _Builder(line_offset, scalars, lines)
    data = builder.build(node)
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else "a single value"
        raise YamlProblem("yaml-not-mapping", f"{what} must be a mapping of keys to values, "
                          f"not {kind}", builder.mark(node), "write it as `key: value` lines")
    return Document(data, builder.positions)


class _Lines:
    """Positions as YAML 1.2 counts lines, for text where libyaml counts differently.

    libyaml follows YAML 1.1, where NEL (U+0085) and the Unicode line and paragraph
    separators (U+2028, U+2029) also end a line; YAML 1.2 (and every editor, and
    the rest of this tool) break lines only at LF, CR LF and CR. For text holding
    one of those characters, a mark's line and column are recomputed from its
    character index; other text keeps libyaml's marks as they are (no cost).
    """

    _BREAK = re.compile(r"\r\n|\r|\n")

    def __init__(self, text: str) -> None:
        self.starts = [0] + [match.end() for match in self._BREAK.finditer(text)]

    @classmethod
    def for_text(cls, text: str) -> _Lines | None:
        return cls(text) if any(char in text for char in "\x85\u2028\u2029") else None

    def position(self, mark: yaml.Mark) -> tuple[int, int]:
        """0-based (line, column) of ``mark``."""
        line = bisect.bisect_right(self.starts, mark.index) - 1
        return line, mark.index - self.starts[line]


def _position(mark: yaml.Mark, lines: _Lines | None, line_offset: int) -> Mark:
    line, column = (mark.line, mark.column) if lines is None else lines.position(mark)
    return Mark(line + 1 + line_offset, column + 1)


def _syntax_problem(exc: yaml.MarkedYAMLError, text: str, line_offset: int,
                    lines: _Lines | None) -> YamlProblem:
    mark = exc.problem_mark or exc.context_mark
    where = _position(mark, lines, line_offset) if mark else None
    problem = exc.problem or "invalid YAML"
    if "maximum nesting depth" in problem:  # libyaml stops at 1,000 levels
        return YamlProblem("yaml-too-deep", f"nesting deeper than {MAX_DEPTH} levels", where,
                           "flatten the structure")
    from introspection_cli.recipe.yamlhints import explain  # only for a file that is broken

    advice = explain(problem, text, where.line - line_offset, where.column) if where else None
    if advice is not None:
        return YamlProblem("yaml-syntax", advice.message,
                           Mark(advice.line + line_offset, advice.column), advice.hint)
    if exc.context and "single document" not in problem:
        problem = f"{exc.context}: {problem}" if "while" not in exc.context else problem
    hint = None
    if "mapping values are not allowed" in problem:
        hint = "quote a value that contains ': ' (for example description: \"a: b\")"
    elif "'\\t'" in problem:
        hint = "YAML indentation must use spaces, not tabs"
    elif "expected a single document" in problem:
        hint = "keep one document per file (remove the extra '---')"
    return YamlProblem("yaml-syntax", f"invalid YAML: {escape_text(problem)}", where, hint)


def _reader_problem(exc: yaml.YAMLError, text: str, line_offset: int) -> YamlProblem:
    position = getattr(exc, "position", None)
    mark = None
    if isinstance(position, int):
        if _READER_OFFSET_IN_BYTES:
            position = character_offset(text, position)
        line_start = text.rfind("\n", 0, position) + 1
        mark = Mark(text.count("\n", 0, position) + 1 + line_offset, position - line_start + 1)
    reason = getattr(exc, "reason", None) or "a character YAML does not allow"
    return YamlProblem("yaml-syntax", f"invalid YAML: {reason}", mark,
                       "remove control characters from the file")


def character_offset(text: str, byte_offset: int) -> int:
    """The index in ``text`` of the character at ``byte_offset`` of its UTF-8 encoding."""
    return len(text.encode("utf-8", "surrogatepass")[:byte_offset].decode("utf-8", "ignore"))


class _Builder:
    """Turns a node graph into Python values, recording positions and enforcing budgets."""

    def __init__(self, line_offset: int, scalars: ScalarMode,
                 lines: _Lines | None = None) -> None:
        self.line_offset = line_offset
        self.scalars = scalars
        self.lines = lines
        self.positions = Positions()
        self.expanded = 0
        self._done: dict[int, tuple[Any, int]] = {}  # id(node) -> (value, expanded size)
        self._active: set[int] = set()

    def mark(self, node: yaml.Node) -> Mark:
        if self.lines is not None:
            return _position(node.start_mark, self.lines, self.line_offset)
        return Mark(node.start_mark.line + 1 + self.line_offset, node.start_mark.column + 1)

    def build(self, root: yaml.Node) -> Any:
        value, size = self._node(root, (), 0)
        self.expanded = size
        return value

    def _node(self, node: yaml.Node, path: PathT, depth: int) -> tuple[Any, int]:
        self.positions.values.setdefault(path, self.mark(node))
        done = self._done.get(id(node))
        if done is not None:  # an alias: share the value, count its full size
            self._spend(done[1], node)
            return done
        if id(node) in self._active:
            raise YamlProblem("yaml-recursive-alias", "an alias refers to a node that "
                              "contains it", self.mark(node), "remove the recursive alias")
        if depth > MAX_DEPTH:
            raise YamlProblem("yaml-too-deep", f"nesting deeper than {MAX_DEPTH} levels",
                              self.mark(node), "flatten the structure")
        self._active.add(id(node))
        if isinstance(node, yaml.MappingNode):
            result = self._mapping(node, path, depth)
        elif isinstance(node, yaml.SequenceNode):
            result = self._sequence(node, path, depth)
        else:
            assert isinstance(node, yaml.ScalarNode)
            result = (self._scalar(node), 1)
        self._active.discard(id(node))
        self._done[id(node)] = result
        return result

    def _spend(self, size: int, node: yaml.Node) -> None:
        self.expanded += size
        if self.expanded > NODE_BUDGET:
            raise YamlProblem("yaml-too-large", f"aliases expand this document past "
                              f"{NODE_BUDGET:,} nodes", self.mark(node),
                              "remove the aliases (&anchor / *alias); recipe files never "
                              "need them")

    def _sequence(self, node: yaml.SequenceNode, path: PathT, depth: int) -> tuple[Any, int]:
        self._check_tag(node, _SEQ, "a list")
        items: list[Any] = []
        size = 1
        for index, child in enumerate(node.value):
            value, child_size = self._node(child, (*path, index), depth + 1)
            items.append(value)
            size += child_size
        return items, size

    def _mapping(self, node: yaml.MappingNode, path: PathT, depth: int) -> tuple[Any, int]:
        self._check_tag(node, _MAP, "a mapping")
        result: dict[str, Any] = {}
        first_seen: dict[str, Mark] = {}
        size = 1
        for key_node, value_node in node.value:
            key = self._key(key_node)
            key_mark = self.mark(key_node)
            if key in first_seen:
                raise YamlProblem(
                    "yaml-duplicate-key",
                    f"duplicate key {quote(key)} (first defined on line {first_seen[key].line})",
                    key_mark, "keep one of the two; YAML does not allow repeating a key")
            first_seen[key] = key_mark
            child_path = (*path, key)
            self.positions.keys[child_path] = key_mark
            value, child_size = self._node(value_node, child_path, depth + 1)
            result[key] = value
            size += child_size
        return result, size

    def _key(self, node: yaml.Node) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise YamlProblem("yaml-key-type", "a mapping key must be a plain value, "
                              "not a list or mapping", self.mark(node))
        return str(node.value)

    def _check_tag(self, node: yaml.Node, expected: str, what: str) -> None:
        if node.tag not in (expected, "!"):
            raise YamlProblem("yaml-tag", f"unsupported tag {quote(node.tag)} on {what}",
                              self.mark(node), "remove the tag")

    def _scalar(self, node: yaml.ScalarNode) -> Hashable:
        text: str = node.value
        tag = node.tag
        if tag == _PLAIN:
            return text if self.scalars == "string" else resolve_core_scalar(text)
        if tag in (_STR, "!"):
            return text
        explicit = {"tag:yaml.org,2002:int": int, "tag:yaml.org,2002:float": float,
                    "tag:yaml.org,2002:bool": bool, "tag:yaml.org,2002:null": type(None)}
        wanted = explicit.get(tag)
        value = resolve_core_scalar(text)
        if wanted is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if wanted is None or type(value) is not wanted:
            raise YamlProblem("yaml-tag", f"unsupported or mismatched tag {quote(tag)} on "
                              f"{quote(text)}", self.mark(node), "remove the tag")
        return value
