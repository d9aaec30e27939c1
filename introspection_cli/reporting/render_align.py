"""``judges align``'s text: the start, each round, the end, the next step; and what a dry
run would do and cost (their JSON is their document)."""

from __future__ import annotations

from introspection_cli.alignment.keep_rules import DevComparison, Tally
from introspection_cli.alignment.results import AlignRun, RoundResult, SplitFigures
from introspection_cli.alignment.spend import Estimate
from introspection_cli.reporting.align_values import AlignDryRun, AlignOutput
from introspection_cli.statistics import Interval


def _rate(interval: Interval | None) -> str:
    return "-" if interval is None else f"{interval.value:.3f}"


def _figures(name: str, value: SplitFigures) -> str:
    return (f"{name:<5} {value.rows} rows: applicable agreement "
            f"{_rate(value.applicable_agreement)}, TPR {_rate(value.tpr)}, TNR "
            f"{_rate(value.tnr)}, {value.disagreements} disagreement(s)"
            + (f", {value.errors} error(s)" if value.errors else ""))


def _tally(name: str, tally: Tally) -> str:
    return f"{name} {tally.before}/{tally.rows} -> {tally.after}/{tally.rows}"


def _signed(value: float) -> str:
    return f"{value:+.3f}"


def dev_lines(dev: DevComparison) -> list[str]:
    """The dev comparison: counts, the change with its interval, the test."""
    change = "" if dev.difference is None else (
        f" ({_signed(dev.difference.value)}, 95% CI {_signed(dev.difference.low)} to "
        f"{_signed(dev.difference.high)})")
    return [
        f"dev: {_tally('applicable agreement', dev.applicable)}{change}; mid-p McNemar "
        f"p = {dev.p_value:.3g} ({dev.improved} improved, {dev.regressed} regressed)",
        f"     rows gained {dev.gained}, lost {dev.lost}; {_tally('TPR', dev.tpr)}; "
        f"{_tally('TNR', dev.tnr)}; {dev.untargeted_flips} of {dev.untargeted} untargeted "
        f"row(s) flipped" + (f"; {dev.new_errors} new error(s)" if dev.new_errors else ""),
    ]


def round_lines(result: RoundResult) -> list[str]:
    """One round: verdict, rationale, diff, dev deltas, the reasons."""
    head = "kept" if result.kept else "not kept"
    lines = [f"round {result.number}: {head}"]
    if result.rationale:
        lines.append(f"  rationale: {' '.join(result.rationale.split())}")
    lines += [f"  {line}" for line in result.diff.splitlines()]
    if result.dev is not None:
        lines += [f"  {line}" for line in dev_lines(result.dev)]
    if result.train_figures is not None:
        lines.append(f"  {_figures('train', result.train_figures)}")
    lines.append(f"  {result.note}")
    for check in result.refused_by:
        lines.append(f"  - {check.rule}: {check.detail}")
    return lines


def align_text(output: AlignOutput) -> str:
    """The whole report: the start, each round, the end, the judge file's diff, the next
    step."""
    run, file_diff, footer = output.run, output.file_diff, output.footer
    optimizer = "/".join(run.optimizer_model)
    rows = run.rows
    lines = [f"judges align: {run.judge} ({'/'.join(run.judge_model)}), optimizer {optimizer}",
             f"rows: train {rows['train']}, dev {rows['dev']}; test {rows['test']} held out "
             "(never evaluated)",
             "start:", *(f"  {_figures(split, value)}" for split, value in run.start.items())]
    for result in run.rounds:
        lines += ["", *round_lines(result)]
    kept = ", ".join(str(number) for number in run.kept) or "none"
    lines += ["", f"rounds run: {len(run.rounds)}; kept: {kept}; {run.stopped}"]
    if run.final_instructions != run.start_instructions:
        lines += ["end:", *(f"  {_figures(split, value)}" for split, value in run.final.items())]
    lines.append(_spend_line(run))
    if file_diff:
        lines += ["", *file_diff.splitlines()]
    lines += ["", *footer]
    return "\n".join(lines) + "\n"


def _spend_line(run: AlignRun) -> str:
    spend = run.spend
    cost = "cost unknown (no price)" if spend.cost is None else f"${spend.cost:.4f}"
    limit = "" if spend.limit is None else f" of --max-cost ${spend.limit:.4f}"
    return (f"spent: {cost}{limit}; {spend.optimizer_calls} optimizer call(s), "
            f"{spend.judge_requests} judge request(s), {spend.input_tokens:,} input and "
            f"{spend.output_tokens:,} output tokens")


def _estimate(estimate: Estimate) -> str:
    cost = "cost unknown (no price)" if estimate.cost is None else f"${estimate.cost:.4f}"
    return (f"{estimate.requests} request(s), ~{estimate.input_tokens:,} input and "
            f"~{estimate.output_tokens:,} output tokens, {cost}")


def align_dry_run_text(output: AlignDryRun) -> str:
    """What a run would do and cost, no call made."""
    judge, rows, rounds = output.judge, output.rows, output.rounds
    start, optimizer, candidate = output.start, output.optimizer, output.candidate
    total = output.at_most
    return "\n".join([
        f"dry run: judges align {judge} would make these calls; none was made",
        f"rows: train {rows['train']}, dev {rows['dev']}; test {rows['test']} held out "
        "(never evaluated)",
        f"evaluate the current rubric on train and dev: {_estimate(start)}",
        f"each of up to {rounds} round(s): the optimizer: {_estimate(optimizer)}",
        f"  then the candidate on train and dev: {_estimate(candidate)}",
        f"at most: {_estimate(total)}",
        "Tokens are estimated from text length (about 4 characters a token); the "
        "optimizer's output is counted at its whole allowance.",
    ]) + "\n"
