"""The run's parts as their callers see them: the SDK preload is injected, and a plan is a
unit of one run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from introspection_cli.evaluation.runner import EvalOptions, run_eval
from tests.conftest import REPO
from tests.evaluation.conftest import (
    SENTINEL_KEY,
    UNGATED_JUDGE,
    fixture_row,
    recipe_object,
    write_recipe,
)
from tests.evaluation.stub_model_server import StubModelServer

#: A run whose providers are a caller's own (a double answering pass), with what it
#: preloads recorded, in a fresh interpreter: which SDKs it imported.
_OWN_PROVIDERS = """
import json, sys
from pathlib import Path
from introspection_cli.evaluation.providers import ModelReply, Provider
from introspection_cli.evaluation.runner import EvalOptions, run_eval
from tests.evaluation.conftest import recipe_object

class Passing(Provider):
    name = "openai"
    endpoint = "http://127.0.0.1:9/v1"

    async def complete(self, request):
        return ModelReply('{"reasoning": "fine", "verdict": "pass"}', None)

preloaded = []
preload = None if sys.argv[2] == "none" else preloaded.append
result = run_eval(recipe_object(Path(sys.argv[1]), gate=None), EvalOptions(use_cache=False),
                  provider_factory=lambda name, settings: Passing(), preload_sdk=preload)
print(json.dumps({"outcomes": [row.outcome for row in result.run.judges[0].rows],
                  "preloaded": preloaded, "openai": "openai" in sys.modules}))
"""


def own_providers_run(root: Path, preload: str) -> dict[str, object]:
    env = {"OPENAI_API_KEY": "sk-own", "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", _OWN_PROVIDERS, str(root), preload],
                            capture_output=True, text=True, check=False, cwd=REPO, env=env,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    found: dict[str, object] = json.loads(result.stdout.splitlines()[-1])
    return found


def test_the_sdk_preload_is_the_callers_to_choose(tmp_path: Path) -> None:
    rows = [fixture_row(f"conv_{i}", "anything") for i in range(2)]
    root = write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, rows)})
    assert own_providers_run(root, "none") == {
        "outcomes": ["pass", "pass"], "preloaded": [], "openai": False}
    # Asked to preload, the run names the provider it expects to call, once.
    assert own_providers_run(root, "record") == {
        "outcomes": ["pass", "pass"], "preloaded": ["openai"], "openai": False}


def test_two_plans_of_one_judge_and_model_are_two_runs_of_it(
        tmp_path: Path, stub: StubModelServer) -> None:
    rows = [fixture_row(f"conv_{i}", f"VERDICT:{verdict}", expected="pass", split="dev")
            for i, verdict in enumerate(("pass", "fail", "pass"))]
    root = write_recipe(tmp_path / "recipe", {"helpful": (UNGATED_JUDGE, rows)})
    result = run_eval(recipe_object(root, gate=None),
                      EvalOptions(compare_models=((None, "stub-model"),), timeout=5.0))
    first, second = result.run.judges
    assert (first.model, second.model) == ("stub-model", "stub-model")
    assert [row.outcome for row in first.rows] == [row.outcome for row in second.rows] == [
        "pass", "fail", "pass"]
    # Each plan's usage is its own: together they are the run's.
    assert first.usage.requests + first.usage.cached == 3
    assert second.usage.requests + second.usage.cached == 3
    assert (first.usage.requests + second.usage.requests == result.run.usage.requests
            == len(stub.requests))
    assert SENTINEL_KEY not in repr(result)
