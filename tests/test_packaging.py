"""The built wheel carries the JSON Schemas and finds them when installed."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import REPO


def test_wheel_ships_schemas_and_installed_package_finds_them(tmp_path: Path) -> None:
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "dist"), str(REPO)], capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stderr
    wheel = next((tmp_path / "dist").glob("introspection_cli-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    expected = {"judge", "agent", "skill", "judge-fixture", "eval-report", "eval-report-v1",
                "eval-report-v2", "certificate"}
    shipped = {Path(n).name.removesuffix(".schema.json") for n in names
               if n.startswith("introspection_cli/schemas/")}
    assert expected <= shipped
    # The labelling app's page and the shared transcript renderer: no build step, no CDN.
    assert {"introspection_cli/labelling/app/static/index.html",
            "introspection_cli/labelling/app/static/app.js",
            "introspection_cli/labelling/app/static/app.css",
            "introspection_cli/webui/transcript.js",
            "introspection_cli/webui/transcript.css",
            "introspection_cli/reporting/assets/report.css",
            "introspection_cli/reporting/assets/report.js",
            # judges align's optimizer prompt, rendered from the installed package.
            "introspection_cli/alignment/prompts/system.j2",
            "introspection_cli/alignment/prompts/user.j2"} <= set(names)
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    # Run from an unrelated directory so the source tree cannot be imported instead.
    code = ("import json, introspection_cli.resources as r; "
            "print(r.schemas_dir()); print(json.dumps(r.load_schema('judge')['title']))")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
                            check=False)
    assert result.returncode == 0, result.stderr
    schemas_dir, title = result.stdout.splitlines()
    assert Path(schemas_dir) == site / "introspection_cli" / "schemas"
    assert json.loads(title).startswith("introspection judge")
