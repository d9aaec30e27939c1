"""`introspection doctor` against the stub runtime: a good token, a wrong one, none.

The ``cli`` fixture checks on teardown that the sentinel token appeared in no
stdout or stderr.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from runtime_harness import Cli, CliResult
from stub_runtime import StubRuntime

#: Provider keys from the developer's shell must not decide these tests.
NO_KEYS: dict[str, str | None] = {"OPENAI_API_KEY": "sk-test-planted", "ANTHROPIC_API_KEY": None,
                                  "OPENAI_BASE_URL": None, "ANTHROPIC_BASE_URL": None}


def doctor(cli: Cli, **env: str | None) -> tuple[CliResult, dict[str, Any]]:
    result = cli("doctor", "--format", "json", env={**NO_KEYS, **env})
    findings = {f["topic"]: f for f in json.loads(result.out)["findings"]}
    return result, findings


def test_a_good_login_answers_with_who_it_is(logged_in: Cli, runtime: StubRuntime) -> None:
    _, findings = doctor(logged_in)
    runtime_finding = findings["runtime"]
    assert runtime_finding["status"] == "ok"
    assert runtime_finding["detail"].startswith(f"{runtime.url} answers: logged in as "
                                                "ada@example.com (Acme)")
    assert runtime_finding["facts"]["accepted"] is True
    assert [(r.method, r.path) for r in runtime.requests] == [("GET", "/v1/whoami")]


def test_a_token_the_runtime_rejects_is_a_problem_with_the_fix(
    logged_in: Cli, runtime: StubRuntime, config_dir: Path
) -> None:
    runtime.token = "itk_rotated_on_the_server"
    result, findings = doctor(logged_in)
    assert result.exit_code == 1
    runtime_finding = findings["runtime"]
    assert runtime_finding["status"] == "problem"
    assert runtime_finding["detail"] == (
        f"{runtime.url} rejected the token from the stored login "
        f"{config_dir / 'credentials.json'} (HTTP 401: invalid token)")
    assert runtime_finding["fix"] == ("log in again with a valid token for it: "
                                      f"`introspection login --url {runtime.url}`")
    assert len(runtime.requests) == 1  # one attempt: a 401 is never retried anyway


def test_a_wrong_token_in_the_environment_says_to_fix_the_variable(
    cli: Cli, runtime: StubRuntime
) -> None:
    result, findings = doctor(cli, INTROSPECTION_API_URL=runtime.url,
                              INTROSPECTION_TOKEN="itk_wrong_token")
    assert result.exit_code == 1
    assert findings["runtime"]["detail"].startswith(
        f"{runtime.url} rejected the token from INTROSPECTION_TOKEN")
    assert findings["runtime"]["fix"].startswith("set INTROSPECTION_TOKEN to a valid token")
    assert "itk_wrong_token" not in result.out + result.stderr


def test_no_login_is_a_problem_and_nothing_is_sent(cli: Cli, runtime: StubRuntime) -> None:
    result, findings = doctor(cli)
    assert result.exit_code == 1
    assert findings["runtime"]["status"] == "problem"
    assert findings["runtime"]["detail"] == "not logged in to a runtime"
    assert "introspection login --url" in findings["runtime"]["fix"]
    assert runtime.requests == []


def test_a_runtime_that_does_not_answer_is_asked_once(logged_in: Cli,
                                                      runtime: StubRuntime) -> None:
    from stub_runtime import json_reply

    runtime.script(json_reply(503, {"error": {"message": "busy"}}), json_reply(200, {}))
    result, findings = doctor(logged_in)
    assert result.exit_code == 1
    assert findings["runtime"]["detail"] == f"the runtime at {runtime.url} answered HTTP 503 " \
                                            "(1 attempt(s))"
    assert findings["runtime"]["fix"] == ("check the URL and your network, or try again "
                                          "later")
    assert len(runtime.requests) == 1


def test_the_text_report_says_each_problem_and_its_fix(cli: Cli, runtime: StubRuntime) -> None:
    result = cli("doctor", env={**NO_KEYS, "INTROSPECTION_API_URL": runtime.url,
                                "INTROSPECTION_TOKEN": "itk_wrong_token"})
    assert result.exit_code == 1
    lines = result.out.splitlines()
    problem = next(i for i, line in enumerate(lines) if line.startswith("problem  runtime"))
    assert lines[problem + 1].split()[:2] == ["fix:", "set"]
    assert re.fullmatch(r"\d+ problems? found: fix (it|them) as said above, then run "
                        r"`introspection doctor` again", lines[-1])
