"""The forced verdict tool every judge request carries: its name, description and schema.

A module of its own, standard library only, so that the judge fingerprint (which
``check`` and ``judges status`` compute) can name the tool without importing the
reply parsing or the provider layer.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

# The fixture module's tuple (the same three, in the same order): the outcome types'
# module costs ~3 ms to import and `judges status` needs none of them.
from introspection_cli.fixture.codes import VERDICTS

VERDICT_TOOL_NAME = "submit_verdict"
VERDICT_TOOL_DESCRIPTION = (
    "Submit your evaluation: first your reasoning, then the verdict. Call this exactly once."
)
#: ``reasoning`` comes first on purpose: the model writes its analysis before the verdict.
VERDICT_TOOL_SCHEMA: Mapping[str, Any] = MappingProxyType({
    "type": "object",
    "properties": {
        "reasoning": {
            "type": "string",
            "description": "Your step-by-step analysis of the conversation against the "
                           "instructions, written before you decide.",
        },
        "verdict": {
            "type": "string",
            "enum": list(VERDICTS),
            "description": "pass, fail, or not_applicable when the instructions do not apply.",
        },
    },
    "required": ["reasoning", "verdict"],
    "additionalProperties": False,
})
