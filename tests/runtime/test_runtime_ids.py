"""Ids-file parsing: properties over generated files, and the error cases."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from introspection_cli.errors import UsageError
from introspection_cli.runtime.ids import parse_ids

conversation_ids = st.text(
    st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="#"),
    min_size=1, max_size=12,
)
comments = st.sampled_from(["", "# a comment", "   ", "\t# indented comment"])


@given(st.lists(conversation_ids, min_size=1, max_size=30),
       st.lists(comments, min_size=30, max_size=30), st.sampled_from(["\n", "\r\n"]))
def test_ids_come_back_distinct_in_file_order(ids: list[str], noise: list[str],
                                               newline: str) -> None:
    lines: list[str] = []
    for conversation_id, extra in zip(ids, noise, strict=False):
        lines += [extra, f"  {conversation_id}  # trailing note" if extra else conversation_id]

    parsed = parse_ids(newline.join(lines))

    assert parsed.ids == list(dict.fromkeys(ids))
    assert parsed.duplicates == list(dict.fromkeys(i for n, i in enumerate(ids) if i in ids[:n]))


@pytest.mark.parametrize(("text", "message"), [
    ("", "no conversation ids"),
    ("# only a comment\n\n", "no conversation ids"),
    ("conv_1 conv_2\n", "is not one conversation id"),
])
def test_bad_ids_files(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_ids(text)


def test_any_number_of_ids_is_fine_and_repeats_are_listed_once() -> None:
    text = "".join(f"conv_{n}\n" for n in range(1000)) * 2

    parsed = parse_ids(text)

    assert parsed.ids == [f"conv_{n}" for n in range(1000)]
    assert parsed.duplicates == parsed.ids
