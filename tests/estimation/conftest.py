"""The stub model server and a clean environment, as for the evaluation tests."""

from tests.evaluation.conftest import _clean_env, stub  # noqa: F401
