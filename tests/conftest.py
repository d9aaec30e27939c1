"""Shared test helpers: run the real CLI in a subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

# A suite started in the background by a shell without job control (`nohup ... &`, a
# CI runner's detached step) inherits SIGINT ignored, and a signal ignored at exec stays
# ignored in every child: the tests that press Ctrl-C on a command would then see it run
# on. Handled here, the children start with SIGINT at its default, as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


def run_cli(args: list[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None,
            input_text: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``python -m introspection_cli ARGS`` and capture its output."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("INTROSPECTION_")}
    full_env.pop("NO_COLOR", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "introspection_cli", *args], cwd=cwd,
                          env=full_env, input=input_text, capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_cli


# Hypothesis budgets. `ci` (the default) is fixed and reproducible: the same
# examples on every run, no example database, no flaky deadline on a shared
# machine. `long` searches 20x as many examples for a deliberate fuzzing run:
#     HYPOTHESIS_PROFILE=long python -m pytest tests/fuzz
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("ci", max_examples=100, deadline=None, derandomize=True,
                          database=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=2000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
