"""What ``--batch`` prints on stderr, on a terminal and in a log."""

from __future__ import annotations

import io

from introspection_cli.cli.batch_progress import BatchProgress, duration
from introspection_cli.evaluation.batch import BatchOptions, BatchState
from introspection_cli.evaluation.batch.reconcile import Reconciliation


def state(status: str, done: int, *, ended: bool = False) -> BatchState:
    return BatchState("batch_1", status, ended, done, 10)


def test_a_log_gets_a_line_per_status_change_not_per_poll() -> None:
    out = io.StringIO()
    progress = BatchProgress(out, redraw=False)
    progress.submitted("openai", "batch_1", 10, resumed=False)
    progress.waiting(1, BatchOptions(poll_interval=15, max_wait=3600))
    for status, done in [("validating", 0), ("in_progress", 2), ("in_progress", 7),
                         ("completed", 10)]:
        progress.polled("openai", state(status, done, ended=status == "completed"))
    progress.collected("openai", state("completed", 10, ended=True), Reconciliation(10, 10, 1))
    assert out.getvalue().splitlines() == [
        "introspection: batch openai batch_1: 10 requests submitted",
        "introspection: waiting for 1 batch (first poll in 15 s, then less often; at most "
        "60 min); Ctrl-C stops waiting, the batches keep running at the provider, and "
        "rerunning this command collects them",
        "introspection: batch openai batch_1: validating, 0/10 done",
        "introspection: batch openai batch_1: in_progress, 2/10 done",
        "introspection: batch openai batch_1: completed, 10/10 done",
        "introspection: batch openai batch_1: completed; 10 results, 1 failed",
    ]


def test_a_terminal_gets_one_line_redrawn_and_cleared_before_a_message() -> None:
    out = io.StringIO()
    progress = BatchProgress(out, redraw=True)
    progress.polled("anthropic", state("in_progress", 3))
    progress.polled("anthropic", state("in_progress", 4))
    assert out.getvalue() == ("\r\033[Kanthropic batch_1 in_progress 3/10"
                              "\r\033[Kanthropic batch_1 in_progress 4/10")
    progress.interrupted()  # nothing submitted in this run: nothing to say
    progress.submitted("anthropic", "batch_1", 10, resumed=True)
    progress.interrupted()
    assert out.getvalue().endswith(
        "\r\033[Kintrospection: batch anthropic batch_1: resumed (10 requests, submitted by "
        "an earlier run)\nintrospection: interrupted: batch(es) anthropic batch_1 keep running "
        "at the provider; rerun the same command to collect their results (nothing is "
        "submitted again)\n")


def test_a_batch_id_cannot_break_the_line() -> None:
    out = io.StringIO()
    BatchProgress(out, redraw=False).submitted("openai", "b\n\x1b[2Jx", 1, resumed=False)
    assert out.getvalue() == "introspection: batch openai b\\n\\x1b[2Jx: 1 requests submitted\n"


def test_durations_read_as_people_say_them() -> None:
    assert [duration(s) for s in (0.05, 15, 100, 300, 3600, 90000)] == [
        "0.05 s", "15 s", "100 s", "5 min", "60 min", "25 h"]
