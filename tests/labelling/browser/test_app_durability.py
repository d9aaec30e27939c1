"""Killing the server mid-write never tears a line; an export appending to the same file
while a session labels it loses neither side's rows."""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path
from typing import Any

from tests.conftest import run_cli
from tests.labelling.browser.harness import LabelApp
from tests.labelling.recipes import UNGATED_JUDGE, calibration, row, rows_of, write_recipe
from tests.runtime.stub_runtime import Reply, StubRuntime

KILLS = 12  # bounded: each round starts a server, writes, and kills it at a random moment
LABELS = ("pass", "fail", "not_applicable")


def _hammer(app: LabelApp, lines: int, stop: threading.Event, seen: list[str]) -> None:
    """Label rows as fast as the server answers until ``stop`` or the server dies."""
    rnd = random.Random(7)
    while not stop.is_set():
        line = rnd.randint(1, lines)
        try:
            answer = app.label(line, expected=rnd.choice(LABELS), split=rnd.choice(
                ["train", "dev", "test", None]))
        except (OSError, AssertionError):
            return  # the server is gone
        seen.append(str(answer.status))


def test_sigkill_mid_session_never_tears_a_line(tmp_path: Path) -> None:
    count = 8
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [
        row(f"c{n}", "x" * 2000 + f" refund {n}") for n in range(count)])})
    path = calibration(recipe)
    originals = path.read_bytes().split(b"\n")[:count]
    rnd = random.Random(11)
    answered = 0
    for _ in range(KILLS):
        app = LabelApp.start(recipe)
        stop = threading.Event()
        seen: list[str] = []
        worker = threading.Thread(target=_hammer, args=(app, count, stop, seen))
        worker.start()
        time.sleep(rnd.uniform(0.05, 0.4))
        app.kill()  # SIGKILL: no handler runs, a write may be half done
        stop.set()
        worker.join(30)
        answered += seen.count("200")
        content = path.read_bytes()
        assert content.endswith(b"\n")
        lines = content.split(b"\n")[:-1]
        assert len(lines) == count
        for number, line in enumerate(lines):
            record: dict[str, Any] = json.loads(line)  # a torn line would not even parse
            # The old line or a new one: exactly the export's bytes with the two values set.
            written = (f'"expected": {json.dumps(record["expected"])}, '
                       f'"split": {json.dumps(record["split"])}}}').encode()
            assert line == originals[number].replace(b'"expected": null, "split": null}',
                                                     written)
        checked = run_cli(["check", str(recipe)])
        assert checked.returncode == 0, checked.stdout + checked.stderr
    assert answered > KILLS  # writes really happened between the kills


def test_an_export_and_a_labelling_session_lose_nothing(tmp_path: Path) -> None:
    recipe = write_recipe(tmp_path / "r", {"helpful": (UNGATED_JUDGE, [
        row("mine_1"), row("mine_2"), row("mine_3")])})
    path = calibration(recipe)
    runtime = StubRuntime("itk_test_token").start()
    app = LabelApp.start(recipe)
    try:
        env = {"INTROSPECTION_API_URL": runtime.url, "INTROSPECTION_TOKEN": "itk_test_token",
               "INTROSPECTION_CONFIG_DIR": str(tmp_path / "config")}
        ids = tmp_path / "ids.txt"

        def export(*conversations: str) -> Any:
            ids.write_text("\n".join(conversations) + "\n")
            return run_cli(["conversations", "get", "--ids-file", str(ids), "--judge-fixtures",
                            "--format", "json", "--append-to", str(path)], env=env)

        # 1. A label is written while the export is waiting for the runtime: the export
        #    appends to the file as it is now, so the label stays and the rows land.
        runtime.script(Reply(before=lambda: app.label(1, expected="pass")))
        raced = export("conv_01", "conv_02")
        assert raced.returncode == 0, raced.stderr
        assert [r["expected"] for r in rows_of(path)] == ["pass", None, None, None, None]
        # 2. The session, which read the file before the export wrote, labels a row and
        #    keeps the appended rows.
        assert app.label(2, expected="fail").status == 200
        # 3. Both at once, repeatedly: every confirmed label and every exported row survive.
        confirmed: dict[int, str] = {1: "pass", 2: "fail"}
        stop = threading.Event()

        def label_loop() -> None:
            for n in range(30):
                if stop.is_set():
                    return
                line = 3 if n % 2 else 1
                label = LABELS[n % 3]
                if app.label(line, expected=label).status == 200:
                    confirmed[line] = label

        worker = threading.Thread(target=label_loop)
        worker.start()
        exported = {"conv_01", "conv_02"}
        for batch in (("conv_03", "conv_04"), ("conv_05",), ("conv_06", "conv_07")):
            result = export(*batch)
            assert result.returncode == 0, result.stderr
            exported.update(batch)
        stop.set()
        worker.join(60)
        records = rows_of(path)
        by_id = {r["source"]["conversation_id"]: r for r in records}
        assert exported <= set(by_id)
        assert len(records) == len(by_id) == 3 + len(exported)
        for line, label in confirmed.items():
            assert records[line - 1]["expected"] == label
        assert run_cli(["check", str(recipe)]).returncode == 0
    finally:
        app.kill()
        runtime.stop()
