"""Every command's stdout is checked: a short write, ENOSPC, EFBIG or EPIPE is never exit 0.

Real subprocesses whose stdout is a file under a small ``RLIMIT_FSIZE`` (a
short write, then EFBIG; Python ignores SIGXFSZ), ``/dev/full`` (ENOSPC), or a
pipe whose reading end is already closed (EPIPE).
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.evaluation.conftest import UNGATED_JUDGE, fixture_row, write_recipe
from tests.evaluation.stub_model_server import StubModelServer
from tests.runtime.stub_runtime import StubRuntime

TOKEN = "itk_stdout_test_token_1"


def run(args: list[str], *, stdout: int, cwd: Path, env: dict[str, str] | None = None,
        file_size_limit: int | None = None, stdin: str | None = None) -> tuple[int, str]:
    """Run the CLI with ``stdout`` as its fd 1; returns (exit code, stderr)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("INTROSPECTION_")}
    full_env.update(env or {})

    def limit() -> None:
        if file_size_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    done = subprocess.run([sys.executable, "-m", "introspection_cli", *args], cwd=cwd,
                          env=full_env, stdout=stdout, stderr=subprocess.PIPE,
                          input=None if stdin is None else stdin.encode(),
                          preexec_fn=limit, timeout=60, check=False)
    return done.returncode, done.stderr.decode("utf-8", "replace")


def closed_pipe() -> int:
    """The writing end of a pipe nobody reads any more."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    return write_end


@pytest.fixture
def runtime() -> Iterator[StubRuntime]:
    stub = StubRuntime(TOKEN).start()
    yield stub
    stub.stop()


def export_args(tmp_path: Path, count: int) -> list[str]:
    ids = tmp_path / "ids.txt"
    ids.write_text("".join(f"conv_{n:02d}\n" for n in range(1, count + 1)))
    return ["conversations", "get", "--ids-file", str(ids), "--judge-fixtures", "--format", "json"]


def runtime_env(runtime: StubRuntime, tmp_path: Path) -> dict[str, str]:
    return {"INTROSPECTION_API_URL": runtime.url, "INTROSPECTION_TOKEN": TOKEN,
            "INTROSPECTION_CONFIG_DIR": str(tmp_path / "config")}


def test_an_export_cut_short_by_efbig_says_how_many_fixtures_reached_stdout(
    tmp_path: Path, runtime: StubRuntime
) -> None:
    out = tmp_path / "rows.jsonl"
    row_size = 1400  # each exported fixture is a bit over 1 KiB
    with out.open("wb") as handle:
        code, stderr = run(export_args(tmp_path, 20), stdout=handle.fileno(), cwd=tmp_path,
                           env=runtime_env(runtime, tmp_path), file_size_limit=5 * row_size)

    lines = out.read_bytes().split(b"\n")
    complete = [line for line in lines[:-1] if json.loads(line)]
    assert code == 2, stderr
    assert 0 < len(complete) < 20
    assert f"only {len(complete)} of 20 fixture(s) reached stdout" in stderr
    assert f"the other {20 - len(complete)} were not written" in stderr
    assert "wrote 20" not in stderr


def test_an_export_to_a_full_disk_is_exit_2(tmp_path: Path, runtime: StubRuntime) -> None:
    with open("/dev/full", "wb") as full:
        code, stderr = run(export_args(tmp_path, 3), stdout=full.fileno(), cwd=tmp_path,
                           env=runtime_env(runtime, tmp_path))

    assert code == 2
    assert "No space left on device" in stderr
    assert "only 0 of 3 fixture(s) reached stdout" in stderr


def test_an_export_into_a_closed_pipe_is_never_exit_0(tmp_path: Path, runtime: StubRuntime) -> None:
    pipe = closed_pipe()
    try:
        code, stderr = run(export_args(tmp_path, 3), stdout=pipe, cwd=tmp_path,
                           env=runtime_env(runtime, tmp_path))
    finally:
        os.close(pipe)

    assert code == 2
    assert "only 0 of 3 fixture(s) reached stdout" in stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr


def test_export_failures_are_still_reported_when_stdout_fails(
    tmp_path: Path, runtime: StubRuntime
) -> None:
    runtime.tampered.add("conv_02")
    with open("/dev/full", "wb") as full:
        code, stderr = run(export_args(tmp_path, 3), stdout=full.fileno(), cwd=tmp_path,
                           env=runtime_env(runtime, tmp_path))

    assert code == 2
    assert "error: conv_02:" in stderr
    assert "only 0 of 2 fixture(s) reached stdout" in stderr


@pytest.mark.parametrize("fmt", ["json", "text", "github"])
def test_check_reports_a_short_write(tmp_path: Path, fmt: str) -> None:
    recipe = tmp_path / "recipe"
    (recipe / "judges").mkdir(parents=True)
    (recipe / "SYSTEM.md").write_text("You are a support agent.\n")
    for n in range(40):  # enough diagnostics for several KiB of report
        (recipe / "judges" / f"j{n}.yaml").write_text("name: [unclosed\n")
    out = tmp_path / "report"
    with out.open("wb") as handle:
        code, stderr = run(["check", str(recipe), "--format", fmt], stdout=handle.fileno(),
                           cwd=tmp_path, file_size_limit=1000)

    assert code == 2, stderr
    assert "could not write the check report to stdout" in stderr
    written = re.search(r"only (\d+) of (\d+) bytes were written", stderr)
    assert written is not None, stderr
    assert int(written.group(1)) == 1000 < int(written.group(2))
    assert out.stat().st_size == 1000


def test_check_text_into_a_closed_pipe_exits_1_quietly(tmp_path: Path) -> None:
    recipe = tmp_path / "recipe"
    (recipe / "judges").mkdir(parents=True)
    (recipe / "SYSTEM.md").write_text("You are a support agent.\n")
    (recipe / "judges" / "j.yaml").write_text("name: [unclosed\n")
    pipe = closed_pipe()
    try:
        code, stderr = run(["check", str(recipe)], stdout=pipe, cwd=tmp_path)
    finally:
        os.close(pipe)

    assert code == 1
    assert stderr == ""


def test_schema_to_a_full_disk_is_exit_2(tmp_path: Path) -> None:
    with open("/dev/full", "wb") as full:
        code, stderr = run(["schema", "judge-fixture"], stdout=full.fileno(), cwd=tmp_path)

    assert code == 2
    assert "could not write the judge-fixture schema to stdout (No space left on device)" \
        in stderr


@pytest.mark.parametrize("fmt", ["json", "markdown", "text"])
def test_judges_eval_report_cut_short_is_exit_2(tmp_path: Path, fmt: str) -> None:
    rows = [fixture_row(f"conv_{n}", f"Question {n} VERDICT:pass", split="dev")
            for n in range(30)]
    recipe = write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, rows)})
    out = tmp_path / "report"
    with StubModelServer() as stub, out.open("wb") as handle:
        code, stderr = run(["judges", "eval", str(recipe), "--no-cache", "--format", fmt],
                           stdout=handle.fileno(), cwd=tmp_path, file_size_limit=200,
                           env={"OPENAI_BASE_URL": stub.openai_url, "OPENAI_API_KEY": "sk-x"})

    assert code == 2, stderr
    assert f"could not write the {fmt} report to stdout (File too large)" in stderr
    assert "only 200 of " in stderr


def test_judges_render_to_a_full_disk_is_exit_2(tmp_path: Path) -> None:
    rows = [fixture_row("conv_1", "Question", split="dev")]
    recipe = write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, rows)})
    with open("/dev/full", "wb") as full:
        code, stderr = run(["judges", "render", str(recipe), "helpful", "--line", "1"],
                           stdout=full.fileno(), cwd=tmp_path)

    assert code == 2
    assert "could not write the prompt to stdout (No space left on device)" in stderr


def test_login_to_a_full_disk_is_exit_2(tmp_path: Path, runtime: StubRuntime) -> None:
    with open("/dev/full", "wb") as full:
        code, stderr = run(["login", "--url", runtime.url, "--token-stdin"],
                           stdout=full.fileno(), cwd=tmp_path, stdin=TOKEN + "\n",
                           env={"INTROSPECTION_CONFIG_DIR": str(tmp_path / "config")})

    assert code == 2
    assert "No space left on device" in stderr


def test_judges_split_to_a_full_disk_is_exit_2(tmp_path: Path) -> None:
    rows = [fixture_row(f"conv_{n}", f"Question {n}", expected="pass" if n % 2 else "fail")
            for n in range(20)]
    recipe = write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, rows)})
    with open("/dev/full", "wb") as full:
        code, stderr = run(["judges", "split", str(recipe), "--dry-run"], stdout=full.fileno(),
                           cwd=tmp_path)

    assert code == 2, stderr
    assert "could not write the summary to stdout (No space left on device)" in stderr


def test_init_and_doctor_to_a_full_disk_are_exit_2(tmp_path: Path) -> None:
    with open("/dev/full", "wb") as full:
        init_code, init_err = run(["init", str(tmp_path / "recipe")], stdout=full.fileno(),
                                  cwd=tmp_path)
        doctor_code, doctor_err = run(["doctor", "--format", "json"], stdout=full.fileno(),
                                      cwd=tmp_path)

    assert init_code == 2
    assert "could not write the summary to stdout (No space left on device)" in init_err
    assert doctor_code == 2
    assert "could not write the json report to stdout (No space left on device)" in doctor_err
