"""The worked example of docs/labelling.md and docs/certification.md, run for real.

"Label 40, plan, label, certify, repeat": the campaign is run end to end through
the CLI against the stub model server (which judges each row as its text
says), and every figure the docs quote is taken from the commands' output and
looked for in the docs' text. A change to a bound, a plan or an output line
that the docs do not follow fails here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import REPO, run_cli
from tests.evaluation.conftest import UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer

DOCS = {name: (REPO / "docs" / name).read_text() for name in ("labelling.md",
                                                             "certification.md")}


def _rows(prefix: str, passes: int, fails: int, *, wrong_passes: int = 0,
          wrong_fails: int = 0) -> list[dict[str, Any]]:
    """Labelled rows without a split; the stub misjudges the first ``wrong_*`` of each."""
    return [*(fixture_row(f"{prefix}-pass-{i}", f"hi {i} VERDICT:"
                          + ("fail" if i < wrong_passes else "pass"), expected="pass")
              for i in range(passes)),
            *(fixture_row(f"{prefix}-fail-{i}", f"hi {i} VERDICT:"
                          + ("pass" if i < wrong_fails else "fail"), expected="fail")
              for i in range(fails))]


class Campaign:
    """One judge's recipe and cache; each command as the docs show it."""

    def __init__(self, root: Path, cache: Path) -> None:
        self.root, self.env = root, {"INTROSPECTION_CACHE_DIR": str(cache)}

    def run(self, *args: str, code: int = 0) -> str:
        result = run_cli([*args[:2], str(self.root), *args[2:]], env=self.env)
        assert result.returncode == code, (args, result.stdout, result.stderr)
        return result.stdout

    def label(self, rows: list[dict[str, Any]]) -> None:
        """As `judges label` leaves them: the rows, labelled, appended to the file."""
        with (self.root / "judges" / "helpful.calibration.jsonl").open("a") as out:
            out.writelines(json.dumps(row) + "\n" for row in rows)


def _in(name: str, *fragments: str) -> None:
    for fragment in fragments:
        assert fragment in DOCS[name], f"not in docs/{name}: {fragment!r}"


def _line(output: str, start: str) -> str:
    (found,) = [line for line in output.splitlines() if line.lstrip().startswith(start)]
    return found.strip()


def test_the_worked_example_in_rounds(tmp_path: Path, stub: StubModelServer) -> None:
    root = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, _rows(
        "dev", 20, 20, wrong_passes=1, wrong_fails=1))})
    campaign = Campaign(root, tmp_path / "cache")
    # Round 0: 40 labels, all to dev, measured there; then the plan.
    campaign.run("judges", "split", "--ratios", "0:1:0")
    campaign.run("judges", "eval", "--split", "dev")
    plan = campaign.run("judges", "plan", "--judge", "helpful")
    planned = json.loads(campaign.run("judges", "plan", "--judge", "helpful", "--format", "json"))
    assert planned["classes"]["pass"]["rows"] == planned["classes"]["fail"]["rows"] == 184
    assert planned["labels_fill_test"] == 368
    _in("labelling.md", *(_line(plan, start) for start in (
        "judge helpful:", "bound ", "pass ", "fail ", "labels ", "with `judges split",
        "new labels are")))
    # Rounds 1 and 2: 40 labels to test (--fill-test), the first look: Wilson.
    campaign.label(_rows("r1", 20, 20, wrong_fails=1))
    filled = campaign.run("judges", "split", "--fill-test")
    assert "pass: 20 of the 184 planned, 164 more to label" in filled
    _in("labelling.md", "pass: 20 of the 184 planned, 164 more to label")
    first = campaign.run("judges", "certify", "--judge", "helpful", code=1)
    _in("certification.md", "$ introspection judges certify --judge helpful\n" + first)
    looks = [first]
    _in("labelling.md", _line(first, "to be certified with probability 80%"))
    # Round 3: 20 more; the second look is decided with the anytime-valid bound.
    campaign.label(_rows("r3", 10, 10))
    campaign.run("judges", "split", "--fill-test")
    looks.append(campaign.run("judges", "certify", "--judge", "helpful", code=1))
    # Round 4: 20 more; the third look certifies.
    campaign.label(_rows("r4", 10, 10))
    campaign.run("judges", "split", "--fill-test")
    looks.append(campaign.run("judges", "certify", "--judge", "helpful"))
    for output in looks:
        for name in DOCS:
            _in(name, *(_line(output, start) for start in ("tpr  ", "tnr  ", "bound  ")))
    _in("labelling.md", _line(looks[-1], "exposure  "))
    labels = sum(1 for _ in (root / "judges" / "helpful.calibration.jsonl").open())
    assert labels == 120
    _in("labelling.md", "In all, 120 labels: 40 in dev, 80 in test")
    _in("certification.md", "120 labels")
    assert run_cli(["check", str(root), "--require-certified"]).returncode == 0


def test_the_split_examples(tmp_path: Path) -> None:
    judge = UNGATED_JUDGE.replace("name: helpful", "name: billing-request-handling")
    rows = [*_rows("c", 30, 30), *(fixture_row(f"u{i}", "hi", expected=None) for i in range(4))]
    root = write_recipe(tmp_path / "r", {"billing-request-handling": (judge, rows)})
    first = run_cli(["judges", "split", "."], cwd=root)
    assert first.returncode == 0, first.stderr
    _in("labelling.md", first.stdout.strip(), first.stderr.strip())
    again = run_cli(["judges", "split", ".", "--dry-run"], cwd=root)
    _in("labelling.md", "\n".join(again.stdout.splitlines()[1:3]))
