"""What ``introspection init`` writes: a minimal recipe that ``check`` passes.

The two judges are the ones docs/format.md shows as complete examples (a test
keeps them the same): one gated, one that applies to every conversation. Each
gets an empty calibration file, so ``conversations get --append-to`` and
``judges label`` have somewhere to put rows from the first export on.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ScaffoldFile:
    """One file ``init`` writes: its path inside the recipe (``/``-separated), its text,
    and what it is, for the listing ``init`` prints."""

    path: str
    text: str
    about: str


GATED_JUDGE = "billing-request-handling"
UNGATED_JUDGE = "useful-resolution"

_SYSTEM = """\
# Support assistant

Replace this text with your agent's system prompt. Every recipe has a SYSTEM.md;
the judges in judges/ grade conversations of the agent it describes.

You are the customer support assistant for a subscription software company. You
help customers with billing (invoices, duplicate charges, refunds) and with
questions about their account. Always give the customer a clear next step.
"""

_GATED = f"""\
name: {GATED_JUDGE}
description: "Did the assistant handle a billing request correctly?"

# The gate: the judge runs only on conversations where a user message mentions
# a refund or an invoice; on any other, no model is called (outcome `gated`).
on:
  - event: message
    match:
      role: user
      text: /refund|invoice/i

llm:
  provider: openai
  model: gpt-5.6-luna

instructions: |
  Grade the assistant's handling of the billing request.

  Return pass when the response follows the billing policy, asks only for
  information needed to proceed, and gives a clear next step.

  Return fail when it makes an unsupported promise, exposes sensitive payment
  information, or leaves the user without a useful next step.

  Return not_applicable when the matched message is not actually about billing.
"""

_UNGATED = f"""\
name: {UNGATED_JUDGE}
description: "Did the response move the request toward a useful resolution?"

# No `on:` gate: the judge applies to every conversation.
llm:
  provider: openai
  model: gpt-5.6-luna

instructions: |
  Grade the assistant's response to the user's request.

  Return pass when it answers the request, asks for information genuinely
  needed to proceed, or clearly explains an appropriate next step.

  Return fail when it avoids the request, makes an unsupported claim, or leaves
  the user without a useful next step.

  Return not_applicable when the conversation contains no assistant response
  that can be graded.
"""

_PRE_COMMIT = """\
# Runs `introspection check` on every commit, with the introspection installed in
# the environment that runs pre-commit (`pip install pre-commit && pre-commit
# install`). pre-commit reads this file at the root of your git repository: if
# this recipe is not at the root, add the hook below to the root's
# .pre-commit-config.yaml instead; it checks every recipe in the repository.
repos:
  - repo: local
    hooks:
      - id: introspection-check
        name: introspection check
        entry: introspection check
        language: system
        always_run: true
        pass_filenames: false
        require_serial: true
"""

#: Every file, in the order they are written and listed.
SCAFFOLD: tuple[ScaffoldFile, ...] = (
    ScaffoldFile("SYSTEM.md", _SYSTEM, "the agent's system prompt: replace it with yours"),
    ScaffoldFile(f"judges/{GATED_JUDGE}.yaml", _GATED, "a judge with a gate"),
    ScaffoldFile(f"judges/{GATED_JUDGE}.calibration.jsonl", "", "its labelled rows (none yet)"),
    ScaffoldFile(f"judges/{UNGATED_JUDGE}.yaml", _UNGATED, "a judge of every conversation"),
    ScaffoldFile(f"judges/{UNGATED_JUDGE}.calibration.jsonl", "",
                 "its labelled rows (none yet)"),
    ScaffoldFile(".pre-commit-config.yaml", _PRE_COMMIT,
                 "a pre-commit hook running `introspection check`"),
)
