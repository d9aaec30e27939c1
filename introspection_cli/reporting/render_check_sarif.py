"""``check --format sarif``: SARIF 2.1.0, for GitHub code scanning and other SARIF readers.

One run, whose tool lists one rule per diagnostic code (``ruleId`` is the
code, the help text is that of docs/rules.md and docs/calibration.md), and one
result per diagnostic, every one kept. Paths relative to the working
directory are relative URIs against ``%SRCROOT%`` (the directory ``check`` ran
in, which is what code scanning expects when it runs at the repository root);
absolute paths are ``file:`` URIs. A diagnostic without a line (a missing file)
has no region: the result is about the whole file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from introspection_cli import __version__
from introspection_cli.diagnostics import Diagnostic
from introspection_cli.recipe.checker import RecipeResult
from introspection_cli.reporting.render_check import encodable
from introspection_cli.reporting.rule_help import RULE_HELP

SARIF_SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                "sarif-schema-2.1.0.json")
SOURCE_ROOT = "%SRCROOT%"


def render_sarif(results: Sequence[RecipeResult]) -> str:
    """The SARIF log of one ``check`` run, as JSON text."""
    diagnostics = [d for result in results for d in result.diagnostics]
    rules = _rules(diagnostics)
    index = {rule["id"]: number for number, rule in enumerate(rules)}
    run = {
        "tool": {"driver": {"name": "introspection", "version": __version__,
                            "semanticVersion": __version__, "rules": rules}},
        "originalUriBaseIds": {SOURCE_ROOT: {"uri": Path.cwd().as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(d, index[d.code]) for d in diagnostics],
    }
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _rules(diagnostics: Sequence[Diagnostic]) -> list[dict[str, Any]]:
    """Every documented code, then any code a diagnostic carries that the docs do not list."""
    rules = [_rule(code, severity, when, todo) for code, (severity, when, todo)
             in RULE_HELP.items()]
    for diagnostic in diagnostics:
        if diagnostic.code not in RULE_HELP and all(r["id"] != diagnostic.code for r in rules):
            rules.append(_rule(diagnostic.code, diagnostic.severity.value, diagnostic.code, ""))
    return rules


def _rule(code: str, severity: str, when: str, todo: str) -> dict[str, Any]:
    help_text = f"{when.rstrip('.')}. What to do: {todo}" if todo else when
    return {"id": code, "shortDescription": {"text": _first_sentence(when)},
            "fullDescription": {"text": when}, "help": {"text": help_text},
            "defaultConfiguration": {"level": severity}}


def _first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return head + dot.strip() if dot else text


def _result(diagnostic: Diagnostic, rule_index: int) -> dict[str, Any]:
    text = diagnostic.message + (f" ({diagnostic.hint})" if diagnostic.hint else "")
    location: dict[str, Any] = {"artifactLocation": _artifact(diagnostic.path)}
    if diagnostic.line is not None:
        region = {"startLine": diagnostic.line}
        if diagnostic.column is not None:
            region["startColumn"] = diagnostic.column
        location["region"] = region
    return {"ruleId": diagnostic.code, "ruleIndex": rule_index,
            "level": diagnostic.severity.value, "message": {"text": text},
            "locations": [{"physicalLocation": location}]}


def _artifact(path: str) -> dict[str, str]:
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(PurePosixPath(Path(path)).as_posix()), "uriBaseId": SOURCE_ROOT}


def _sarif(results: Sequence[RecipeResult], *, color: bool = False) -> str:
    return render_sarif(results)


#: The renderer the registry names: SARIF with lone surrogates escaped, as check's others.
check_sarif = encodable(_sarif)
