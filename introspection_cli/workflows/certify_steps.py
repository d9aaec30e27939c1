"""The steps of certifying one judge, each small: what ``judges certify`` is made of.

A :class:`Candidate` is one judge on its way to a decision: prepared from the
files (:func:`prepare`: decided early when rows are rejected or too few to
ever reach the bar, and refused when its exposure file is broken), then, after
the run, its look recorded and its exposure derived (:func:`record_exposure`),
decided (:mod:`introspection_cli.certification.decision`, or a family's
levels) and, when certified, written (:func:`build_certificate`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from introspection_cli.certification.bounds import WILSON, BoundMethod, method_for
from introspection_cli.certification.certificate import (
    LABELS,
    OUTCOMES,
    Certificate,
    FamilyWise,
    RateRecord,
    Sequential,
    SplitRows,
    certificate_path,
    read_split,
)
from introspection_cli.certification.decision import (
    Certification,
    Rate,
    insufficient,
    rejected_rows,
    rows_needed,
)
from introspection_cli.certification.exposure import (
    Exposure,
    Look,
    derive_exposure,
    looks_under,
)
from introspection_cli.certification.exposure_file import exposure_path, read_looks
from introspection_cli.certification.exposure_record import record_look, run_test_rows, test_look
from introspection_cli.certification.raters import RaterAlpha, RatersRecord, conflicting_rows
from introspection_cli.evaluation.fingerprint import JudgeIdentity, judge_identity
from introspection_cli.evaluation.outcomes import JudgeRun
from introspection_cli.fsutil import check_output_target
from introspection_cli.provenance import tool_version
from introspection_cli.recipe.model import Judge

NO_EXPOSURE = Exposure(0, 0, (), (), False)


@dataclass
class Candidate:
    """One judge being certified, and what is known of it so far."""

    judge: Judge
    identity: JudgeIdentity
    provider: str
    model: str
    target: Path
    split: SplitRows
    #: The decision the file alone made (rejected rows, too few rows), before any call.
    early: Certification | None = None
    run: JudgeRun | None = None
    look: Look | None = None
    exposure: Exposure = NO_EXPOSURE
    #: Looks at these rows under this procedure, this one included.
    sequential_looks: int = 1
    #: The bound this look is decided with: Wilson for a first look, the anytime-valid
    #: bound when the exposure file shows earlier ones under the same procedure.
    bound: BoundMethod = WILSON
    decision: Certification | None = None
    family: FamilyWise | None = None
    #: The judge's raters (an annotations file): the split's rows in conflict, left out,
    #: and the alpha --min-rater-alpha required; None without an annotations file.
    raters: RatersRecord | None = None

    @property
    def name(self) -> str:
        return self.judge.name

    @property
    def excluded(self) -> tuple[str, ...]:
        """The split's rows in conflict: not evaluated, not scored."""
        return self.raters.excluded if self.raters is not None else ()

    @property
    def final(self) -> Certification:
        decision = self.decision or self.early
        assert decision is not None  # decided before anything reads it
        return decision


def prepare(judge: Judge, *, provider: str | None, model: str | None, split: str,
            bar: float, samples: int = 1, min_rater_alpha: float | None = None) -> Candidate:
    """A judge's candidate, from its files: the split's rows (less those its raters are in
    conflict on), the bound its look will be decided with, and the decision the rows make
    alone if they do. Raises when the certificate cannot be written or the exposure file
    cannot be read (before any model call is paid for)."""
    chosen_provider, chosen_model = provider or judge.llm.provider, model or judge.llm.model
    identity = judge_identity(judge, provider=chosen_provider, model=chosen_model)
    target = certificate_path(judge.path.parent, judge.name)
    check_output_target(target, flag="the certificate")
    rows = read_split(judge.calibration_path, split) if judge.calibration_path.is_file() \
        else SplitRows([], [])
    candidate = Candidate(judge, identity, chosen_provider, chosen_model, target, rows)
    if split == "test":  # a broken exposure file is refused here
        looks = read_looks(exposure_path(judge.path.parent, judge.name))
        earlier = looks_under(looks, (identity.fingerprint, samples), _test_rows(rows))
        candidate.bound = method_for(earlier + 1)
    candidate.raters = rater_record(judge, rows, min_rater_alpha)
    left_out = set(candidate.excluded)
    labelled = {label: sum(row.expected == label for row in rows.rows
                           if row.conversation_id not in left_out) for label in LABELS}
    alpha_refusal = _alpha_refusal(candidate.raters, min_rater_alpha)
    if alpha_refusal is not None:
        candidate.early = Certification("not_certified", bar, 0.0, sum(labelled.values()), 0,
                                        None, None, None, labelled, labelled,
                                        rows_needed(labelled, bar, bound=candidate.bound),
                                        (alpha_refusal,), bound=candidate.bound)
    elif rows.rejected:
        candidate.early = rejected_rows(labelled, bar,
                                        sorted({line for line, _, _ in rows.rejected}))
    else:
        candidate.early = insufficient(labelled, bar, labelled=labelled,
                                       bound=candidate.bound)
    return candidate


def _test_rows(split: SplitRows) -> dict[str, tuple[str, str]]:
    return {row.conversation_id: (row.snapshot_hash, row.expected) for row in split.rows}


def rater_record(judge: Judge, rows: SplitRows,
                 min_rater_alpha: float | None) -> RatersRecord | None:
    """The judge's raters as a certificate records them (None without an annotations
    file): the split's rows in conflict, and with ``min_rater_alpha`` the alpha measured
    over every row two raters labelled (None in it when the labels give none)."""
    from introspection_cli.annotations.location import annotations_path

    if not annotations_path(judge.path.parent, judge.name).exists():
        if min_rater_alpha is not None:
            return RatersRecord((), min_rater_alpha, None)
        return None
    excluded = tuple(conflicting_rows(judge.path.parent, judge.name, rows.rows))
    return RatersRecord(excluded, min_rater_alpha,
                        _alpha(judge) if min_rater_alpha is not None else None)


def _alpha(judge: Judge) -> RaterAlpha | None:
    from introspection_cli.annotations.agreement import DRAWS, AgreementRefused, alpha_interval
    from introspection_cli.workflows.agree import rater_data

    data = rater_data(judge)
    if data is None:
        return None
    labels = data.labels
    try:
        interval, _ = alpha_interval(labels)
    except AgreementRefused:
        return None
    pairable = sum(len(given) >= 2 for given in labels.values())
    return RaterAlpha(interval.value, interval.low, interval.high, pairable, DRAWS)


def _alpha_refusal(record: RatersRecord | None, min_rater_alpha: float | None) -> str | None:
    """Why ``--min-rater-alpha`` refuses, in a sentence; None when it does not."""
    if min_rater_alpha is None:
        return None
    alpha = record.alpha if record is not None else None
    if alpha is None:
        return (f"--min-rater-alpha {min_rater_alpha:g}: the raters' alpha cannot be computed "
                "(it needs two raters on the same rows, with more than one label among them; "
                "`introspection judges agree` says why)")
    if alpha.low < min_rater_alpha:
        return (f"the raters' Krippendorff alpha is {alpha.value:.3f} (95% interval "
                f"{alpha.low:.3f}–{alpha.high:.3f}) over {alpha.units} rows; its lower bound is "
                f"below --min-rater-alpha {min_rater_alpha:g}: the labels themselves are not "
                "reliable enough to certify a judge against (sharpen the rubric, then label "
                "again)")
    return None


def record_exposure(candidate: Candidate, *, samples: int, cache_dir: Path,
                    split: str) -> None:
    """Append this run's look at the test rows, and derive the exposure from the file."""
    run = candidate.run
    assert run is not None  # after the run
    if split != "test":
        return  # dev and train rows are not held out: no look at test, no exposure
    judges_dir, name = candidate.judge.path.parent, candidate.name
    candidate.look = test_look(run_test_rows(run), fingerprint=candidate.identity.fingerprint,
                               samples=samples, temperature=candidate.judge.llm.temperature)
    looks = read_looks(exposure_path(judges_dir, name)) if candidate.look is None else \
        record_look(judges_dir, name, candidate.look, cache_dir=cache_dir)
    test_rows = _test_rows(candidate.split)
    latest = None if candidate.look is None else {
        row.conversation_id: row.outcome for row in run.rows
        if row.split == "test" and row.outcome != "error"}
    candidate.exposure = derive_exposure(looks, test_rows, latest=latest)
    candidate.sequential_looks = looks_under(looks, (candidate.identity.fingerprint, samples),
                                             test_rows)
    # The file is the truth (another run may have looked since prepare): this look is the
    # sequential_looks-th, or the next one when it judged no row and was not recorded.
    candidate.bound = method_for(candidate.sequential_looks + (candidate.look is None))


def build_certificate(candidate: Candidate, *, split: str, samples: int,
                      accepted: str | None, certified_at: str) -> Certificate:
    """The certificate of a certified candidate."""
    run, decision = candidate.run, candidate.decision
    assert run is not None and decision is not None and decision.certified
    assert decision.tpr is not None and decision.tnr is not None
    confusion = {label: dict.fromkeys(OUTCOMES, 0) for label in LABELS}
    for row in run.rows:
        confusion[row.expected][row.outcome] += 1
    llm = candidate.judge.llm
    return Certificate(
        candidate.name, candidate.identity.fingerprint, dict(candidate.identity.components),
        candidate.provider, candidate.model, llm.temperature, llm.max_output_tokens,
        split, decision.bar, decision.bar_na, decision.max_error_rate,
        decision.alpha, candidate.family, samples, candidate.split.digest, decision.rows,
        _record(decision.tpr), _record(decision.tnr),
        None if decision.na_recall is None else _record(decision.na_recall), decision.errors,
        confusion, tuple((row.conversation_id, row.outcome) for row in run.rows),
        candidate.exposure, accepted,
        Sequential(max(1, candidate.sequential_looks), decision.bound.name,
                   decision.bound.parameters),
        tool_version(), certified_at, candidate.raters)


def _record(rate: Rate) -> RateRecord:
    interval = rate.interval
    return RateRecord(interval.value, interval.low, interval.high, rate.n)
