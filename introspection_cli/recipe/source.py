"""Reading recipe files: bytes -> text -> YAML document, every failure as a Diagnostic."""

from __future__ import annotations

from pathlib import Path

from introspection_cli.diagnostics import Diagnostic, error
from introspection_cli.recipe.yamlload import (
    Document,
    ScalarMode,
    YamlProblem,
    decode,
    load_mapping,
)


def problem_diagnostic(display: str, problem: YamlProblem) -> Diagnostic:
    mark = problem.mark
    return error(display, mark.line if mark else None, mark.column if mark else None,
                 problem.code, problem.message, problem.hint)


def read_text(path: Path, display: str) -> tuple[str | None, list[Diagnostic]]:
    """Read ``path`` as UTF-8; a BOM is reported but the text is still returned."""
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        return None, [error(display, None, None, "not-a-file", "expected a file, found a "
                            "directory", "rename or remove the directory")]
    except OSError as exc:
        return None, [error(display, None, None, "file-unreadable",
                            f"cannot read the file: {exc.strerror or exc}",
                            "check the file's permissions")]
    try:
        text, problems = decode(data)
    except YamlProblem as problem:
        return None, [problem_diagnostic(display, problem)]
    return text, [problem_diagnostic(display, p) for p in problems]


def read_yaml(path: Path, display: str, *, what: str = "file",
              scalars: ScalarMode = "core") -> tuple[Document | None, list[Diagnostic]]:
    """Read and parse a YAML mapping file."""
    text, found = read_text(path, display)
    if text is None:
        return None, found
    try:
        return load_mapping(text, what=what, scalars=scalars), found
    except YamlProblem as problem:
        return None, [*found, problem_diagnostic(display, problem)]
