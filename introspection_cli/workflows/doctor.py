"""``introspection doctor``: what a run would use, and what is wrong with it, without a model call.

Each topic (Python, packages, each provider's key and endpoint, the runtime
login, the cache, the exposure ledger, the price table, the browser) is one
:class:`Finding`: ``ok``, a ``note`` (worth knowing, nothing to fix) or a
``problem`` with the fix. Secrets are never read into a finding: a key or a
token is only ever said to be set or not, and URLs are shown masked
(:func:`~introspection_cli.runtime.credentials.mask_url`).

The model SDKs are never imported: package versions come from the installed
metadata, and the runtime is asked one bounded ``GET /v1/whoami`` through the
runtime client.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from introspection_cli.errors import ConfigError
from introspection_cli.evaluation.providers import API_KEY_ENV, BASE_URL_ENV, resolve_endpoint
from introspection_cli.runtime.credentials import mask_url
from introspection_cli.workflows.doctor_findings import DoctorReport, Finding

DISTRIBUTION = "introspection-cli"


def run_doctor(environ: Mapping[str, str]) -> DoctorReport:
    """Look at everything a run would use (the runtime and the browser through
    :mod:`introspection_cli.workflows.doctor_probes`)."""
    from introspection_cli.workflows.doctor_probes import browser_finding, runtime_finding

    findings = [python_finding(), packages_finding(), *provider_findings(environ),
                runtime_finding(environ), *cache_findings(environ), prices_finding(environ),
                browser_finding(environ)]
    return DoctorReport(tuple(findings))


def python_finding() -> Finding:
    version = platform.python_version()
    return Finding("python", "ok", f"Python {version} ({sys.executable})",
                   facts={"version": version, "executable": sys.executable,
                          "implementation": platform.python_implementation()})


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def packages_finding() -> Finding:
    """This package's version and each of its dependencies', read from installed metadata
    (nothing is imported)."""
    from importlib import metadata

    try:
        own = metadata.version(DISTRIBUTION)
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return Finding("packages", "problem", f"{DISTRIBUTION} is not installed as a package",
                       fix="install it: pip install . (or pip install -e . in a checkout)")
    versions: dict[str, str | None] = {DISTRIBUTION: own}
    for requirement in requirements:
        match = _NAME.match(requirement)
        if match is None or "extra ==" in requirement:  # an optional extra's, not ours
            continue
        try:
            versions[match.group(0)] = metadata.version(match.group(0))
        except metadata.PackageNotFoundError:
            versions[match.group(0)] = None
    missing = sorted(name for name, version in versions.items() if version is None)
    shown = f"{DISTRIBUTION} {own}; needs " + ", ".join(
        f"{name} {version or 'MISSING'}" for name, version in versions.items()
        if name != DISTRIBUTION)
    if missing:
        return Finding("packages", "problem", f"missing: {', '.join(missing)} ({shown})",
                       fix=f"reinstall: pip install --force-reinstall {DISTRIBUTION}",
                       facts=versions)
    return Finding("packages", "ok", shown, facts=versions)


def provider_findings(environ: Mapping[str, str]) -> list[Finding]:
    """Per provider, whether its API key is set (never what it is) and where calls go; a
    problem when no provider has a key, since then no judge can run."""
    has_key = {p: bool(environ.get(name, "").strip()) for p, name in API_KEY_ENV.items()}
    findings = [_provider_finding(provider, has_key[provider], environ)
                for provider in API_KEY_ENV]
    if not any(has_key.values()):
        names = " or ".join(f"{name}=..." for name in API_KEY_ENV.values())
        findings.append(Finding(
            "model keys", "problem", "no provider API key is set: judges eval and certify "
                                     "cannot call a model",
            fix=f"export {names}, for the provider your judges' llm.provider names"))
    return findings


def _provider_finding(provider: str, has_key: bool, environ: Mapping[str, str]) -> Finding:
    key_env, base_env = API_KEY_ENV[provider], BASE_URL_ENV[provider]
    endpoint = mask_url(resolve_endpoint(provider, environ))
    where = base_env if environ.get(base_env) else "the default"
    facts = {"key_variable": key_env, "key_set": has_key, "base_url_variable": base_env,
             "base_url_set": bool(environ.get(base_env)), "endpoint": endpoint}
    parts = urlsplit(resolve_endpoint(provider, environ))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return Finding(provider, "problem", f"{base_env} is {endpoint!r}, not an http(s) URL",
                       fix=f"set {base_env} to the server's base URL, or unset it", facts=facts)
    if has_key:
        return Finding(provider, "ok", f"{key_env} is set; calls go to {endpoint} ({where})",
                       facts=facts)
    return Finding(provider, "note", f"{key_env} is not set: judges whose llm.provider is "
                                     f"{provider} cannot run (calls would go to {endpoint}, "
                                     f"{where})", facts=facts)


def cache_findings(environ: Mapping[str, str]) -> list[Finding]:
    """Where verdicts, batches and the exposure ledger live, and whether they can be written."""
    from introspection_cli.evaluation.cache_dir import CACHE_DIR_ENV, default_cache_dir
    from introspection_cli.evaluation.ledger import LEDGER_FILE

    directory = default_cache_dir(environ)
    where = CACHE_DIR_ENV if environ.get(CACHE_DIR_ENV) else "the platform's default"
    facts = {"directory": str(directory), "from_variable": bool(environ.get(CACHE_DIR_ENV))}
    problem = _unwritable(directory)
    cache = (Finding("cache", "problem", f"{directory} ({where}) {problem}",
                     fix=f"set {CACHE_DIR_ENV} to a directory you can write (the cache only "
                         "saves money, but without it every run pays again)", facts=facts)
             if problem else Finding("cache", "ok", f"{directory} ({where})", facts=facts))
    ledger = directory / LEDGER_FILE
    written = ledger.is_file()
    exposure = Finding(
        "exposure", "ok" if written else "note",
        f"{ledger}" + ("" if written else " (not written yet: no judges eval or certify has "
                                          "run with this cache)"),
        facts={"ledger": str(ledger), "exists": written})
    return [cache, exposure]


def _unwritable(directory: Path) -> str | None:
    """Why files cannot be made in ``directory`` (or the nearest part of it that exists)."""
    for path in [directory, *directory.parents]:
        if not os.path.lexists(path):
            continue
        if not path.is_dir():
            return f"cannot be made: {path} is not a directory"
        if not os.access(path, os.W_OK | os.X_OK):
            return f"cannot be written: {path} is not writable"
        return None
    return None


def prices_finding(environ: Mapping[str, str]) -> Finding:
    """The price table a run would read, and whether it parses."""
    from introspection_cli.config_dir import config_dir
    from introspection_cli.pricing import PRICES_ENV, load_prices, prices_path

    path, named = prices_path(environ, config_dir(environ))
    facts: dict[str, Any] = {"path": str(path), "from_variable": named}
    try:
        table = load_prices(environ, config_dir(environ))
    except ConfigError as exc:
        return Finding("prices", "problem", str(exc),
                       fix=f"fix the table (docs/eval.md shows one), or unset {PRICES_ENV}"
                       if named else "fix the table (docs/eval.md shows one), or remove it",
                       facts={**facts, "found": path.exists(), "parses": False})
    if table.source is None:
        return Finding("prices", "note", f"no price table at {path}: reports show tokens, "
                                         "not cost (docs/eval.md shows how to write one)",
                       facts={**facts, "found": False, "parses": None})
    return Finding("prices", "ok", f"{path}: {len(table.prices)} model(s) priced",
                   facts={**facts, "found": True, "parses": True,
                          "models": sorted(table.prices)})
