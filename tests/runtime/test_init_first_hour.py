"""The commands `introspection init` prints work as printed, against the stub runtime."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from runtime_harness import SENTINEL_TOKEN, Cli
from stub_runtime import StubRuntime


def test_init_then_its_three_commands_give_a_labelled_row(cli: Cli,
                                                           runtime: StubRuntime) -> None:
    created = cli("init", "my-agent")
    assert created.exit_code == 0, created.stderr
    login, export, label = re.findall(r"^  introspection (.*)$", created.out, re.M)

    login_args = shlex.split(login.replace("https://your-runtime.example", runtime.url))
    assert cli(*login_args, "--token-stdin", input=SENTINEL_TOKEN + "\n").exit_code == 0
    Path("ids.txt").write_text("conv_01\nconv_02\n")
    exported = cli(*shlex.split(export))
    assert exported.exit_code == 0, exported.stderr
    calibration = Path("my-agent/judges/billing-request-handling.calibration.jsonl")
    assert len(calibration.read_text().splitlines()) == 2
    labelled = cli(*shlex.split(label), "--set", "1=pass:test")
    assert labelled.exit_code == 0, labelled.stderr
    assert json.loads(calibration.read_text().splitlines()[0])["expected"] == "pass"
    checked = cli("check", "my-agent", "--format", "json")
    assert checked.exit_code == 0, checked.out
    codes = [d["code"] for d in json.loads(checked.out)["diagnostics"]]
    assert codes == ["fixture-unlabelled"]  # row 2, still to label
