"""Local files of `conversations get`: never hang on a FIFO, lines end at \\n only."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from runtime_harness import Cli
from stub_runtime import StubRuntime, make_fixture

from tests.conftest import run_cli

GET = ("conversations", "get", "--judge-fixtures", "--format", "json")


def run_with_timeout(cli: Cli, *argv: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a child process, so a hang fails the test instead of blocking it."""
    env = {key: value for key, value in cli.env.items() if value is not None}
    try:
        return run_cli(list(argv), cwd=cli.workdir, env=env, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"introspection {' '.join(argv)} hung")


def test_append_to_a_fifo_is_refused_not_waited_on(logged_in: Cli, runtime: StubRuntime) -> None:
    os.mkfifo("billing.calibration.jsonl")
    Path("ids.txt").write_text("conv_01\n")

    result = run_with_timeout(logged_in, *GET, "--ids-file", "ids.txt",
                              "--append-to", "billing.calibration.jsonl")

    assert result.returncode == 2, result.stderr
    assert "billing.calibration.jsonl is a FIFO (named pipe), not a regular file" in result.stderr
    assert runtime.requests == []


def test_output_to_a_fifo_is_refused(logged_in: Cli, runtime: StubRuntime) -> None:
    os.mkfifo("rows.jsonl")
    Path("ids.txt").write_text("conv_01\n")

    result = run_with_timeout(logged_in, *GET, "--ids-file", "ids.txt", "--output", "rows.jsonl",
                              "--force")

    assert result.returncode == 2, result.stderr
    assert "--output rows.jsonl is a FIFO (named pipe), not a regular file" in result.stderr
    assert Path("rows.jsonl").is_fifo()  # not replaced by a regular file
    assert runtime.requests == []


def test_an_ids_fifo_nobody_writes_to_does_not_hang(logged_in: Cli, runtime: StubRuntime) -> None:
    os.mkfifo("ids.fifo")

    result = run_with_timeout(logged_in, *GET, "--ids-file", "ids.fifo")

    assert result.returncode == 2, result.stderr
    assert "lists no conversation ids" in result.stderr
    assert runtime.requests == []


def test_an_ids_pipe_with_a_writer_is_read(logged_in: Cli, runtime: StubRuntime) -> None:
    """`--ids-file <(command)` hands over a pipe: it still works."""
    read_end, write_end = os.pipe()
    os.write(write_end, b"conv_02\nconv_01\n")
    os.close(write_end)
    try:
        result = logged_in(*GET, "--ids-file", f"/dev/fd/{read_end}")
    finally:
        os.close(read_end)

    assert result.exit_code == 0, result.stderr
    assert json.loads(runtime.requests[0].body) == {"conversation_ids": ["conv_02", "conv_01"]}


def test_an_ids_file_that_is_a_directory_is_refused(logged_in: Cli, runtime: StubRuntime) -> None:
    Path("ids").mkdir()

    result = logged_in(*GET, "--ids-file", "ids")

    assert result.exit_code == 2
    assert "ids file ids is a directory; pass a file" in result.stderr


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x85"])
def test_only_newline_ends_an_ids_line(
    logged_in: Cli, runtime: StubRuntime, separator: str
) -> None:
    # An editor shows one line here (line 2 is the bad one); splitlines saw two or three.
    Path("ids.txt").write_text(f"conv_01{separator}conv_03\nconv_02 conv_04\n",
                               encoding="utf-8")

    result = logged_in(*GET, "--ids-file", "ids.txt")

    assert result.exit_code == 2
    assert "ids.txt:1: " in result.stderr
    assert "is not one conversation id" in result.stderr
    assert runtime.requests == []


def test_line_numbers_count_newlines_only(logged_in: Cli, runtime: StubRuntime) -> None:
    Path("ids.txt").write_text("conv_01 # note\x0c\nconv_02 conv_03\n", encoding="utf-8")

    result = logged_in(*GET, "--ids-file", "ids.txt")

    assert result.exit_code == 2
    assert "ids.txt:2: 'conv_02 conv_03' is not one conversation id" in result.stderr


def test_crlf_ids_files_still_work(logged_in: Cli, runtime: StubRuntime) -> None:
    Path("ids.txt").write_bytes(b"\xef\xbb\xbf# billing\r\nconv_01\r\n\r\nconv_02  # x\r\n")

    result = logged_in(*GET, "--ids-file", "ids.txt")

    assert result.exit_code == 0, result.stderr
    assert json.loads(runtime.requests[0].body) == {"conversation_ids": ["conv_01", "conv_02"]}
    assert result.stdout == b"".join(
        json.dumps(make_fixture(i, runtime.url), ensure_ascii=False,
                   separators=(",", ":")).encode() + b"\n" for i in ("conv_01", "conv_02"))


def _bad_path(kind: str, name: str) -> str:
    """Make ``kind`` of unusable path ending in ``name``; return it as given on the command line."""
    if kind == "under a file":
        Path("notdir").write_text("")
        return f"notdir/{name}"
    if kind == "symlink loop":
        os.symlink(name, name)
        return name
    return "x" * 300 + name  # a name too long


BAD_PATHS = {
    "under a file": "Not a directory",
    "symlink loop": "",  # the OS's wording (ELOOP) or Path.resolve's (a symlink loop)
    "name too long": "File name too long",
}


@pytest.mark.parametrize(("kind", "reason"), BAD_PATHS.items(), ids=BAD_PATHS.keys())
@pytest.mark.parametrize("flag", ["--output", "--append-to"])
def test_an_unusable_path_is_a_usage_error_naming_it(
    logged_in: Cli, runtime: StubRuntime, flag: str, kind: str, reason: str
) -> None:
    path = _bad_path(kind, "o.calibration.jsonl")
    Path("ids.txt").write_text("conv_01\n")

    result = logged_in(*GET, "--ids-file", "ids.txt", flag, path)

    assert result.exit_code == 2, result.stderr
    assert "internal error" not in result.stderr
    assert f"{flag} {path}" in result.stderr
    if kind == "under a file":
        assert "does not exist" in result.stderr
    else:
        assert reason in result.stderr
    assert runtime.requests == []
