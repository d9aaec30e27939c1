"""What ``certify``, ``certify --verify``, ``estimate`` and ``eval --dry-run`` hand their
renderers: each result's JSON document, and what its text needs beside it.

The values at the bottom of the reporting layers, next to the eval report's
:mod:`.model`; the workflows build them, :mod:`.registry` renders them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from introspection_cli.certification.power import PowerPlan

#: A certification's plan with power, and where each rate it assumes comes from.
Plan = tuple[PowerPlan, dict[str, str]]


@dataclass(frozen=True, slots=True)
class CertifyOutput:
    """``judges certify``: each judge's JSON payload with its plan, and the document printed
    as JSON (one judge's payload, or ``{"judges": [...], ...}`` with ``--all``)."""

    judges: tuple[tuple[Mapping[str, Any], Plan], ...]
    document: Mapping[str, Any]

    def as_json(self) -> Mapping[str, Any]:
        return self.document


@dataclass(frozen=True, slots=True)
class VerifyOutput:
    """``judges certify --verify``: each judge's verification, and the JSON document."""

    judges: tuple[Mapping[str, Any], ...]
    document: Mapping[str, Any]

    def as_json(self) -> Mapping[str, Any]:
        return self.document


@dataclass(frozen=True, slots=True)
class EstimateOutput:
    """``judges estimate``'s corrected rate (its JSON payload); ``gated_judge``: whether the
    judge has a gate, whose misses the text then counts."""

    payload: Mapping[str, Any]
    gated_judge: bool = False

    def as_json(self) -> Mapping[str, Any]:
        return self.payload


@dataclass(frozen=True, slots=True)
class DryRunOutput:
    """``judges eval --dry-run``: the requests by judge and model, and the totals (its JSON
    body); ``batch``: priced as a ``--batch`` run."""

    body: Mapping[str, Any]
    batch: bool = False

    def as_json(self) -> Mapping[str, Any]:
        return self.body
