"""Start a labelling session and serve it until Ctrl-C."""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from introspection_cli.labelling.app.session import LabelSession, QueueMode
from introspection_cli.labelling.result import CommandResult
from introspection_cli.recipe.model import Judge


@dataclass(frozen=True)
class AppOptions:
    review: Path | None = None
    all_rows: bool = False
    port: int = 0
    open_browser: bool = True


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
    mode: QueueMode = "review" if options.review else "all" if options.all_rows else "unlabelled"
    reviews = {}
    if options.review is not None:
        from introspection_cli.labelling.app.review import build_review, load_report_rows
        from introspection_cli.labelling.calibration import read_calibration

        for judge in judges:
            rows = load_report_rows(options.review, judge.name)
            reviews[judge.name] = build_review(rows, read_calibration(judge.calibration_path))
    return LabelSession(judges, mode, reviews)


def _describe(mode: QueueMode) -> str:
    return {"unlabelled": "unlabelled rows; --all for every row",
            "all": "every row", "review": "rows the report disagrees with"}[mode]
