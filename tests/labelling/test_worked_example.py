"""The three-rater worked example in docs/labelling.md is computed here: three raters label
the same ten conversations through sheets (rater column), and ``judges agree``'s output is
the one the page shows, table and all."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

from tests.conftest import REPO
from tests.labelling.recipes import UNGATED_JUDGE, calibration, row, rows_of, write_recipe

Cli = Callable[..., CompletedProcess[str]]
DOC = REPO / "docs" / "labelling.md"
#: conversation -> each rater's label (p pass, f fail, n not_applicable, - not labelled),
#: Ana first (she labelled first, so her labels became expected), then Ben, then Chen.
TABLE = {
    "conv_01": "ppp", "conv_02": "ppp", "conv_03": "fff", "conv_04": "fpf", "conv_05": "ppp",
    "conv_06": "nnn", "conv_07": "pp-", "conv_08": "fff", "conv_09": "pfp", "conv_10": "ff-",
}
RATERS = ("Ana", "Ben", "Chen")
_WORDS = {"p": "pass", "f": "fail", "n": "not_applicable"}


def _table_markdown() -> str:
    lines = ["| conversation | Ana | Ben | Chen |", "|---|---|---|---|"]
    for conversation, labels in TABLE.items():
        cells = [_WORDS.get(label, "—") for label in labels]
        lines.append(f"| `{conversation}` | {' | '.join(cells)} |")
    return "\n".join(lines)


def _sheet(path: Path, rater: str, index: int) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["conversation_id", "expected", "rater"])
    for conversation, labels in TABLE.items():
        if labels[index] != "-":
            writer.writerow([conversation, _WORDS[labels[index]], rater])
    path.write_text(buffer.getvalue(), encoding="utf-8")


def _output_block(text: str) -> str:
    found = re.search(r"```text\n(judge helpful: 3 raters.*?)```", text, re.DOTALL)
    assert found, "docs/labelling.md has no judges agree output block"
    return found.group(1)


def test_the_worked_example_is_what_the_tool_prints(tmp_path: Path, cli: Cli) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [
        row(conversation) for conversation in TABLE])})
    for index, rater in enumerate(RATERS):
        sheet = tmp_path / f"{rater}.csv"
        _sheet(sheet, rater, index)
        done = cli(["judges", "label", str(recipe), "--from", str(sheet)])
        assert done.returncode == 0, done.stderr
    assert [r["expected"] for r in rows_of(calibration(recipe))] == [
        _WORDS[labels[0]] for labels in TABLE.values()]  # the first rater's labels
    agreed = cli(["judges", "agree", str(recipe), "--judge", "helpful"])
    assert agreed.returncode == 0, agreed.stderr
    doc = DOC.read_text(encoding="utf-8")
    assert _table_markdown() in doc
    assert _output_block(doc) == agreed.stdout
    document = json.loads(cli(["judges", "agree", str(recipe), "--format", "json"]).stdout)
    ana_ben = document["pairs"][0]["applicable_agreement"]
    fail = next(c for c in document["classes"] if c["label"] == "fail")
    prose = doc[doc.index("Read it like this:"):doc.index("## Without a browser")]
    for figure in ("alpha 0.764", "0.333–1.000", "kappa 1.000 over the 8 rows",
                   f"{round(ana_ben['value'] * ana_ben['n'])} of {ana_ben['n']}",
                   f"({fail['value']:.3f})", f"applicable agreement of "
                   f"{ana_ben['value']:.2f}"):
        assert figure in prose, figure
    assert f"{document['alpha']['value']:.3f}" == "0.764"
    assert (f"{document['alpha']['low']:.3f}–{document['alpha']['high']:.3f}"
            == "0.333–1.000")
