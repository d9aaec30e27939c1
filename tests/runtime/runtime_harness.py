"""The real CLI entry point run in-process, and the sentinel-token check."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from introspection_cli.cli.app import main

SENTINEL_TOKEN = "itk_SENTINEL_5f0c2b7e9a41d3"


@dataclass
class CliResult:
    exit_code: int
    stdout: bytes
    stderr: str

    @property
    def out(self) -> str:
        return self.stdout.decode("utf-8")


class Cli:
    """Runs ``introspection ARGV`` through :func:`main`, as the console script does."""

    def __init__(self, env: dict[str, str | None], workdir: Path) -> None:
        self.env = env
        self.workdir = workdir
        self.results: list[CliResult] = []

    def __call__(self, *argv: str, input: str | None = None,
                 env: dict[str, str | None] | None = None) -> CliResult:
        runner = CliRunner()
        with runner.isolation(input=input, env={**self.env, **(env or {})}) as (out, err, _):
            try:
                main(list(argv))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            else:
                code = 0
            sys.stdout.flush()
            sys.stderr.flush()
            result = CliResult(code, out.getvalue(), err.getvalue().decode("utf-8"))
        self.results.append(result)
        return result

    def login(self, url: str, token: str = SENTINEL_TOKEN) -> CliResult:
        result = self("login", "--url", url, "--token-stdin", input=token + "\n")
        assert result.exit_code == 0, result.stderr
        return result


def assert_token_absent(results: list[CliResult], root: Path) -> None:
    """The token may only ever be in the stored-login file."""
    for result in results:
        assert SENTINEL_TOKEN not in result.out
        assert SENTINEL_TOKEN not in result.stderr
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            if name == "credentials.json" or not path.is_file():  # a FIFO holds nothing
                continue
            assert SENTINEL_TOKEN.encode() not in path.read_bytes(), path
