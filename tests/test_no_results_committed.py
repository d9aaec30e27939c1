"""No certificate or report made by a model run is committed to this repository.

The tests run judges against a scripted stub server; a certificate or report
from such a run claims that a model agreed with humans when no model ran. The
only certificates in the repository are the check rules' synthetic cases: all-zero
digests (no judge can ever match them) under ``fixtures/invalid/``. No tracked file
is an eval report (JSON), a JUnit file or an HTML report written by ``judges eval``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import REPO

ZERO_DIGEST = "sha256:" + "0" * 64
#: Parts of the package that hold the report's machinery, not a report.
SOURCE_DIRS = ("introspection_cli/", "schemas/")


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
        assert certificate.get("rows_digest", ZERO_DIGEST) == ZERO_DIGEST, path
        assert set(certificate["components"].values()) == {ZERO_DIGEST}, path
        assert certificate["model"] == "synthetic-test-fixture", path


def test_no_committed_file_is_a_report_of_a_run() -> None:
    for path in _tracked():
        if str(path).startswith(SOURCE_DIRS) or path.suffix not in {
                ".json", ".xml", ".html", ".sarif", ".tmp"}:
            continue
        text = (REPO / path).read_text(encoding="utf-8", errors="replace")
        assert '<testsuites name="introspection judges eval"' not in text, path
        assert 'id="report-data"' not in text, path
        try:
            document = json.loads(text)
        except json.JSONDecodeError:
            continue  # not a report (a case of a truncated temp file is not JSON)
        assert not (isinstance(document, dict) and "report_version" in document), path
