"""A proposed rubric made tidy, and the checks that refuse it before any evaluation.

The optimizer's text is tidied the way a person would save it (line breaks as
LF, no trailing spaces, no blank lines at either end, one final line break),
so that the same rubric always has the same fingerprint and writes back as a
plain ``|`` block. It is refused, without calling the judge, when it is empty,
unchanged, over :data:`MAX_INSTRUCTIONS` characters, holds a character a YAML
block cannot carry, or quotes a row outside ``train`` (:mod:`.leakage`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from introspection_cli.alignment.keep_rules import RuleCheck
from introspection_cli.alignment.leakage import GuardedRow, find_quote

#: The longest rubric a candidate may be, in characters.
MAX_INSTRUCTIONS = 32_000
_LINE_BREAKS = re.compile(r"\r\n|\r")
# What YAML cannot hold in a block scalar: C0/C1 controls but tab and line feed, DEL,
# surrogates, U+FFFE/U+FFFF, and characters libyaml reads as line breaks (NEL, LS, PS)
# or as a byte order mark.
_UNWRITABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufeff\ufffe\uffff"
                         "\u2028\u2029]")


def tidy(text: str) -> str:
    """``text`` with LF line breaks, no trailing whitespace, no blank edge lines, and one
    final line break (empty text stays empty)."""
    lines = [line.rstrip() for line in _LINE_BREAKS.sub("\n", text).split("\n")]
    body = "\n".join(lines).strip("\n")
    return body + "\n" if body.strip() else ""


def refusal(candidate: str, current: str, guarded: Sequence[GuardedRow]) -> RuleCheck | None:
    """Why ``candidate`` (tidied) is refused before evaluation; None when it may be evaluated."""
    if not candidate.strip():
        return RuleCheck("not-empty", False, "the candidate rubric is empty")
    if candidate == tidy(current):
        return RuleCheck("changes-something", False,
                         "the candidate is the current rubric (nothing changed)")
    if len(candidate) > MAX_INSTRUCTIONS:
        return RuleCheck("length", False, f"the candidate has {len(candidate):,} characters, "
                         f"over the {MAX_INSTRUCTIONS:,} a rubric may have")
    bad = _UNWRITABLE.search(candidate)
    if bad is not None:
        return RuleCheck("writable", False, f"the candidate holds the character "
                         f"U+{ord(bad.group()):04X}, which a judge file cannot carry")
    quote = find_quote(candidate, guarded)
    if quote is not None:
        return RuleCheck("no-quote", False, quote.message)
    return None
