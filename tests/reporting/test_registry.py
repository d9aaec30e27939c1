"""One registry of renderers by (report kind, format): every entry imports and renders,
formats are checked one way, and a renderer is imported only when asked for."""

from __future__ import annotations

import subprocess
import sys

import pytest

from introspection_cli.errors import UsageError
from introspection_cli.formats import CHECK_FORMATS, TEXT_OR_JSON, Format, parse_format
from introspection_cli.reporting.registry import (
    ReportKind,
    check_format,
    registered,
    renderer,
    stdout_formats,
)
from tests.conftest import REPO


@pytest.mark.parametrize(("kind", "fmt"), list(registered()))
def test_every_registered_renderer_imports_and_is_callable(kind: ReportKind, fmt: Format) -> None:
    assert callable(renderer(kind, fmt))


def test_every_kind_prints_text_and_json() -> None:
    for kind in ReportKind:
        assert set(TEXT_OR_JSON) <= set(stdout_formats(kind)), kind


def test_checks_choices_are_its_renderers() -> None:
    assert stdout_formats(ReportKind.CHECK) == CHECK_FORMATS


@pytest.mark.parametrize("kind", [ReportKind.CERTIFY, ReportKind.ESTIMATE, ReportKind.DOCTOR])
def test_an_unknown_format_is_refused_naming_the_formats(kind: ReportKind) -> None:
    with pytest.raises(UsageError, match=r"^unknown format 'xml'; use one of: text, json$"):
        check_format(kind, "xml")


def test_a_restricted_format_says_what_restricts_it() -> None:
    with pytest.raises(UsageError, match=r"^unknown format 'markdown' for --dry-run; use one "
                                         r"of: text, json$"):
        check_format(ReportKind.DRY_RUN, "markdown", context="--dry-run")


def test_a_known_format_comes_back_as_its_member() -> None:
    assert parse_format("json", TEXT_OR_JSON) is Format.JSON
    assert check_format(ReportKind.EVAL, "markdown") is Format.MARKDOWN


def test_the_registry_imports_no_renderer_until_one_is_asked_for() -> None:
    code = ("import sys\n"
            "from introspection_cli.reporting import registry\n"
            "print(sorted(m for m in sys.modules if m.startswith('introspection_cli.reporting.')"
            "))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=REPO)
    assert result.stdout.strip() == "['introspection_cli.reporting.registry']"
