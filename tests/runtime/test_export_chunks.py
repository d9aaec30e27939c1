"""Any number of ids, several ``--append-to`` files: the runtime is called in chunks of 20,
each chunk is appended to every file atomically as it arrives, a chunk that fails is named
and the chunks before it stay written, and a rerun completes the files without duplicates.

Through the real HTTP client against the stub runtime; interrupted runs are real processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from runtime_harness import Cli, CliResult
from stub_runtime import Reply, StubRuntime, json_reply, make_fixture

from tests.hostile.harness import run_cli_measured

IDS = [f"conv_{n:02d}" for n in range(1, 61)]
A = "judges/billing.calibration.jsonl"
B = "judges/refunds.calibration.jsonl"


def row(conversation_id: str, url: str, **extra: Any) -> bytes:
    """The exact line the CLI writes for one fixture (``extra``: a label merged in)."""
    return json.dumps({**make_fixture(conversation_id, url), **extra}, ensure_ascii=False,
                      separators=(",", ":")).encode() + b"\n"


def rows(ids: list[str], url: str) -> bytes:
    return b"".join(row(i, url) for i in ids)


def requested(runtime: StubRuntime) -> list[list[str]]:
    """The ids of each export call the runtime received, in order."""
    return [json.loads(r.body)["conversation_ids"] for r in runtime.requests
            if r.path.endswith("/export")]


def get(cli: Cli, *destination: str) -> CliResult:
    return cli("conversations", "get", "--ids-file", "ids.txt", "--judge-fixtures",
               "--format", "json", *destination)


def to_both(cli: Cli) -> CliResult:
    return get(cli, "--append-to", A, "--append-to", B)


def leftovers() -> list[str]:
    return [name for name in os.listdir("judges") if name.endswith(".tmp")]


@pytest.fixture
def sixty(runtime: StubRuntime) -> list[str]:
    """60 conversations the runtime knows, listed in ids.txt, and an empty judges/."""
    runtime.known |= set(IDS)
    Path("ids.txt").write_text("".join(f"{i}\n" for i in IDS))
    Path("judges").mkdir()
    return IDS


def test_sixty_ids_are_three_calls_appended_to_both_files(
    logged_in: Cli, runtime: StubRuntime, sixty: list[str]
) -> None:
    Path("ids.txt").write_text("".join(f"{i}\n" for i in sixty) + "conv_05  # again\n")

    result = to_both(logged_in)

    assert result.exit_code == 0, result.stderr
    assert requested(runtime) == [sixty[:20], sixty[20:40], sixty[40:]]
    assert Path(A).read_bytes() == Path(B).read_bytes() == rows(sixty, runtime.url)
    for number, (first, last) in enumerate([("01", "20"), ("21", "40"), ("41", "60")], 1):
        assert (f"chunk {number} of 3 (conv_{first} to conv_{last}, 20 ids): wrote 20 "
                f"fixture(s) to {A} and 20 to {B}") in result.stderr
    assert f"wrote 60 fixture(s) to {A}\n" in result.stderr
    assert f"wrote 60 fixture(s) to {B}\n" in result.stderr
    assert result.stderr.count("conv_05 is listed more than once") == 1
    assert result.stdout == b""


def test_many_repeated_or_skipped_ids_are_listed_in_one_short_line(
    logged_in: Cli, runtime: StubRuntime, sixty: list[str]
) -> None:
    Path("ids.txt").write_text("".join(f"{i}\n" for i in sixty * 2))
    Path(A).write_bytes(rows(sixty[:40], runtime.url))

    result = get(logged_in, "--append-to", A)

    assert result.exit_code == 0, result.stderr
    assert requested(runtime) == [sixty[40:]]
    assert ("warning: 60 conversation ids are listed more than once in ids.txt; each is "
            "exported once: conv_01, conv_02, conv_03, conv_04, conv_05, conv_06, conv_07, "
            "conv_08, conv_09, conv_10 and 50 more\n") in result.stderr
    assert (f"skipped 40 conversation(s) already in {A}: conv_01, conv_02, conv_03, conv_04, "
            "conv_05, conv_06, conv_07, conv_08, conv_09, conv_10 and 30 more\n") in result.stderr
    assert "chunk" not in result.stderr  # one call: the totals say it all


def test_each_file_skips_what_it_holds_and_keeps_its_bytes(
    logged_in: Cli, runtime: StubRuntime, sixty: list[str]
) -> None:
    old_a = rows(sixty[:20], runtime.url)
    old_b = old_a + row("conv_45", runtime.url, expected="fail", split="test")
    Path(A).write_bytes(old_a)
    Path(B).write_bytes(old_b)

    result = to_both(logged_in)

    assert result.exit_code == 0, result.stderr
    assert requested(runtime) == [sixty[20:40], sixty[40:]]  # what neither file holds
    assert Path(A).read_bytes() == old_a + rows(sixty[20:], runtime.url)
    assert Path(B).read_bytes() == old_b + rows([i for i in sixty[20:] if i != "conv_45"],
                                                runtime.url)
    assert f"skipped 20 conversation(s) already in {A}" in result.stderr
    assert f"skipped 21 conversation(s) already in {B}" in result.stderr
    assert (f"chunk 2 of 2 (conv_41 to conv_60, 20 ids): wrote 20 fixture(s) to {A} and 19 "
            f"to {B}") in result.stderr
    assert f"wrote 40 fixture(s) to {A}\n" in result.stderr
    assert f"wrote 39 fixture(s) to {B}\n" in result.stderr


def test_a_conversation_that_fails_in_one_chunk_is_counted_there(
    logged_in: Cli, runtime: StubRuntime, sixty: list[str]
) -> None:
    runtime.known.discard("conv_25")

    result = to_both(logged_in)

    assert result.exit_code == 1
    kept = [i for i in sixty if i != "conv_25"]
    assert Path(A).read_bytes() == Path(B).read_bytes() == rows(kept, runtime.url)
    assert "error: conv_25: the runtime could not export it: [not_found]" in result.stderr
    assert (f"chunk 2 of 3 (conv_21 to conv_40, 20 ids): 1 not exported; wrote 19 fixture(s) "
            f"to {A} and 19 to {B}") in result.stderr
    assert "1 of 60 requested conversation(s) were not exported" in result.stderr


def test_a_chunk_the_runtime_fails_is_named_and_the_chunk_before_stays_written(
    logged_in: Cli, runtime: StubRuntime, sixty: list[str]
) -> None:
    runtime.script(Reply(before=lambda: None), *[Reply(503, b"busy")] * 3)  # 3 attempts

    failed = to_both(logged_in)

    assert failed.exit_code == 3, failed.stderr
    assert Path(A).read_bytes() == Path(B).read_bytes() == rows(sixty[:20], runtime.url)
    assert leftovers() == []
    assert "error: chunk 2 of 3 (conv_21 to conv_40, 20 ids) failed; nothing of it was " \
           "written" in failed.stderr
    assert "not requested: chunk 3 of 3 (conv_41 to conv_60, 20 ids)" in failed.stderr
    assert f"wrote 20 fixture(s) to {A}\n" in failed.stderr
    assert "answered HTTP 503 (3 attempt(s))" in failed.stderr.splitlines()[-1]
    assert requested(runtime) == [sixty[:20]] + [sixty[20:40]] * 3  # chunk 3 never asked

    runtime.requests.clear()
    rerun = to_both(logged_in)

    assert rerun.exit_code == 0, rerun.stderr
    assert requested(runtime) == [sixty[20:40], sixty[40:]]
    assert Path(A).read_bytes() == Path(B).read_bytes() == rows(sixty, runtime.url)


def test_a_file_removed_mid_export_stops_it_and_the_other_keeps_what_it_got(
    logged_in: Cli, runtime: StubRuntime, sixty: list[str]
) -> None:
    runtime.script(Reply(before=lambda: None), Reply(before=lambda: Path(B).unlink()))

    result = to_both(logged_in)

    assert result.exit_code == 1, result.stderr
    assert Path(A).read_bytes() == rows(sixty[:40], runtime.url)
    assert not Path(B).exists()  # not recreated
    assert (f"error: chunk 2 of 3 (conv_21 to conv_40, 20 ids) failed after writing 20 "
            f"fixture(s) to {A}") in result.stderr
    assert "not requested: chunk 3 of 3 (conv_41 to conv_60, 20 ids)" in result.stderr
    assert "was removed while exporting" in result.stderr.splitlines()[-1]
    assert len(requested(runtime)) == 2


def test_a_token_rejected_mid_export_is_exit_2_and_keeps_the_first_chunk(
    logged_in: Cli, runtime: StubRuntime, sixty: list[str]
) -> None:
    runtime.script(Reply(before=lambda: None),
                   json_reply(401, {"error": {"message": "token expired"}}))

    result = to_both(logged_in)

    assert result.exit_code == 2, result.stderr
    assert Path(A).read_bytes() == Path(B).read_bytes() == rows(sixty[:20], runtime.url)
    assert "chunk 2 of 3 (conv_21 to conv_40, 20 ids) failed" in result.stderr
    assert "run `introspection login` again" in result.stderr.splitlines()[-1]
    assert len(requested(runtime)) == 2  # a 401 is not retried, and nothing after it is sent


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill -9"])
def test_an_interrupted_export_keeps_whole_chunks_and_a_rerun_completes_it(
    logged_in: Cli, runtime: StubRuntime, sixty: list[str], how: signal.Signals
) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("INTROSPECTION")}
    env.update({key: value for key, value in logged_in.env.items() if value is not None})
    runtime.script(Reply(before=lambda: None), Reply(hang=True))  # chunk 2 never answered
    process = subprocess.Popen(  # not run_child: this one is signalled while it runs
        [sys.executable, "-m", "introspection_cli", "conversations", "get", "--ids-file",
         "ids.txt", "--judge-fixtures", "--format", "json", "--append-to", A, "--append-to", B],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while len(requested(runtime)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(how)
    stderr = process.communicate(timeout=20)[1].decode()

    assert process.returncode != 0
    assert "Traceback" not in stderr
    if how == signal.SIGINT:
        assert "interrupted; not exported: chunks 2 to 3 of 3 (conv_21 to conv_60, 40 ids)" \
            in stderr
        assert f"wrote 20 fixture(s) to {A}\n" in stderr
    assert Path(A).read_bytes() == Path(B).read_bytes() == rows(sixty[:20], runtime.url)
    assert leftovers() == []

    runtime.requests.clear()
    rerun = to_both(logged_in)

    assert rerun.exit_code == 0, rerun.stderr
    assert requested(runtime) == [sixty[20:40], sixty[40:]]
    assert Path(A).read_bytes() == Path(B).read_bytes() == rows(sixty, runtime.url)


@pytest.mark.parametrize("second", ["symlink to notes", "missing directory", "A again",
                                    "A through a link", "not a calibration file"])
def test_a_bad_second_file_is_refused_before_any_request(
    logged_in: Cli, runtime: StubRuntime, sixty: list[str], second: str
) -> None:
    Path("notes.jsonl").write_bytes(b"mine\n")
    Path(A).write_bytes(b"")
    target, message = {
        "symlink to notes": ("judges/notes.calibration.jsonl", "is a symbolic link to"),
        "missing directory": ("elsewhere/refunds.calibration.jsonl", "does not exist"),
        "A again": (A, "name the same file"),
        "A through a link": ("judges/alias.calibration.jsonl", "name the same file"),
        "not a calibration file": ("notes.jsonl", ".calibration.jsonl"),
    }[second]
    if second == "symlink to notes":
        Path(target).symlink_to(Path("notes.jsonl").resolve())
    if second == "A through a link":
        Path(target).symlink_to("billing.calibration.jsonl")

    result = get(logged_in, "--append-to", A, "--append-to", target)

    assert result.exit_code == 2, result.stderr
    assert message in result.stderr
    assert runtime.requests == []
    assert Path(A).read_bytes() == b""
    assert Path("notes.jsonl").read_bytes() == b"mine\n"


def test_an_unwritable_second_file_is_refused_before_any_request(tmp_path: Path) -> None:
    token = "itk_chunks_token_7"
    runtime = StubRuntime(token).start()
    try:
        (tmp_path / "judges").mkdir()
        (tmp_path / B).write_bytes(b"")
        (tmp_path / B).chmod(0o444)
        (tmp_path / "ids.txt").write_text("conv_01\n")
        outcome = run_cli_measured(
            ["conversations", "get", "--ids-file", "ids.txt", "--judge-fixtures", "--format",
             "json", "--append-to", A, "--append-to", B], tmp_path, honour_permissions=True,
            extra_env={"INTROSPECTION_API_URL": runtime.url, "INTROSPECTION_TOKEN": token,
                       "INTROSPECTION_CONFIG_DIR": str(tmp_path / "config")})
    finally:
        runtime.stop()

    assert outcome.returncode == 2, outcome.stderr
    assert f"--append-to {B}" in outcome.stderr and " is not writable" in outcome.stderr
    assert runtime.requests == []
    assert not (tmp_path / A).exists()


def run_child(cli: Cli, *extra: str, stdout: int | None = None,
              preexec_fn: Callable[[], None] | None = None) -> subprocess.CompletedProcess[bytes]:
    """The export of ids.txt as a real process (``stdout``: its fd 1)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTROSPECTION_")}
    env.update({k: v for k, v in cli.env.items() if v is not None})
    return subprocess.run(
        [sys.executable, "-m", "introspection_cli", "conversations", "get", "--ids-file",
         "ids.txt", "--judge-fixtures", "--format", "json", *extra], env=env, stdout=stdout,
        stderr=subprocess.PIPE, preexec_fn=preexec_fn, timeout=60, check=False)


@pytest.mark.parametrize("where", ["stdout", "--output"])
def test_each_chunk_is_out_before_the_next_is_requested(
    logged_in: Cli, runtime: StubRuntime, sixty: list[str], where: str
) -> None:
    out = Path("rows.jsonl")
    seen: list[int] = []  # the lines out holds when the second chunk is asked for
    runtime.script(Reply(before=lambda: None),
                   Reply(before=lambda: seen.append(out.read_bytes().count(b"\n"))))

    if where == "stdout":
        with out.open("wb") as handle:
            done = run_child(logged_in, stdout=handle.fileno())
    else:
        done = run_child(logged_in, "--output", str(out))

    assert done.returncode == 0, done.stderr
    assert seen == [20]
    assert out.read_bytes() == rows(sixty, runtime.url)
    shown = "stdout" if where == "stdout" else "rows.jsonl"
    assert f"wrote 60 fixture(s) to {shown}".encode() in done.stderr


def test_stdout_cut_short_in_the_second_chunk_stops_the_export(
    logged_in: Cli, runtime: StubRuntime, sixty: list[str]
) -> None:
    import resource

    row_size = len(row("conv_01", runtime.url))
    out = Path("rows.jsonl")

    def limit() -> None:
        size = 30 * row_size + row_size // 2  # chunk 1, then 10 rows and a half of chunk 2
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    with out.open("wb") as handle:
        done = run_child(logged_in, stdout=handle.fileno(), preexec_fn=limit)
    stderr = done.stderr.decode()

    assert done.returncode == 2, stderr
    assert "only 30 of 40 fixture(s) reached stdout (the next one cut short)" in stderr
    assert "not requested: chunk 3 of 3 (conv_41 to conv_60, 20 ids)" in stderr
    assert requested(runtime) == [sixty[:20], sixty[20:40]]
    assert out.read_bytes().startswith(rows(sixty[:30], runtime.url))
