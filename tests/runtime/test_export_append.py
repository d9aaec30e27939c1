"""`--append-to`: new rows go after the existing bytes, which are never changed."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from runtime_harness import Cli
from stub_runtime import Reply, StubRuntime, make_fixture

from introspection_cli.runtime.appendfile import appended_content, read_existing

TARGET = "billing.calibration.jsonl"


def compact(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def labelled(conversation_id: str, url: str, expected: str = "pass") -> dict[str, Any]:
    """A row as a human leaves it: exported, then `expected` and `split` merged in."""
    return {**make_fixture(conversation_id, url), "expected": expected, "split": "dev"}


def append(cli: Cli, *ids: str) -> Any:
    Path("ids.txt").write_text("\n".join(ids) + "\n")
    return cli("conversations", "get", "--ids-file", "ids.txt", "--judge-fixtures",
               "--format", "json", "--append-to", TARGET)


def test_append_creates_a_missing_file(logged_in: Cli, runtime: StubRuntime) -> None:
    result = append(logged_in, "conv_01", "conv_02", "conv_03")

    assert result.exit_code == 0, result.stderr
    assert Path(TARGET).read_bytes() == b"".join(
        compact(make_fixture(i, runtime.url)) + b"\n" for i in ("conv_01", "conv_02", "conv_03"))
    assert result.stdout == b""


@pytest.mark.parametrize(("existing", "newline"), [
    ("{a}\n{b}\n", b"\n"),
    ("{a}\n{b}", b"\n"),  # last line without a trailing newline
    ("{a}\r\n{b}\r\n", b"\r\n"),
    ("{a}\r\n{b}", b"\r\n"),
    ("  {a}\n\n{b}\n", b"\n"),  # hand-edited: odd spacing and a blank line
])
def test_existing_rows_are_kept_byte_for_byte(
    logged_in: Cli, runtime: StubRuntime, existing: str, newline: bytes
) -> None:
    # Spaced-out JSON, as an editor might leave it: it must survive untouched.
    a = json.dumps(labelled("conv_01", runtime.url), indent=None, ensure_ascii=True)
    b = compact(labelled("conv_02", runtime.url, "fail")).decode()
    old = existing.format(a=a, b=b).encode()
    Path(TARGET).write_bytes(old)

    result = append(logged_in, "conv_02", "conv_03", "conv_04")

    assert result.exit_code == 0, result.stderr
    new = Path(TARGET).read_bytes()
    assert new.startswith(old)
    separator = b"" if old.endswith(b"\n") else newline
    assert new[len(old):] == separator + b"".join(
        compact(make_fixture(i, runtime.url)) + newline for i in ("conv_03", "conv_04"))
    assert "skipped 1 conversation(s) already in" in result.stderr
    assert json.loads(runtime.requests[0].body) == {"conversation_ids": ["conv_03", "conv_04"]}


def test_nothing_new_means_no_request_and_no_write(logged_in: Cli, runtime: StubRuntime) -> None:
    old = compact(labelled("conv_01", runtime.url)) + b"\n"
    Path(TARGET).write_bytes(old)
    before = os.stat(TARGET).st_ino

    result = append(logged_in, "conv_01")

    assert result.exit_code == 0, result.stderr
    assert runtime.requests == []
    assert Path(TARGET).read_bytes() == old
    assert os.stat(TARGET).st_ino == before


def test_rejected_existing_rows_are_warned_about_and_left_alone(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    edited = labelled("conv_01", runtime.url)
    edited["judge_input"]["events"][0]["text"] = "edited by hand"
    old = compact(edited) + b"\n" + b"not json at all\n"
    Path(TARGET).write_bytes(old)

    result = append(logged_in, "conv_01", "conv_02")

    assert result.exit_code == 0, result.stderr
    assert Path(TARGET).read_bytes() == old + compact(make_fixture("conv_02", runtime.url)) + b"\n"
    assert f"{TARGET}:1: [fixture-hash-mismatch]" in result.stderr
    assert f"{TARGET}:2: [fixture-json]" in result.stderr
    assert "conv_01" in result.stderr  # skipped: still present, even if its row is broken


def test_append_keeps_the_file_mode_and_writes_through_a_symlink(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    real = Path("data") / TARGET
    real.parent.mkdir()
    real.write_bytes(b"")
    real.chmod(0o640)
    Path(TARGET).symlink_to(real)

    result = append(logged_in, "conv_05")

    assert result.exit_code == 0, result.stderr
    assert Path(TARGET).is_symlink()
    assert real.read_bytes() == compact(make_fixture("conv_05", runtime.url)) + b"\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


def test_partial_failure_still_appends_the_rest(logged_in: Cli, runtime: StubRuntime) -> None:
    runtime.tampered.add("conv_07")

    result = append(logged_in, "conv_06", "conv_07", "conv_missing")

    assert result.exit_code == 1
    assert Path(TARGET).read_bytes() == compact(make_fixture("conv_06", runtime.url)) + b"\n"
    assert "conv_07:" in result.stderr
    assert "conv_missing:" in result.stderr
    assert "2 of 3 requested conversation(s) were not exported" in result.stderr


def test_a_failed_export_leaves_the_file_untouched(logged_in: Cli, runtime: StubRuntime) -> None:
    from stub_runtime import Reply

    old = compact(labelled("conv_01", runtime.url)) + b"\n"
    Path(TARGET).write_bytes(old)
    runtime.script(*[Reply(503, b"busy")] * 3)

    result = append(logged_in, "conv_02")

    assert result.exit_code == 3
    assert Path(TARGET).read_bytes() == old
    assert sorted(os.listdir(".")) == sorted(["ids.txt", TARGET])  # no temp file left behind


def test_appended_content_never_changes_the_prefix(tmp_path: Path) -> None:
    """The core rule, directly: whatever the old bytes, they are the new file's prefix."""
    from hypothesis import given
    from hypothesis import strategies as st

    @given(st.binary(max_size=200), st.lists(st.binary(min_size=1, max_size=20), max_size=3))
    def check(old: bytes, rows: list[bytes]) -> None:
        path = tmp_path / TARGET
        path.write_bytes(old)
        existing = read_existing(path)
        new = appended_content(existing, rows)
        assert new.startswith(old)
        if rows:
            assert new.endswith(rows[-1] + existing.newline)

    check()


def test_a_concurrent_edit_is_never_overwritten(logged_in: Cli, runtime: StubRuntime) -> None:
    from stub_runtime import Reply

    old = compact(make_fixture("conv_01", runtime.url)) + b"\n"
    edited = compact(labelled("conv_01", runtime.url)) + b"\n"
    Path(TARGET).write_bytes(old)
    runtime.script(Reply(before=lambda: Path(TARGET).write_bytes(edited)))  # a label saved

    result = append(logged_in, "conv_02")

    assert result.exit_code == 0, result.stderr
    content = Path(TARGET).read_bytes()
    assert content.startswith(edited)  # the label saved meanwhile, byte for byte
    assert [json.loads(line)["source"]["conversation_id"]
            for line in content.splitlines()] == ["conv_01", "conv_02"]


def test_a_row_added_meanwhile_is_not_written_twice(logged_in: Cli,
                                                    runtime: StubRuntime) -> None:
    from stub_runtime import Reply

    Path(TARGET).write_bytes(compact(labelled("conv_01", runtime.url)) + b"\n")
    other = compact(make_fixture("conv_02", runtime.url)) + b"\n"
    first = Path(TARGET).read_bytes()
    runtime.script(Reply(before=lambda: Path(TARGET).write_bytes(first + other)))  # an export

    result = append(logged_in, "conv_02", "conv_03")

    assert result.exit_code == 0, result.stderr
    assert [json.loads(line)["source"]["conversation_id"]
            for line in Path(TARGET).read_bytes().splitlines()] == ["conv_01", "conv_02",
                                                                     "conv_03"]
    assert "skipped 1 conversation(s) already in" in result.stderr
    assert "wrote 1 fixture(s)" in result.stderr


def test_a_file_removed_meanwhile_is_not_recreated(logged_in: Cli,
                                                   runtime: StubRuntime) -> None:
    from stub_runtime import Reply

    Path(TARGET).write_bytes(compact(labelled("conv_01", runtime.url)) + b"\n")
    runtime.script(Reply(before=lambda: Path(TARGET).unlink()))

    result = append(logged_in, "conv_02")

    assert result.exit_code == 1
    assert "removed while exporting; nothing was written" in result.stderr
    assert not Path(TARGET).exists()


def test_export_append_then_check_passes(logged_in: Cli, runtime: StubRuntime) -> None:
    """The acceptance workflow: 3 ids into a new file, 2 more with 1 already there, check."""
    import shutil

    recipe = Path("customer-support")
    shutil.copytree(Path(__file__).parents[2] / "fixtures" / "recipes" / "customer-support",
                    recipe)
    target = recipe / "judges" / "useful-resolution.calibration.jsonl"
    target.unlink(missing_ok=True)  # start from a new file, whatever the example ships
    argv = ("conversations", "get", "--judge-fixtures", "--format", "json",
            "--append-to", str(target), "--ids-file", "ids.txt")

    Path("ids.txt").write_text("conv_01\nconv_02\nconv_03\n")
    first = logged_in(*argv)
    Path("ids.txt").write_text("conv_03\nconv_04\n")
    second = logged_in(*argv)
    check = logged_in("check", str(recipe), "--format", "json")

    assert (first.exit_code, second.exit_code) == (0, 0), first.stderr + second.stderr
    assert "skipped 1 conversation(s)" in second.stderr
    assert len(target.read_bytes().splitlines()) == 4
    assert check.exit_code == 0, check.out
    assert json.loads(check.out)["summary"]["errors"] == 0


def test_a_conversation_whose_row_does_not_parse_is_not_exported_again(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    """`check` names a broken line's conversation by its first `source`; so does the scan."""
    import shutil

    recipe = Path("customer-support")
    shutil.copytree(Path(__file__).parents[2] / "fixtures" / "recipes" / "customer-support",
                    recipe)
    target = recipe / "judges" / "useful-resolution.calibration.jsonl"
    broken = compact(labelled("conv_01", runtime.url)).replace(
        b'"expected":"pass"', b'"expected":"pass","expected":"fail"')
    target.write_bytes(broken + b"\n")
    Path("ids.txt").write_text("conv_01\nconv_02\n")

    result = logged_in("conversations", "get", "--ids-file", "ids.txt", "--judge-fixtures",
                       "--format", "json", "--append-to", str(target))
    check = logged_in("check", str(recipe), "--format", "json")

    assert result.exit_code == 0, result.stderr
    assert json.loads(runtime.requests[0].body) == {"conversation_ids": ["conv_02"]}
    assert "skipped 1 conversation(s) already in" in result.stderr
    assert f"{target.resolve()}:1: [fixture-json]" in result.stderr
    assert target.read_bytes() == broken + b"\n" + compact(make_fixture("conv_02", runtime.url)) \
        + b"\n"
    codes = [d["code"] for d in json.loads(check.out)["diagnostics"]]
    assert "fixture-json" in codes
    assert "fixture-duplicate-conversation" not in codes


def test_nothing_new_says_nothing_was_written(logged_in: Cli, runtime: StubRuntime) -> None:
    Path(TARGET).write_bytes(compact(labelled("conv_01", runtime.url)) + b"\n")

    result = append(logged_in, "conv_01")

    assert result.exit_code == 0, result.stderr
    assert "introspection: nothing written" in result.stderr
    assert "stdout" not in result.stderr


def test_concurrent_appends_never_lose_a_row(logged_in: Cli, runtime: StubRuntime) -> None:
    # Two real processes, both answered late so both read the file before either writes:
    # without a lock around compare-and-rename, one rename replaced the other's rows while
    # both said "wrote 1 fixture(s)". Now the second to write appends to the first's file.
    env = {key: value for key, value in os.environ.items() if not key.startswith("INTROSPECTION")}
    env.update({key: value for key, value in logged_in.env.items() if value is not None})
    Path("a.txt").write_text("conv_01\n")
    Path("b.txt").write_text("conv_02\n")
    for _ in range(6):
        Path(TARGET).write_bytes(compact(labelled("conv_05", runtime.url)) + b"\n")
        runtime.script(Reply(before=lambda: time.sleep(0.3)), Reply(before=lambda: time.sleep(0.3)))
        processes = {
            conversation_id: subprocess.Popen(
                [sys.executable, "-m", "introspection_cli", "conversations", "get", "--ids-file",
                 ids_file, "--judge-fixtures", "--format", "json", "--append-to", TARGET],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            for conversation_id, ids_file in (("conv_01", "a.txt"), ("conv_02", "b.txt"))}
        outcomes = {i: (p.wait(30), p.stderr.read().decode() if p.stderr else "")
                    for i, p in processes.items()}
        for process in processes.values():
            if process.stderr:
                process.stderr.close()
        written = [json.loads(line)["source"]["conversation_id"]
                   for line in Path(TARGET).read_bytes().splitlines()]
        reported = [i for i, (code, _) in outcomes.items() if code == 0]
        assert written[0] == "conv_05" and sorted(written[1:]) == reported, outcomes
        assert sorted(reported) == ["conv_01", "conv_02"], outcomes
