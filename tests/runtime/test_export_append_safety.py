"""``--append-to`` is checked before any request, follows a symlink only to a calibration file,
and, run as root, keeps the appended file's owner and mode.

Permission cases run the real CLI in a child that obeys file modes although the
tests run as root (``honour_permissions``: root's permission-bypassing
capabilities dropped), against the stub runtime, which counts requests.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from runtime_harness import Cli
from stub_runtime import StubRuntime

from tests.hostile.harness import run_cli_measured

TOKEN = "itk_append_safety_token_3"
TARGET = "judges/billing.calibration.jsonl"


@pytest.fixture
def open_runtime() -> Iterator[StubRuntime]:
    stub = StubRuntime(TOKEN).start()
    yield stub
    stub.stop()


def append_as_user(tmp_path: Path, runtime: StubRuntime, target: str) -> tuple[int, str]:
    (tmp_path / "ids.txt").write_text("conv_01\n")
    outcome = run_cli_measured(
        ["conversations", "get", "--ids-file", "ids.txt", "--judge-fixtures", "--format",
         "json", "--append-to", target], tmp_path, honour_permissions=True,
        extra_env={"INTROSPECTION_API_URL": runtime.url, "INTROSPECTION_TOKEN": TOKEN,
                   "INTROSPECTION_CONFIG_DIR": str(tmp_path / "config")})
    return outcome.returncode, outcome.stderr


def test_an_unwritable_directory_is_exit_2_before_any_request(tmp_path: Path,
                                                              open_runtime: StubRuntime) -> None:
    judges = tmp_path / "judges"
    judges.mkdir()
    judges.chmod(0o555)
    try:
        code, stderr = append_as_user(tmp_path, open_runtime, TARGET)
    finally:
        judges.chmod(0o755)

    assert code == 2, stderr
    assert f"the directory {judges} is not writable" in stderr
    assert open_runtime.requests == []


def test_an_unwritable_file_is_exit_2_before_any_request(tmp_path: Path,
                                                         open_runtime: StubRuntime) -> None:
    (tmp_path / "judges").mkdir()
    target = tmp_path / TARGET
    target.write_bytes(b"")
    target.chmod(0o444)

    code, stderr = append_as_user(tmp_path, open_runtime, TARGET)

    assert code == 2, stderr
    assert "is not writable" in stderr
    assert open_runtime.requests == []
    assert target.read_bytes() == b""


def append(cli: Cli, target: str = TARGET) -> tuple[int, str]:
    Path("ids.txt").write_text("conv_01\n")
    result = cli("conversations", "get", "--ids-file", "ids.txt", "--judge-fixtures",
                 "--format", "json", "--append-to", target)
    return result.exit_code, result.stderr


@pytest.mark.parametrize("victim", [".bashrc", "notes.jsonl", "billing.calibration.jsonl.bak"])
def test_a_symlink_to_anything_but_a_calibration_file_is_refused(
    logged_in: Cli, runtime: StubRuntime, victim: str
) -> None:
    real = Path("home") / victim
    real.parent.mkdir()
    real.write_bytes(b"export PATH=/usr/bin\n")
    Path("judges").mkdir()
    Path(TARGET).symlink_to(real.resolve())

    code, stderr = append(logged_in)

    assert code == 2
    assert "is a symbolic link to" in stderr
    assert ".calibration.jsonl" in stderr
    assert real.read_bytes() == b"export PATH=/usr/bin\n"
    assert runtime.requests == []


def test_a_symlink_to_a_calibration_file_is_followed(logged_in: Cli,
                                                     runtime: StubRuntime) -> None:
    real = Path("data") / "billing.calibration.jsonl"
    real.parent.mkdir()
    real.write_bytes(b"")
    Path("judges").mkdir()
    Path(TARGET).symlink_to(Path("..") / real)

    code, stderr = append(logged_in)

    assert code == 0, stderr
    assert Path(TARGET).is_symlink()
    assert real.read_bytes().count(b"\n") == 1


def test_an_append_as_root_keeps_the_files_owner_and_mode(logged_in: Cli,
                                                          runtime: StubRuntime) -> None:
    Path("judges").mkdir()
    target = Path(TARGET)
    target.write_bytes(b"")
    os.chown(target, 4242, 4343)  # the tests run as root
    target.chmod(0o640)

    code, stderr = append(logged_in)

    info = target.stat()
    assert code == 0, stderr
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (4242, 4343, 0o640)
    assert target.read_bytes().count(b"\n") == 1
