"""``--write``: only the instructions value changes, whatever spelling the judge file uses."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from introspection_cli.alignment.candidates import tidy
from introspection_cli.alignment.yaml_block import (
    UnsupportedJudgeFile,
    literal_block,
    replace_instructions,
)
from introspection_cli.diagnostics import Severity
from introspection_cli.recipe.checker import load_recipe
from introspection_cli.recipe.yamlload import load_mapping

_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
_line = st.lists(_word, min_size=1, max_size=6).map(" ".join)
_lines = st.lists(_line, min_size=1, max_size=4)


@st.composite
def old_values(draw: st.DrawFn, nl: str) -> tuple[str, str]:
    """(the instructions value as written after ``instructions:``, a comment it carries)."""
    lines = draw(_lines)
    comment = draw(st.sampled_from(["", "  # the rubric", " #c"]))
    style = draw(st.sampled_from(["|", "|-", "|+", ">", ">-", "plain", "'", '"', "plain2"]))
    if style in ("plain", "'", '"'):
        text = " ".join(lines)
        quoted = {"plain": text, "'": f"'{text} it''s'", '"': f'"{text} \\"q\\"\\n"'}[style]
        return f" {quoted}{comment}{nl}", comment
    if style == "plain2":  # a plain scalar over several lines
        return " " + f"{nl}  ".join(lines) + comment + nl, comment
    indent = " " * draw(st.integers(1, 6))
    blank = draw(st.sampled_from(["", nl]))
    body = "".join(f"{indent}{line}{nl}" + (blank if i == 0 else "")
                   for i, line in enumerate(lines))
    return f" {style}{comment}{nl}{body}", comment


@st.composite
def judge_files(draw: st.DrawFn) -> tuple[str, str, str, str]:
    """(prefix, instructions value, suffix, its comment) of a judge file in some spelling."""
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    value, comment = draw(old_values(nl))
    nested = " " * draw(st.sampled_from([2, 4]))
    llm = f"llm:{nl}{nested}provider: openai{nl}{nested}model: m   # model{nl}"
    head = draw(st.sampled_from(["", f"# a judge{nl}", f"---{nl}"]))
    prefix = f"{head}name: j{nl}description: \"d: x\"{nl}"
    tail = draw(st.sampled_from(["", f"{nl}# trailing comment{nl}", f"# after{nl}"]))
    if draw(st.booleans()):
        prefix += llm
        suffix = tail
    else:
        suffix = tail + llm
    return prefix + "instructions:", value, suffix, comment


_rubrics = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp"),
                                 exclude_characters="\ufeff\x85"),
                   min_size=1, max_size=80).map(lambda text: text.replace("|", "\n"))


@example(spelling=("name: j\ninstructions:", " |  # c\n  old\n", "\n# trailing\n", "  # c"),
         rubric="  indented first line|second")
@given(spelling=judge_files(), rubric=_rubrics)
def test_only_the_instructions_value_changes(spelling: tuple[str, str, str, str],
                                             rubric: str) -> None:
    prefix, value, suffix, comment = spelling
    new_rubric = tidy(rubric.replace("\u2028", " ")) or "x\n"
    original = (prefix + value + suffix).encode()
    before = load_mapping(original.decode()).data
    new = replace_instructions(original, new_rubric).decode()
    assert new.startswith(prefix) and new.endswith(suffix)
    middle = new[len(prefix):len(new) - len(suffix)]
    assert middle.startswith(" |") and comment in middle.split("\n")[0]
    assert middle.endswith("\n")  # the block ends its own last line; the suffix follows
    if "\r\n" in prefix:  # the new block keeps the file's CR LF line endings
        assert "\n" not in new.replace("\r\n", "")
    else:
        assert "\r" not in new
    assert load_mapping(new).data == {**before, "instructions": new_rubric}


@example(rubric=" starts with a space", indent=2, key_column=0, breaks=1)
@given(rubric=_rubrics, indent=st.integers(1, 8), key_column=st.integers(0, 4),
       breaks=st.integers(0, 3))
def test_a_literal_block_reads_back_as_its_text(rubric: str, indent: int, key_column: int,
                                                breaks: int) -> None:
    body = tidy(rubric.replace("\u2028", " ")).rstrip("\n") or "x"
    value = body + "\n" * breaks
    indicator, content = literal_block(value, key_column + indent, key_column, "\n")
    document = " " * key_column + "k: " + indicator + "\n" + content + " " * key_column + "z: 1\n"
    assert load_mapping(document).data == {"k": value, "z": 1}


def _check_errors(judge: str) -> list[str]:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "SYSTEM.md").write_text("You help.\n")
        (root / "judges").mkdir()
        (root / "judges" / "j.yaml").write_bytes(judge.encode())
        _, diagnostics = load_recipe(root)
    return [d.code for d in diagnostics if d.severity is Severity.ERROR]


@given(spelling=judge_files(), rubric=_rubrics)
def test_check_is_clean_after_the_write(spelling: tuple[str, str, str, str],
                                        rubric: str) -> None:
    prefix, value, suffix, _ = spelling
    original = prefix + value + suffix
    if "llm:" not in original:
        return
    assert _check_errors(original) == []
    new_rubric = tidy(rubric.replace("\u2028", " ")) or "x\n"
    assert _check_errors(replace_instructions(original.encode(), new_rubric).decode()) == []


def test_a_bom_and_a_missing_final_newline_are_kept() -> None:
    data = "\ufeffname: j\ninstructions: old".encode()
    assert replace_instructions(data, "new\n") == "\ufeffname: j\ninstructions: |\n  new\n".encode()


@pytest.mark.parametrize("text", [
    "{name: j, instructions: x}\n",
    "name: j\ninstructions: &a x\nother: *a\n",
    "name: j\ninstructions: !!str x\n",
    "name: j\n",
    "- a list\n",
])
def test_spellings_it_cannot_rewrite_exactly_are_refused(text: str) -> None:
    with pytest.raises(UnsupportedJudgeFile):
        replace_instructions(text.encode(), "new\n")
