"""No certificate or report made by a model run is committed to this repository.

The tests run judges against a scripted stub server; a certificate or report
from such a run claims that a model agreed with humans when no model ran. The
only certificates in the repository are the check rules' synthetic cases under
``fixtures/invalid/``: an all-zero fingerprint and all-zero instructions, gate and
harness digests (no judge can ever match them), the model ``synthetic-test-fixture``.
Their ``rows_digest`` may be that of the case's own rows and their ``llm`` digest
that of the synthetic model: ``check`` recomputes both, so a case breaking something
else needs them right. No tracked file
is an eval report (JSON), a JUnit file or an HTML report written by ``judges eval``
(the golden reports' expected bytes carry stand-ins for the version, time and path,
which no run writes).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from tests.conftest import REPO

ZERO_DIGEST = "sha256:" + "0" * 64
#: Parts of the package that hold the report's machinery, not a report.
SOURCE_DIRS = ("introspection_cli/", "schemas/")
#: tests/evaluation/test_golden_report.py's expected reports of stub runs, each with the
#: tool's version, the time and the recipe's path replaced by stand-ins: a file there
#: without them would be a report a run wrote, and fails below like any other.
GOLDEN_DIR = "tests/evaluation/golden/"
#: tests/reporting/test_golden_html.py's expected pages, drawn from those reports: the
#: same stand-ins in their provenance line.
GOLDEN_PAGES = "tests/reporting/golden/"
_PAGE_STAND_INS = "introspection &lt;tool_version&gt;, &lt;created_at&gt;"
_STAND_INS = {"tool_version": "<tool_version>", "created_at": "<created_at>",
              "recipe": "<recipe>"}


def _tracked() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                            check=True).stdout
    return [Path(name) for name in listed.decode("utf-8").split("\0") if name]


def test_every_committed_certificate_is_a_synthetic_case_that_can_never_be_valid() -> None:
    certificates = [path for path in _tracked() if path.name.endswith(".certificate.json")]
    assert certificates  # the check rules' cases are there: this test looks at something
    for path in certificates:
        assert path.parts[:2] == ("fixtures", "invalid"), path
        try:
            certificate = json.loads((REPO / path).read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            continue  # a case of certificate-invalid: not even JSON
        assert certificate["fingerprint"] == ZERO_DIGEST, path
        components = certificate["components"]
        assert {components[part] for part in ("instructions", "gate", "harness")} == {
            ZERO_DIGEST}, path
        assert components["llm"] in (ZERO_DIGEST, *_synthetic_llm_digests()), path
        assert certificate["model"] == "synthetic-test-fixture", path


def _synthetic_llm_digests() -> list[str]:
    """The llm digests of the synthetic model, with either provider and no parameters."""
    from introspection_cli.fixture.canonical import canonical_json

    return ["sha256:" + hashlib.sha256(canonical_json({
        "provider": provider, "model": "synthetic-test-fixture", "temperature": None,
        "max_output_tokens": None})).hexdigest() for provider in ("openai", "anthropic")]


def test_no_committed_file_is_a_report_of_a_run() -> None:
    for path in _tracked():
        if str(path).startswith(SOURCE_DIRS) or path.suffix not in {
                ".json", ".xml", ".html", ".sarif", ".tmp"}:
            continue
        text = (REPO / path).read_text(encoding="utf-8", errors="replace")
        assert '<testsuites name="introspection judges eval"' not in text, path
        if not (str(path).startswith(GOLDEN_PAGES) and _PAGE_STAND_INS in text
                and "Recipe <code>&lt;recipe&gt;</code>" in text):
            assert 'id="report-data"' not in text, path
        try:
            document = json.loads(text)
        except json.JSONDecodeError:
            continue  # not a report (a case of a truncated temp file is not JSON)
        if str(path).startswith(GOLDEN_DIR) and isinstance(document, dict) and all(
                document.get(name) == stand_in for name, stand_in in _STAND_INS.items()):
            continue  # an expected report, not one a run wrote
        assert not (isinstance(document, dict) and "report_version" in document), path
