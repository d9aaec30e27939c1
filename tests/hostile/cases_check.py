"""Hostile recipe trees for ``introspection check``: one :class:`Case` per row of the table.

Each builder makes its input under the test's tmp dir and returns the ``check``
arguments (run with that dir as the working directory). Big inputs are
generated here, never committed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.hostile.recipes import (
    JUDGE,
    RECIPE,
    SKILL,
    base_recipe,
    outside_dir,
    valid_row_line,
    write_calibration,
    write_judge,
)

MB = 1024 * 1024


@dataclass(frozen=True)
class Case:
    """One hostile input and what ``check --format json`` must say about it.

    ``codes``: every one of these diagnostic codes must be reported (others may
    be too); ``positions``: (code, line, column) triples that must be reported;
    ``exit_code`` per SPEC §3; ``honour_permissions``: run the child so that
    file modes apply to it (for unreadable-file cases). No message may exceed
    2,000 characters (a message must not echo the input).
    """

    id: str
    build: Callable[[Path], list[str]]
    exit_code: int
    codes: frozenset[str] = frozenset()
    positions: frozenset[tuple[str, int, int]] = frozenset()
    honour_permissions: bool = False
    json_output: bool = True


Content = str | bytes | Callable[[], str | bytes]


def _bytes(content: Content) -> bytes:
    """Big inputs are passed as functions, so they are built only when their case runs."""
    value = content() if callable(content) else content
    return value if isinstance(value, bytes) else value.encode()


def _judge_case(text: Content, name: str = "bad") -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        root = base_recipe(tmp)
        path = root / "judges" / f"{name}.yaml"
        path.write_bytes(_bytes(text))
        return [RECIPE]
    return build


def _file_case(relative: str, data: Content) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        root = base_recipe(tmp)
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_bytes(data))
        return [RECIPE]
    return build


def calibration_case(data: Content) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        write_calibration(base_recipe(tmp), _bytes(data))
        return [RECIPE]
    return build


# --- YAML bombs and nesting -------------------------------------------------------------------

BILLION_LAUGHS = "\n".join(
    ["name: bad", 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]) + "\n"
# Quadratic: 3,000 aliases to one 3,000-item list (9 million nodes, a 40 kB file).
QUADRATIC = ("name: bad\nbig: &big [" + ",".join(["x"] * 3000) + "]\nmany: ["
             + ",".join(["*big"] * 3000) + "]\n")


def quadratic_text() -> str:
    """One 512 kB string aliased 100,000 times (the file stays under 1 MiB)."""
    return ("name: bad\ntext: &t " + "y" * (MB // 2) + "\nmany: [" + ",".join(["*t"] * 100_000)
            + "]\n")


FLOW_NESTING = "name: bad\ninstructions: " + "[" * 10_000 + "]" * 10_000 + "\n"
BLOCK_SEQUENCE_NESTING = "name: bad\ninstructions:\n" + "- " * 10_000 + "x\n"
BLOCK_MAPPING_NESTING = "name: bad\n" + "".join(" " * i + f"k{i}:\n" for i in range(300)) \
    + " " * 300 + "x: 1\n"


def huge_instructions() -> str:
    return JUDGE.format(name="bad").replace("instructions: |",
                                            "instructions: |\n  " + "word " * (4 * MB))


def keys_under_the_cap() -> str:
    """About 45,000 unknown keys in just under 1 MiB: the most diagnostics one judge can yield."""
    return "name: bad\n" + "".join(f"key{i}: v\n" for i in range(45_000))


def many_keys() -> str:
    return "name: bad\n" + "".join(f"key{i}: value{i}\n" for i in range(1_000_000))



YAML_CASES = [
    Case("billion-laughs", _judge_case(BILLION_LAUGHS), 1, frozenset({"yaml-too-large"})),
    Case("quadratic-aliases", _judge_case(QUADRATIC), 1, frozenset({"yaml-too-large"})),
    # Aliases share one value, so 100,000 references to 1 MB cost 100,000 pointers, not 100 GB.
    Case("quadratic-text-alias", _judge_case(quadratic_text), 1, frozenset({"unknown-key"})),
    Case("flow-nesting-10000", _judge_case(FLOW_NESTING), 1, frozenset({"yaml-too-deep"})),
    Case("block-sequence-nesting-10000", _judge_case(BLOCK_SEQUENCE_NESTING), 1,
         frozenset({"yaml-too-deep"})),
    Case("block-mapping-nesting-300", _judge_case(BLOCK_MAPPING_NESTING), 1,
         frozenset({"yaml-too-deep"})),
    Case("agent-flow-nesting-10000",
         _file_case("agents/deep.yaml", ("name: deep\nx: " + "[" * 10_000).encode()), 1,
         frozenset({"yaml-too-deep"})),
    Case("skill-front-matter-bomb",
         _file_case("skills/bomb/SKILL.md", ("---\n" + BILLION_LAUGHS.replace("bad", "bomb")
                                             + "---\n").encode()), 1,
         frozenset({"yaml-too-large"})),
    Case("judge-20mb-instructions", _judge_case(huge_instructions), 1,
         frozenset({"file-too-large"})),
    Case("judge-20mb-many-keys", _judge_case(many_keys), 1, frozenset({"file-too-large"})),
    Case("judge-1mib-many-keys", _judge_case(keys_under_the_cap), 1, frozenset({"unknown-key"})),
    Case("skill-front-matter-2mb", _file_case(
        "skills/big/SKILL.md", lambda: ("---\nname: big\ndescription: " + "d" * (2 * MB)
                                        + "\n---\n").encode()), 1,
         frozenset({"file-too-large"}), positions=frozenset({("file-too-large", 2, 1)})),
    Case("skill-body-10mb", _file_case(
        "skills/lookup/SKILL.md", lambda: (SKILL.format(name="lookup") + "body\n" * (2 * MB))
        .encode()), 0),
    Case("system-17mb", _file_case("SYSTEM.md", lambda: b"You are helpful.\n" * MB), 1,
         frozenset({"file-too-large"})),
]

# --- Encodings, BOM, CRLF -----------------------------------------------------------------------

BINARY = bytes(range(256)) * 64
CRLF_JUDGE_WITH_TYPO = JUDGE.format(name="bad").replace("llm:", "llm:\n  modle: x") \
    .replace("\n", "\r\n")

ENCODING_CASES = [
    Case("binary-judge", _judge_case(BINARY), 1, frozenset({"encoding"})),
    Case("binary-agent", _file_case("agents/bin.yaml", BINARY), 1, frozenset({"encoding"})),
    Case("latin1-skill", _file_case("skills/lookup/SKILL.md",
                                    SKILL.format(name="lookup").replace("invoice", "facture é")
                                    .encode("latin-1")), 1, frozenset({"encoding"})),
    Case("latin1-system", _file_case("SYSTEM.md", "Vous êtes un assistant.\n".encode("latin-1")),
         1, frozenset({"encoding"}), positions=frozenset({("encoding", 1, 6)})),
    Case("binary-calibration", calibration_case(BINARY), 1, frozenset({"fixture-json"})),
    Case("nul-bytes-judge", _judge_case("name: bad\x00\n"), 1, frozenset({"yaml-syntax"})),
    Case("bom-judge", _judge_case(b"\xef\xbb\xbf" + JUDGE.format(name="bad").encode()), 1,
         frozenset({"bom"}), positions=frozenset({("bom", 1, 1)})),
    Case("bom-calibration", calibration_case(b"\xef\xbb\xbf" + valid_row_line() + b"\n"), 1,
         frozenset({"fixture-json"})),
    Case("crlf-judge-valid", _judge_case(JUDGE.format(name="bad").replace("\n", "\r\n")), 0),
    Case("crlf-judge-positions", _judge_case(CRLF_JUDGE_WITH_TYPO), 1,
         positions=frozenset({("unknown-key", 4, 3)})),
    Case("crlf-skill-valid", _file_case("skills/lookup/SKILL.md",
                                        SKILL.format(name="lookup").replace("\n", "\r\n")
                                        .encode()), 0),
    Case("crlf-agent-unknown-skill", _file_case("agents/support.yaml",
                                                b"name: support\r\nskills:\r\n  - nope\r\n"), 1,
         positions=frozenset({("unknown-skill", 3, 5)})),
    Case("crlf-calibration-valid", calibration_case(
        valid_row_line("conv_1") + b"\r\n" + valid_row_line("conv_2") + b"\r\n"), 0),
]


# --- Symlinks ---------------------------------------------------------------------------------

def _symlink_case(link: str, target: str | Callable[[Path], Path],
                  extra: Callable[[Path], None] | None = None) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        root = base_recipe(tmp)
        if extra:
            extra(root)
        path = root / link
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target(tmp) if callable(target) else target, path)
        return [RECIPE]
    return build


def _outside_skill(tmp: Path) -> Path:
    skill = outside_dir(tmp) / "stolen"
    skill.mkdir()
    (skill / "SKILL.md").write_text(SKILL.format(name="stolen"))
    return skill


def _outside_file(name: str, text: str) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        path = outside_dir(tmp) / name
        path.write_text(text)
        return path
    return make


def _judge_x(root: Path) -> None:
    write_judge(root, "x")


SYMLINK_CASES = [
    Case("skills-loop-to-parent", _symlink_case("skills/a", ".."), 0),
    Case("skills-loop-to-self", _symlink_case("skills/lookup/again", "."), 0),
    Case("skills-nested-loop", _symlink_case("skills/deep/er/loop", "../.."), 0),
    Case("agents-dir-loop", _symlink_case("agents/loop", "."), 0),
    Case("judge-self-loop", _symlink_case("judges/loop.yaml", "loop.yaml"), 1,
         frozenset({"broken-symlink"})),
    Case("skill-dir-outside", _symlink_case("skills/stolen", _outside_skill), 1,
         frozenset({"symlink-outside"})),
    Case("skill-file-outside", _symlink_case(
        "skills/other/SKILL.md", _outside_file("SKILL.md", SKILL.format(name="other"))), 1,
         frozenset({"symlink-outside"})),
    Case("judge-outside", _symlink_case("judges/x.yaml",
                                        _outside_file("x.yaml", JUDGE.format(name="x"))), 1,
         frozenset({"symlink-outside"})),
    Case("agent-outside", _symlink_case("agents/x.yaml", _outside_file("x.yaml", "name: x\n")),
         1, frozenset({"symlink-outside"})),
    Case("system-outside", lambda tmp: _replace_system_with_link(tmp), 1,
         frozenset({"symlink-outside"})),
    Case("calibration-outside", _symlink_case(
        "judges/x.calibration.jsonl", _outside_file("x.jsonl", ""), extra=_judge_x), 1,
         frozenset({"symlink-outside"})),
    Case("judge-to-device", _symlink_case("judges/zero.yaml", "/dev/zero"), 1,
         frozenset({"symlink-outside"})),
    Case("dangling-judge", _symlink_case("judges/gone.yaml", "missing.yaml"), 1,
         frozenset({"broken-symlink"})),
    Case("dangling-skill", _symlink_case("skills/gone/SKILL.md", "missing.md"), 1,
         frozenset({"broken-symlink"})),
    Case("dangling-skill-dir", _symlink_case("skills/gone", "missing-dir"), 0),
    Case("judge-link-inside-recipe", _symlink_case(
        "judges/shared.yaml", "../shared/shared.yaml",
        extra=lambda root: _write(root / "shared" / "shared.yaml", JUDGE.format(name="shared"))),
         0),
]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _replace_system_with_link(tmp: Path) -> list[str]:
    root = base_recipe(tmp)
    (root / "SYSTEM.md").unlink()
    os.symlink(_outside_file("SYSTEM.md", "You are nobody.\n")(tmp), root / "SYSTEM.md")
    return [RECIPE]
