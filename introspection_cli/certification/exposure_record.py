"""Recording looks: the one call every command that evaluates test rows makes.

``judges eval`` (``--split test``, ``--threshold-split test``), ``judges
certify`` (and ``--verify``), ``judges estimate --report`` on a test split and
``judges estimate --design random`` over labelled rows that are the judge's test
rows each append one look per judge (per model) whose test rows were judged,
through :func:`record_look`. Rows whose outcome is an error are no look at them (the
model gave no verdict): a run that failed at the provider and is run again adds
only what it judged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from introspection_cli.certification.exposure import Exposure, Look, derive_exposure
from introspection_cli.certification.exposure_file import (
    ExposureError,
    append_looks,
    exposure_path,
    look_rows,
    migrated_looks,
)
from introspection_cli.errors import DataError
from introspection_cli.provenance import tool_version, utc_now

if TYPE_CHECKING:
    from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RowOutcome
    from introspection_cli.recipe.model import Judge, Recipe

#: (conversation_id, snapshot_hash, expected, outcome) of one evaluated test row.
TestRow = tuple[str, "str | None", str, str]


def test_look(rows: Iterable[TestRow], *, fingerprint: str, samples: int,
              temperature: float | None, at: str | None = None) -> Look | None:
    """The look of one evaluation of these test rows; None when none of them was judged."""
    judged = look_rows(rows)
    if judged is None:
        return None
    seen, digest = judged
    return Look(at or utc_now(), fingerprint, samples, temperature, seen, digest,
                tool_version())


def run_test_rows(run: JudgeRun) -> list[TestRow]:
    """The test rows of one judge's run, as a look records them."""
    return [(row.conversation_id, row.snapshot_hash, row.expected, row.outcome)
            for row in run.rows if row.split == "test"]


def record_look(judges_dir: Path, judge: str, look: Look, *, cache_dir: Path) -> list[Look]:
    """Append ``look`` to ``judge``'s exposure file (migrating the old ledger's test looks
    from ``cache_dir`` at the conversations of the judge's calibration file, when the
    file is new): the file's looks afterwards. Raises
    :class:`~.exposure_file.ExposureError`."""
    def migrate() -> list[Look]:
        from introspection_cli.evaluation.ledger import LEDGER_FILE, open_ledger

        if not (cache_dir / LEDGER_FILE).exists():
            return []  # nothing to migrate: the calibration file need not be read
        held = calibration_conversations(judges_dir, judge)
        ledger = open_ledger(cache_dir)
        try:
            return migrated_looks(ledger, judge, look.at, look.tool_version, held)
        finally:
            ledger.close()

    return append_looks(exposure_path(judges_dir, judge), [look], migrate=migrate)


def calibration_conversations(judges_dir: Path, judge: str) -> set[str]:
    """The conversation ids of every line of ``judge``'s calibration file (a rejected row's
    too: it is still this recipe's conversation); none when there is no file. Raises
    :class:`~.exposure_file.ExposureError` when it cannot be read."""
    from introspection_cli.fixture import line_conversation_id
    from introspection_cli.recipe.rules_layout import CALIBRATION_SUFFIX

    path = judges_dir / f"{judge}{CALIBRATION_SUFFIX}"
    try:
        with path.open("rb") as handle:
            return {cid for line in handle
                    if (cid := line_conversation_id(line.rstrip(b"\r\n"))) is not None}
    except FileNotFoundError:
        return set()
    except OSError as exc:
        raise ExposureError(path, f"cannot be read ({exc.strerror or exc}), so the old "
                            "evaluation ledger's test rows cannot be migrated; nothing was "
                            "recorded") from None


def record_test_looks(recipe: Recipe, run: EvalRun, *, samples: int,
                      cache_dir: Path) -> list[str]:
    """``judges eval``'s hook: a look for each judge run whose test rows were judged; a
    look that cannot be recorded is a warning (the run's report stands)."""
    warnings = []
    for judge_run in run.judges:
        judge = recipe.judges.get(judge_run.name)
        if judge is None or judge_run.fingerprint is None:
            continue
        warnings += record_judged_test_rows(judge, run_test_rows(judge_run),
                                            fingerprint=judge_run.fingerprint,
                                            samples=samples, cache_dir=cache_dir)
    return warnings


def record_judged_test_rows(judge: Judge, rows: Sequence[TestRow], *, fingerprint: str,
                            samples: int, cache_dir: Path) -> list[str]:
    """A look at ``judge``'s test ``rows`` judged under ``fingerprint`` (nothing when none
    was judged); its warnings: the file could not be written, or the exposure is no longer
    clean. Shared by ``judges eval`` and ``judges estimate --design random``."""
    look = test_look(rows, fingerprint=fingerprint, samples=samples,
                     temperature=judge.llm.temperature)
    if look is None:
        return []
    try:
        looks = record_look(judge.path.parent, judge.name, look, cache_dir=cache_dir)
    except DataError as exc:  # the file (ExposureError) or the lock on its directory
        return [f"judge {judge.name}: {exc}"]
    test_rows = {cid: (snapshot or "", expected) for cid, snapshot, expected, _ in rows}
    latest = {cid: outcome for cid, _, _, outcome in rows if outcome != "error"}
    exposure = derive_exposure(looks, test_rows, latest=latest)
    return [] if exposure.clean else [exposure_warning(judge.name, exposure)]


def exposure_warning(judge: str, exposure: Exposure) -> str:
    """Why a judge's test figures cannot be taken at face value any more."""
    return (f"judge {judge}: its test rows are no longer fresh: "
            + "; ".join(exposure.problems())
            + ". Its test figures are optimistic: the rubric or the rows have been tuned "
            "against them. Label fresh test rows (never evaluated) to measure it again")


def record_report_look(judge: Judge, fingerprint: str | None,
                       rows: Sequence[RowOutcome]) -> list[str]:
    """``judges estimate --report R --split test``'s hook: taking a judge's test figures
    from a report (its judge version ``fingerprint`` and ``rows``) is a look at its test
    rows. Problems are warnings, one line each."""
    from introspection_cli.evaluation.cache_dir import default_cache_dir
    from introspection_cli.evaluation.fingerprint import judge_fingerprint

    if fingerprint is None:
        return [f"judge {judge.name}: the report names no judge version (a version 1 report), "
                "so this look at its test rows is not recorded in its exposure file"]
    samples = max((len(row.samples) for row in rows), default=1) or 1
    temperature = judge.llm.temperature if fingerprint == judge_fingerprint(judge) else None
    look = test_look([(row.conversation_id, row.snapshot_hash, row.expected, row.outcome)
                      for row in rows if row.split == "test"],
                     fingerprint=fingerprint, samples=samples, temperature=temperature)
    if look is None:
        return []
    try:
        record_look(judge.path.parent, judge.name, look, cache_dir=default_cache_dir())
    except DataError as exc:  # the file (ExposureError) or the lock on its directory
        return [f"judge {judge.name}: {exc}"]
    return []
