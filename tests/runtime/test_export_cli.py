"""`introspection conversations get` against the stub runtime over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from runtime_harness import Cli
from stub_runtime import StubRuntime, json_reply, make_fixture


def line(obj: dict[str, Any]) -> bytes:
    """The exact bytes the CLI writes for one object."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def ids_file(*ids: str, name: str = "ids.txt") -> str:
    Path(name).write_text("".join(f"{i}\n" for i in ids))
    return name


def get_fixtures(cli: Cli, *extra: str, ids: str = "ids.txt") -> Any:
    return cli("conversations", "get", "--ids-file", ids, "--judge-fixtures",
               "--format", "json", *extra)


# -- flags and ids file: all refused before any request ------------------------------------


@pytest.mark.parametrize(("argv", "message"), [
    (["--judge-fixtures"], "--judge-fixtures requires --ids-file"),
    (["--judge-fixtures", "--format", "json"], "--judge-fixtures requires --ids-file"),
    ([], "--ids-file"),
    (["--ids-file", "ids.txt", "--judge-fixtures", "--format", "csv"], "only format is json"),
    (["--ids-file", "ids.txt", "--format", "csv"], "pass --format json"),
    (["--ids-file", "ids.txt", "--judge-fixtures", "--format", "JSON"], "pass --format json"),
    (["--ids-file", "ids.txt", "--judge-fixtures"], "--judge-fixtures requires --format json"),
    (["--ids-file", "ids.txt", "--judge-fixtures", "--output", "o.jsonl"],
     "--judge-fixtures requires --format json; add it to the command"),
    (["--judge-fixtures", "--ids-file", "ids.txt", "--append-to", "a.calibration.jsonl"],
     "--judge-fixtures requires --format json"),
    (["--ids-file", "ids.txt", "--judge-fixtures", "--format", "json", "--output", "a.jsonl",
      "--append-to", "a.calibration.jsonl"], "mutually exclusive"),
    (["--ids-file", "ids.txt", "--append-to", "a.calibration.jsonl"], "requires --judge-fixtures"),
    (["--ids-file", "ids.txt", "--judge-fixtures", "--format", "json", "--append-to",
      "judge.yaml"], ".calibration.jsonl"),
    (["--ids-file", "ids.txt", "--judge-fixtures", "--format", "json", "--append-to",
      "no/such/a.calibration.jsonl"], "does not exist"),
    (["--ids-file", "missing.txt"], "does not exist"),
    (["--ids-file", "ids.txt", "--force"], "--force only applies to --output"),
])
def test_bad_flags_exit_2_before_any_request(
    logged_in: Cli, runtime: StubRuntime, argv: list[str], message: str
) -> None:
    ids_file("conv_01")

    result = logged_in("conversations", "get", *argv)

    assert result.exit_code == 2
    assert message in result.stderr
    assert runtime.requests == []


@pytest.mark.parametrize(("count", "calls"), [(20, [20]), (21, [20, 1]), (41, [20, 20, 1])])
def test_more_than_20_ids_are_asked_for_20_at_a_time(
    logged_in: Cli, runtime: StubRuntime, count: int, calls: list[int]
) -> None:
    ids = [f"conv_{n:02d}" for n in range(1, count + 1)]
    runtime.known |= set(ids)
    ids_file(*ids)

    result = get_fixtures(logged_in)

    assert result.exit_code == 0, result.stderr
    assert [len(json.loads(r.body)["conversation_ids"]) for r in runtime.requests] == calls
    assert result.stdout == b"".join(line(make_fixture(i, runtime.url)) for i in ids)
    assert ("chunk 1 of" in result.stderr) == (len(calls) > 1)  # one call: no chunk lines


def test_an_ids_file_with_only_comments_exits_2(logged_in: Cli, runtime: StubRuntime) -> None:
    Path("ids.txt").write_text("# nothing yet\n\n   \n")

    result = get_fixtures(logged_in)

    assert result.exit_code == 2
    assert "no conversation ids" in result.stderr
    assert runtime.requests == []


def test_ids_file_comments_blanks_and_duplicates(logged_in: Cli, runtime: StubRuntime) -> None:
    Path("ids.txt").write_text(
        "# billing conversations\n\nconv_02  # the double charge\n  conv_01\nconv_02\n"
    )

    result = get_fixtures(logged_in)

    assert result.exit_code == 0, result.stderr
    assert json.loads(runtime.requests[0].body) == {"conversation_ids": ["conv_02", "conv_01"]}
    assert result.stderr.count("conv_02 is listed more than once") == 1


# -- where the rows go -----------------------------------------------------------------------


def test_fixtures_go_to_stdout_verbatim_in_ids_file_order(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    ids_file("conv_03", "conv_01")

    result = get_fixtures(logged_in)

    assert result.exit_code == 0, result.stderr
    assert result.stdout == (line(make_fixture("conv_03", runtime.url))
                             + line(make_fixture("conv_01", runtime.url)))
    assert [r.path for r in runtime.requests] == ["/v1/judge-fixtures/export"]
    assert "wrote 2 fixture(s) to stdout" in result.stderr


def test_output_writes_a_file_and_refuses_to_replace_one(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    ids_file("conv_01")

    first = get_fixtures(logged_in, "--output", "rows.jsonl")
    second = get_fixtures(logged_in, "--output", "rows.jsonl")

    assert first.exit_code == 0, first.stderr
    assert first.stdout == b""
    assert Path("rows.jsonl").read_bytes() == line(make_fixture("conv_01", runtime.url))
    assert second.exit_code == 2
    assert "--force" in second.stderr
    assert len(runtime.export_paths()) == 1


def test_output_force_replaces_the_file(logged_in: Cli, runtime: StubRuntime) -> None:
    Path("rows.jsonl").write_text("old\n")
    ids_file("conv_02")

    result = get_fixtures(logged_in, "--output", "rows.jsonl", "--force")

    assert result.exit_code == 0, result.stderr
    assert Path("rows.jsonl").read_bytes() == line(make_fixture("conv_02", runtime.url))


@pytest.mark.parametrize("format_flag", [[], ["--format", "json"]], ids=["no --format", "json"])
def test_plain_bundles_without_judge_fixtures(
    logged_in: Cli, runtime: StubRuntime, format_flag: list[str]
) -> None:
    ids_file("conv_01", "conv_02")

    result = logged_in("conversations", "get", "--ids-file", "ids.txt", *format_flag)

    assert result.exit_code == 0, result.stderr
    rows = [json.loads(raw) for raw in result.stdout.splitlines()]
    assert [row["conversation_id"] for row in rows] == ["conv_01", "conv_02"]
    assert all("record_type" not in row for row in rows)
    assert [r.path for r in runtime.requests] == ["/v1/conversations/export"]


def test_plain_bundles_of_many_ids_are_asked_for_20_at_a_time(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    ids = [f"conv_{n:02d}" for n in range(1, 26)]
    runtime.known |= set(ids)
    ids_file(*ids)

    result = logged_in("conversations", "get", "--ids-file", "ids.txt", "--output", "b.jsonl")

    assert result.exit_code == 0, result.stderr
    assert [(r.path, len(json.loads(r.body)["conversation_ids"])) for r in runtime.requests] \
        == [("/v1/conversations/export", 20), ("/v1/conversations/export", 5)]
    written = [json.loads(raw)["conversation_id"] for raw in Path("b.jsonl").read_bytes().splitlines()]
    assert written == ids
    assert "chunk 2 of 2 (conv_21 to conv_25, 5 ids): wrote 5 conversation(s) to b.jsonl" \
        in result.stderr


# -- partial failures ------------------------------------------------------------------------


def test_unknown_ids_are_reported_and_the_rest_written(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    ids_file("conv_01", "conv_nope", "conv_02")

    result = get_fixtures(logged_in, "--output", "rows.jsonl")

    assert result.exit_code == 1
    assert "conv_nope: the runtime could not export it: [not_found]" in result.stderr
    assert Path("rows.jsonl").read_bytes() == (line(make_fixture("conv_01", runtime.url))
                                               + line(make_fixture("conv_02", runtime.url)))


@pytest.mark.parametrize(("fault", "code"), [
    ("tampered", "fixture-hash-mismatch"),
    ("mismatched", "fixture-conversation-mismatch"),
])
def test_a_fixture_failing_verification_is_not_written(
    logged_in: Cli, runtime: StubRuntime, fault: str, code: str
) -> None:
    getattr(runtime, fault).add("conv_02")
    ids_file("conv_01", "conv_02")

    result = get_fixtures(logged_in)

    assert result.exit_code == 1
    assert result.stdout == line(make_fixture("conv_01", runtime.url))
    assert f"conv_02: the runtime sent a fixture that fails verification: [{code}]" in result.stderr


def test_an_id_the_runtime_ignores_is_reported(logged_in: Cli, runtime: StubRuntime) -> None:
    fixture = make_fixture("conv_01", runtime.url)
    runtime.script(json_reply(200, {"fixtures": [fixture], "errors": []}))
    ids_file("conv_01", "conv_02")

    result = get_fixtures(logged_in)

    assert result.exit_code == 1
    assert result.stdout == line(fixture)
    assert "conv_02: the runtime returned neither a fixture nor an error" in result.stderr


def test_a_bundle_the_runtime_leaves_out_is_reported(logged_in: Cli, runtime: StubRuntime) -> None:
    # Without --judge-fixtures too (SPEC 3.3): a requested conversation neither exported
    # nor reported by the runtime is a failure. A bundle naming no conversation cannot
    # stand for one: it is a warning and not written.
    runtime.script(json_reply(200, {"conversations": [
        {"conversation_id": "conv_01", "events": []}, {"events": ["anonymous"]}], "errors": []}))
    ids_file("conv_01", "conv_02", "conv_03")

    result = logged_in("conversations", "get", "--ids-file", "ids.txt")

    assert result.exit_code == 1, result.stderr
    assert result.stdout == line({"conversation_id": "conv_01", "events": []})
    for missing in ("conv_02", "conv_03"):
        assert (f"error: {missing}: the runtime returned neither a conversation nor an error"
                in result.stderr)
    assert "the runtime sent a conversation that names no conversation; not written" \
        in result.stderr
    assert "2 of 3 requested conversation(s) were not exported" in result.stderr



# -- what the summary says ---------------------------------------------------------------------


def test_an_unrequested_conversation_is_a_warning_not_a_lost_request(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    errors = [{"conversation_id": i, "code": "not_found", "message": "gone"}
              for i in ("conv_01", "conv_02")]
    runtime.script(json_reply(200, {"fixtures": [make_fixture("conv_03", runtime.url),
                                                 make_fixture("conv_09", runtime.url)],
                                    "errors": errors}))
    ids_file("conv_01", "conv_02", "conv_03")

    result = get_fixtures(logged_in)

    assert result.exit_code == 1
    assert result.stdout == line(make_fixture("conv_03", runtime.url))
    assert "warning: conv_09: the runtime sent this conversation, which was not requested; " \
           "not written" in result.stderr
    assert "2 of 3 requested conversation(s) were not exported" in result.stderr


def test_only_unrequested_extras_exit_0(logged_in: Cli, runtime: StubRuntime) -> None:
    runtime.script(json_reply(200, {"fixtures": [make_fixture("conv_01", runtime.url),
                                                 make_fixture("conv_09", runtime.url)],
                                    "errors": [{"conversation_id": "conv_08", "code": "x",
                                                "message": "y"}]}))
    ids_file("conv_01")

    result = get_fixtures(logged_in)

    assert result.exit_code == 0, result.stderr
    assert result.stdout == line(make_fixture("conv_01", runtime.url))
    assert "conv_09" in result.stderr and "conv_08" in result.stderr
    assert "not exported" not in result.stderr


@pytest.mark.parametrize("answer", ["twice", "also an error"])
def test_a_conversation_written_despite_a_second_answer_is_not_a_failure(
    logged_in: Cli, runtime: StubRuntime, answer: str
) -> None:
    fixture = make_fixture("conv_01", runtime.url)
    if answer == "twice":
        runtime.script(json_reply(200, {"fixtures": [fixture, fixture], "errors": []}))
        expected = "warning: conv_01: the runtime sent this conversation more than once; " \
                   "wrote the first copy"
    else:
        runtime.script(json_reply(200, {"fixtures": [fixture], "errors": [
            {"conversation_id": "conv_01", "code": "stale", "message": "re-indexing"}]}))
        expected = "warning: conv_01: written, but the runtime reported an error for it " \
                   "([stale] re-indexing)"
    ids_file("conv_01")

    result = get_fixtures(logged_in)

    assert result.exit_code == 0, result.stderr
    assert result.stdout == line(fixture)
    assert expected in result.stderr
    assert "error:" not in result.stderr
    assert "wrote 1 fixture(s) to stdout" in result.stderr


@pytest.mark.parametrize(("fault", "code"), [
    ("tampered", "fixture-hash-mismatch"),
    ("mismatched", "fixture-conversation-mismatch"),
])
def test_a_row_the_runtime_sent_broken_is_not_blamed_on_the_user(
    logged_in: Cli, runtime: StubRuntime, fault: str, code: str
) -> None:
    """The runtime sent a row that does not verify: nobody on this machine edited it, so
    the message says so and what to do, not "undo the change" (a calibration file's
    message, where the user did edit the row)."""
    getattr(runtime, fault).add("conv_02")
    ids_file("conv_02")

    result = get_fixtures(logged_in)

    assert result.exit_code == 1
    assert f"[{code}]" in result.stderr
    assert "undo" not in result.stderr.lower()
    assert "edited" not in result.stderr and "was changed after export" not in result.stderr
    assert ("the runtime sent a row that does not verify: nothing on this machine changed it"
            in result.stderr)
    assert "report it to the runtime's maintainers" in result.stderr
    assert "export it again" in result.stderr


def test_a_broken_copy_beside_a_good_one_is_a_warning(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    good = make_fixture("conv_01", runtime.url)
    broken = {**good, "snapshot_hash": "sha256:" + "0" * 64}
    runtime.script(json_reply(200, {"fixtures": [broken, good], "errors": []}))
    ids_file("conv_01")

    result = get_fixtures(logged_in)

    assert result.exit_code == 0, result.stderr
    assert result.stdout == line(good)
    assert "warning: conv_01: written, but the runtime also sent a copy that fails " \
           "verification ([fixture-hash-mismatch]" in result.stderr


def test_output_when_every_id_fails_says_nothing_was_written(
    logged_in: Cli, runtime: StubRuntime
) -> None:
    ids_file("conv_nope")

    result = get_fixtures(logged_in, "--output", "rows.jsonl")

    assert result.exit_code == 1
    assert not Path("rows.jsonl").exists()
    assert "introspection: nothing written" in result.stderr
    assert "stdout" not in result.stderr
    assert "1 of 1 requested conversation(s) were not exported" in result.stderr


def test_output_names_the_file_it_wrote(logged_in: Cli, runtime: StubRuntime) -> None:
    ids_file("conv_01", "conv_02")

    result = get_fixtures(logged_in, "--output", "rows.jsonl")

    assert result.exit_code == 0, result.stderr
    assert "wrote 2 fixture(s) to rows.jsonl" in result.stderr
