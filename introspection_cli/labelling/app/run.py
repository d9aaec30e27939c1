"""Start a labelling session and serve it until Ctrl-C."""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from introspection_cli.errors import CommandResult
from introspection_cli.labelling.app.blinds import Blinds
from introspection_cli.labelling.app.judgefile import JudgeFile
from introspection_cli.labelling.app.session import LabelSession, QueueMode
from introspection_cli.labelling.calibration import CalibrationLine
from introspection_cli.recipe.model import Judge


@dataclass(frozen=True)
class AppOptions:
    review: Path | None = None
    all_rows: bool = False
    port: int = 0
    open_browser: bool = True
    rater: str | None = None  # --rater NAME: labels are this rater's, blind to the others'
    adjudicate: bool = False  # --adjudicate: the rows in conflict


def run_app(judges: Sequence[Judge], options: AppOptions,
            say: Callable[[str], None]) -> CommandResult:
    """Serve the app for ``judges`` (one or several labelled in one pass); ``say`` prints a
    line at once (the address, then notes).

    Returns when the user presses Ctrl-C; every label was written when it was
    made, so stopping loses nothing.
    """
    from introspection_cli.labelling.app.server import LabelServer

    session = _session(judges, options)
    server = LabelServer(session, options.port)
    queue = len(session.queue)
    files = ", ".join(str(judge.calibration_path) for judge in judges)
    if options.rater is not None:
        say(f"Labelling as rater {options.rater}: your labels and notes go to each judge's "
            "annotations file; other raters' labels are not shown")
    if len(judges) == 1:
        say(f"Labelling judge {judges[0].name}: {queue} row(s) in the queue "
            f"({_describe(session.mode)}), from {files}")
    else:
        say(f"Labelling judges {', '.join(judge.name for judge in judges)} in one pass: "
            f"{queue} conversation(s) in the queue ({_describe(session.mode)}), from {files}")
    for note in session.notes:
        say(f"note: {note}")
    say(f"Open {server.url}")
    say("Every label is saved as you make it. Press Ctrl-C here to stop.")
    if options.open_browser:
        import threading
        import webbrowser

        # On a thread: webbrowser waits for a foreground browser (lynx, w3m, a plain
        # BROWSER=command) to exit, and that browser needs the server answering meanwhile.
        threading.Thread(target=webbrowser.open, args=(server.url,), daemon=True,
                         name="open-browser").start()
    previous = signal.signal(signal.SIGTERM, _stop)  # `kill PID` stops it like Ctrl-C
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.server_close()
        session.close()  # a write in progress finishes; no new one starts
    return CommandResult(stdout=f"Stopped. {session.writes} write(s) this session, each saved "
                                f"to {files} when it was made.\n")


def _stop(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _session(judges: Sequence[Judge], options: AppOptions) -> LabelSession:
    mode: QueueMode = ("adjudicate" if options.adjudicate else "review" if options.review
                       else "all" if options.all_rows else "unlabelled")
    session = LabelSession(judges, mode, None,
                           Blinds(options.rater, options.adjudicate))
    if options.review is not None:
        from introspection_cli.labelling.app.review import build_review, load_report_rows

        for jf in session.files:
            rows = load_report_rows(options.review, jf.name)
            session.reviews[jf.name] = build_review(rows, jf.file, _label_of(jf, options.rater))
        session.start_queue()
    return session


def _label_of(jf: JudgeFile, rater: str | None) -> Callable[[CalibrationLine], str | None] | None:
    """A rater reviews the rows where the report disagrees with their own label."""
    if rater is None:
        return None

    def label_of(line: CalibrationLine) -> str | None:
        unit = jf.rated(line)
        mine = unit.ratings.get(rater) if unit is not None else None
        return mine.label if mine is not None else None
    return label_of


def _describe(mode: QueueMode) -> str:
    return {"unlabelled": "unlabelled rows; --all for every row",
            "all": "every row", "review": "rows the report disagrees with",
            "adjudicate": "rows the raters disagree on"}[mode]
