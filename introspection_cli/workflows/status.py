"""``judges status``: where each judge's calibration stands, from files alone.

Per judge with a calibration file: its rows (rejected by code, labelled by
label, unlabelled), how many rows its gate does not match, the split x label
table, its fingerprint, its certificate's state, how many judge versions have
been evaluated on its test rows on this machine, and a plan: how many more
labelled test rows of ``pass`` and of ``fail`` before a judge that agrees on
all of them could reach the certification bar, and before one at the
judge's current dev TPR/TNR could.

No model call and no heavy import (no Jinja2, no model SDK): each calibration
file is read once, and the "current dev figures" are the outcomes the
evaluation ledger recorded for the judge's *current* fingerprint on the rows
now in ``dev``, scored against their current labels
(:func:`dev_figures`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from introspection_cli.certification.bounds import (
    DEFAULT_ALPHA,
    WILSON,
    BoundMethod,
    method_for,
    plan_for,
)
from introspection_cli.certification.certificate import (
    Certificate,
    LabelledRow,
    certificate_path,
    read_certificate,
)
from introspection_cli.certification.exposure import Look, derive_exposure, looks_under
from introspection_cli.certification.power import (
    ASSUMED_RATE,
    PLAN_POWER,
    class_mix,
    share_reaching,
    shrunk_rate,
)
from introspection_cli.certification.state import assess_certificate
from introspection_cli.errors import DataError
from introspection_cli.evaluation.fingerprint import judge_fingerprint
from introspection_cli.evaluation.gate import DEFAULT_REGEX_TIMEOUT, GateTimeout, compile_gate
from introspection_cli.evaluation.ledger import Ledger
from introspection_cli.recipe.model import Judge
from introspection_cli.reporting.status_values import (
    PLANNED,
    DevFigures,
    JudgeStatus,
    Plan,
    RowCounts,
)
from introspection_cli.statistics import wilson_interval


def count_rows(judge: Judge, certified_split: str | None,
               regex_timeout: float = DEFAULT_REGEX_TIMEOUT, *, keep: int = 0) -> RowCounts:
    """Read ``judge``'s calibration file once and count what status shows (and keep the
    first ``keep`` verified rows)."""
    from introspection_cli.fixture import verify_calibration_file
    from introspection_cli.fixture.codes import BLANK_LINE, UNLABELLED

    counts = RowCounts(gate_misses=0 if judge.gate is not None else None)
    gate = compile_gate(judge.gate) if judge.gate is not None else None
    # Tallied in locals and plain dicts, folded into ``counts`` at the end: this loop runs
    # once per row and is most of what status does beyond check's own verification.
    rows = gate_misses = 0
    by_split_label: Counter[tuple[str | None, str | None]] = Counter()
    test_rows, dev_labels = counts.test_rows, counts.dev_labels
    certified = counts.certified_split_rows
    for result in verify_calibration_file(judge.calibration_path):
        row = result.row
        if row is None:
            codes = {r.code for r in result.rejections} - {UNLABELLED}
            if codes == {BLANK_LINE}:
                continue  # not a row
            rows += 1
            counts.rejected_rows += 1
            counts.rejected.update(codes - {BLANK_LINE})
            continue
        rows += 1
        if keep and len(counts.sample) < keep:
            counts.sample.append(row)
        split, expected = row.split, row.expected
        by_split_label[split, expected] += 1
        if gate is not None:
            events = row.judge_input.get("events")
            try:
                gate_misses += not gate.applies(events if isinstance(events, list) else [],
                                                regex_timeout)
            except GateTimeout:
                counts.gate_errors += 1
        if expected is not None:
            if split == "test":
                test_rows[row.conversation_id] = (row.snapshot_hash, expected)
            elif split == "dev":
                dev_labels[row.conversation_id] = expected
            if split == certified_split and split is not None:  # None: no certificate
                certified.append(LabelledRow(row.conversation_id, row.snapshot_hash, expected))
    counts.rows = rows
    for (split, expected), tally in by_split_label.items():
        counts.table[split or "unsplit"][expected or "unlabelled"] += tally
    if gate is not None:
        counts.gate_misses = gate_misses
    return counts


def dev_figures(dev_labels: Mapping[str, str], outcomes: Mapping[str, str]) -> DevFigures | None:
    """Score the recorded outcomes against the current labels; None when none is recorded.

    A row counts when it is labelled now, is in ``dev`` now and has an outcome
    recorded under the judge's current fingerprint (its latest one, error rows
    excepted: the ledger never records an error).
    """
    scored = [(label, outcomes[cid]) for cid, label in dev_labels.items() if cid in outcomes]
    if not scored:
        return None
    passes = [outcome for label, outcome in scored if label == "pass"]
    fails = [outcome for label, outcome in scored if label == "fail"]
    agreed = passes.count("pass"), fails.count("fail")
    return DevFigures(wilson_interval(agreed[0], len(passes)),
                      wilson_interval(agreed[1], len(fails)), len(passes), len(fails),
                      len(scored), len(dev_labels), *agreed)


def make_plan(counts: RowCounts, dev: DevFigures | None, bar: float,
              bound: BoundMethod = WILSON, *, given: Mapping[str, float] | None = None,
              power: float = PLAN_POWER) -> Plan:
    """The plan for the judge's next certification, decided with ``bound``: at the rates
    ``given`` (label -> rate, used as given), else the dev figures shrunk, else assumed."""
    floor = bound.floor(bar, DEFAULT_ALPHA)
    if floor is None:
        raise ValueError(f"no number of rows reaches a bar of {bar:g}")
    test = {label: counts.labelled(label, "test") for label in PLANNED}
    perfect = {label: max(0, floor - test[label]) for label in PLANNED}
    rates = dict(given or {})
    assumed: list[str] = []
    for label, (rows, agreed) in _dev_counts(dev).items():
        if label in rates:
            continue
        if rows:
            rates[label] = shrunk_rate(agreed, rows)
        else:
            rates[label] = ASSUMED_RATE
            assumed.append(label)
    planned = plan_for(bound, {label: rates[label] for label in PLANNED}, test, bar=bar,
                       alpha=DEFAULT_ALPHA, test_share=share_reaching(counts.table),
                       class_mix=class_mix(counts.table), power=power)
    never = tuple(label for label, plan in planned.classes.items() if plan.rows is None)
    return Plan(bar, floor, perfect, planned, tuple(assumed), never, tuple(given or ()))


def _dev_counts(dev: DevFigures | None) -> dict[str, tuple[int, int]]:
    """label -> (dev rows of it evaluated, of them agreed)."""
    if dev is None:
        return {label: (0, 0) for label in PLANNED}
    return {"pass": (dev.pass_rows, dev.pass_agreed), "fail": (dev.fail_rows, dev.fail_agreed)}


def judge_status(judge: Judge, ledger: Ledger, bar: float) -> JudgeStatus:
    """The status of one judge that has a calibration file."""
    from introspection_cli.certification.exposure_file import (
        ExposureError,
        exposure_path,
        read_looks,
    )

    path = certificate_path(judge.path.parent, judge.name)
    read = read_certificate(path) if path.exists() else None
    split = read.split if isinstance(read, Certificate) else None
    counts = count_rows(judge, split)
    exposure, problem, looks = None, None, None
    try:
        looks = read_looks(exposure_path(judge.path.parent, judge.name))
        exposure = derive_exposure(looks, counts.test_rows, latest=_newest_outcomes(read, looks))
    except ExposureError as exc:
        problem = str(exc)
    state = assess_certificate(path, judge, rows_of=lambda _: counts.certified_split_rows,
                               looks_of=lambda: _or_raise(looks, problem), read=read)
    fingerprint = judge_fingerprint(judge)
    dev = dev_figures(counts.dev_labels, ledger.outcomes(judge.name, fingerprint)) \
        if counts.dev_labels else None
    return JudgeStatus(judge.name, judge.calibration_path, fingerprint, counts, state,
                       exposure, dev, make_plan(counts, dev, bar, next_bound(
                           looks or [], fingerprint, counts.test_rows)), problem)


def next_bound(looks: Sequence[Look], fingerprint: str,
               test_rows: Mapping[str, tuple[str, str]]) -> BoundMethod:
    """The bound ``judges certify`` (one sample per row) would decide these test rows with:
    the anytime-valid one once the judge's current version has looked at them."""
    return method_for(looks_under(looks, (fingerprint, 1), test_rows) + 1)


def _newest_outcomes(read: object, looks: Sequence[Look]) -> dict[str, str] | None:
    """The newest look's per-row outcomes, when it is the run the certificate lists (the
    file keeps only a digest of each look's outcomes)."""
    from introspection_cli.certification.validator import certifying_looks

    if not isinstance(read, Certificate) or read.split != "test" or not looks \
            or len(looks) - 1 not in certifying_looks(read, looks):
        return None
    return {cid: outcome for cid, outcome in read.outcomes if outcome != "error"}


def _or_raise(looks: list[Look] | None, problem: str | None) -> list[Look]:
    if looks is None:
        raise DataError(problem or "the exposure file cannot be read")
    return looks


def recipe_status(judges: Sequence[Judge], ledger: Ledger, bar: float) -> list[JudgeStatus]:
    return [judge_status(judge, ledger, bar) for judge in judges]

