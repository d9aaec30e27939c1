"""Each diagnostic code's severity and help text, copied from docs/rules.md and
docs/calibration.md by fixtures/tools/make_rule_help.py: do not edit by hand.
"""

from __future__ import annotations

#: code -> (default severity, when it is reported, what to do)
RULE_HELP: dict[str, tuple[str, str, str]] = {
    'encoding': ('error',
        'the file is not valid UTF-8 (points at the first bad byte)',
        'save it as UTF-8'),
    'bom': ('error',
        'the file starts with a UTF-8 byte order mark',
        'save it without a BOM'),
    'file-unreadable': ('error',
        'a file or directory of the recipe cannot be read or listed (permissions, I/O '
        'error); also an unreadable calibration file',
        'fix its permissions'),
    'file-too-large': ('error',
        'a judge or agent file, or SKILL.md front matter, over 1 MiB; SYSTEM.md or '
        'SKILL.md over 16 MiB (not read)',
        'keep recipe files small'),
    'not-a-file': ('error',
        'a directory, FIFO, socket or device where a file is expected (judges/x.yaml/, '
        'agents/a.yaml/, skills/s/SKILL.md/, judges/x.calibration.jsonl/); never opened',
        'replace it with a regular file, or rename or remove it'),
    'symlink-outside': ('error',
        'a judge, agent, SKILL.md, SYSTEM.md or calibration file, a skill directory, or '
        'judges/, agents/, skills/ itself, that is a symbolic link resolving outside '
        'the recipe',
        'copy it into the recipe'),
    'broken-symlink': ('error',
        'a symbolic link where a recipe file is expected that resolves to nothing '
        '(dangling, or a loop of links)',
        'fix or remove the link'),
    'yaml-syntax': ('error',
        "invalid YAML (with the parser's reason and position). Two slips get their own "
        'words: a tab in the indentation ("a tab in the indentation of line 4"), and a '
        'key indented deeper than the key: value line above it, which YAML reads as '
        'part of that value ("line 7 is indented more than line 6"; the hint says which '
        'column to start it in, not to quote a colon)',
        'fix the syntax; quote values containing :'),
    'yaml-empty': ('error',
        'the file (or SKILL.md front matter) is empty or only comments',
        'add the required keys'),
    'yaml-not-mapping': ('error',
        'the document is a list or a single value',
        'write key: value lines'),
    'yaml-duplicate-key': ('error',
        'a key appears twice in one mapping (names both lines)',
        'keep one'),
    'yaml-too-large': ('error',
        'aliases would expand the document past 100,000 nodes ("billion laughs")',
        'remove the aliases'),
    'yaml-recursive-alias': ('error',
        'an alias refers to a node containing it',
        'remove it'),
    'yaml-too-deep': ('error',
        'collections nested deeper than 100 levels (also when the parser itself stops, '
        'at 1,000)',
        'flatten'),
    'yaml-key-type': ('error',
        'a mapping key that is a list or mapping',
        'use a plain key'),
    'yaml-tag': ('error',
        'an explicit tag (!!binary, !custom) other than a matching core tag',
        'remove the tag'),
    'missing-key': ('error',
        'a required key is missing (points at the enclosing mapping)',
        ''),
    'unknown-key': ('error',
        'a key the format does not define, with "did you mean" when one is close; also '
        'a matcher field that the event type does not have (name on a message matcher)',
        ''),
    'wrong-type': ('error',
        'a value of the wrong type (max_output_tokens: lots)',
        ''),
    'invalid-value': ('error',
        'a value outside its allowed set (provider: gemini, event: chat); also a plain '
        'role/status matcher value that can never match (role: User)',
        ''),
    'invalid-name': ('error',
        'a judge, agent or skill name that is not lowercase kebab-case (skills follow '
        'the Agent Skills rules: lowercase letters of any script, digits, single inner '
        'hyphens); a trailing line break counts, so name: | followed by the name on the '
        'next line is invalid',
        ''),
    'empty-value': ('error',
        'a blank description, instructions or model, an empty on: list',
        ''),
    'too-long': ('error',
        'a name over 64 characters (a skill name counted after NFKC normalisation, as '
        'the Agent Skills reference validator skills-ref counts it: ﬃ is 3 characters), '
        'a skill description over 1024, compatibility over 500',
        ''),
    'out-of-range': ('error',
        'temperature outside 0–2 (.nan and .inf included), max_output_tokens below 1',
        ''),
    'name-mismatch': ('error',
        'name differs from the file name',
        'rename one. The hint only offers what ends in a valid judge: it suggests set '
        'name: STEM only when the file name is valid kebab-case (Polite-Tone.yaml with '
        'name: polite-tone is told to rename the file) and a rename only onto a file '
        'that does not exist'),
    'invalid-regex': ('error',
        'a /pattern/flags matcher value whose pattern does not compile (Python regex '
        'module), or that is too large to compile safely (see Regex size limits)',
        'fix or simplify the pattern'),
    'invalid-regex-flag': ('error',
        'flags other than i, m, s, x, or a repeated flag',
        'use only those flags'),
    'regex-without-slashes': ('warning',
        'a plain matcher value that reads like a pattern: it holds |, (?, \\b, \\d, .* '
        'or .+, or starts with ^ or ends with $. Without slashes it is compared as '
        'exact text, so text: password|locked out|reset matches only a message that is '
        'exactly that, and the gate never opens',
        'write the literal the hint shows (/password|locked out|reset/); the hint names '
        'one only when it compiles. To match such text exactly, write an anchored, '
        'escaped regex: /^costs 5\\$$/'),
    'missing-not-applicable': ('warning',
        'an ungated judge whose instructions never mention not_applicable',
        'say when to abstain, or add a gate'),
    'temperature-ignored': ('warning',
        "llm.temperature on a judge whose provider is anthropic: Anthropic's Messages "
        'API takes no sampling parameters since API version 2026-10-21, so judges eval '
        'does not send it',
        'remove temperature, or use provider openai'),
    'yml-extension': ('warning',
        'a judge or agent file named *.yml (still checked). When x.yaml exists beside '
        'x.yml, x.yaml is the one used and x.yml is only checked',
        'rename it to .yaml; beside an x.yaml, merge it into that file and delete it '
        '(the hint never suggests renaming onto a file that exists)'),
    'calibration-orphan': ('error',
        'judges/<x>.calibration.jsonl with no judges/<x>.yaml (or judges/<x>.yml)',
        'rename it or add the judge'),
    'certificate-invalid': ('error',
        'not a certificate: not JSON (the line is named), not UTF-8, a repeated key, '
        'not matching schemas/certificate.schema.json (the JSON path is named), naming '
        'another judge than its file name; or a claim that does not follow: a bound '
        'that is not the bound of its counts at its level by the method its looks call '
        'for (Wilson at the first look, the anytime-valid beta-binomial bound after '
        "earlier looks, with that method's own parameters), low > value or value > "
        'high, more errors than rows, counts its per-row outcomes and the calibration '
        "file's labels do not give, a run the exposure file does not hold, a provider "
        'or model its fingerprint was not made from, a lower bound below its own bar, '
        'or a bar below 0.80 (check --min-bar X lowers that floor)',
        'certify the judge again: introspection judges certify --judge <x> replaces it'),
    'certificate-orphan': ('error',
        'judges/<x>.certificate.json with no judges/<x>.yaml (or .yml)',
        'delete it, or restore the judge it certifies'),
    'certificate-stale': ('warning',
        'the judge or its rows changed since it was certified; the message names what: '
        'instructions, gate, model or parameters (provider, model, temperature, '
        'max_output_tokens), harness (the prompt templates and verdict tool of this '
        'introspection version), rows (a row of the certified split added, removed, '
        'relabelled or re-exported) and exposure (the exposure file no longer says what '
        'the certificate records of the time it was issued). Also every version 1 '
        'certificate, which records neither per-row outcomes nor exposure',
        'certify it again; a certificate that is stale certifies nothing'),
    'exposure-invalid': ('error',
        'a line of judges/<x>.exposure.jsonl that is not a look: not JSON, not matching '
        'schemas/exposure.schema.json, a blank line, a row that is not '
        '[conversation_id, snapshot_hash, expected] or a conversation seen twice in one '
        'look',
        'exposure files are only appended to by introspection: restore the line from '
        'version control'),
    'annotation-invalid': ('error',
        'a line of judges/<x>.annotations.jsonl that is not an annotation: not JSON, '
        "not matching schemas/annotation.schema.json (a rater's name with a control "
        'character or surrounding spaces, a label other than the three, an empty note), '
        'a blank line, or a conversation, hash and rater already on another line',
        'annotation files are written by judges label --rater: restore the line from '
        'version control, or remove it'),
    'annotation-orphan': ('warning',
        "an annotation of a conversation the judge's calibration file does not hold "
        'with that snapshot_hash (re-exported with other text, or removed; it is left '
        'out of every figure), or an annotations file with no judges/<x>.yaml',
        'label the row as it is now, then remove the line; or rename or delete the file'),
    'judge-not-certified': ('error',
        'only with check --require-certified: a judge with a calibration file and no '
        "valid certificate (none, stale or invalid), a valid one whose test rows' "
        'exposure is not clean and was not accepted with judges certify '
        '--accept-exposure "REASON", or a valid one made with a --max-error-rate above '
        "0.05 (certify's default; the error is on the certificate)",
        'certify it: introspection judges certify --judge <x>, on fresh test rows if '
        'its exposure is not clean, with the default --max-error-rate'),
    'file-ignored': ('warning',
        'a file or directory inside the recipe that no rule reads but that looks meant '
        'to be read (the entries below)',
        'rename or move it as the hint says'),
    'leftover-temp-file': ('warning',
        'anywhere in the recipe (except .git/, node_modules/, __pycache__/): a file '
        'named .<file>.introspection-XXXXXXXX.tmp, or .<file>.XXXXXXXX.tmp (how earlier '
        'versions named them) beside an existing <file>',
        'delete it; never commit it'),
    'duplicate-agent-name': ('error',
        'two agent files with the same name',
        ''),
    'unknown-skill': ('error',
        'an agent lists a skill that has no skills//<name>/SKILL.md (names compared '
        'after NFKC normalisation); a skill whose SKILL.md exists but has errors is not '
        'reported here, only in the SKILL.md itself',
        ''),
    'skill-front-matter': ('error',
        'SKILL.md does not start with a --- line, or the front matter is never closed '
        'by one',
        ''),
    'skill-name-mismatch': ('error',
        "a skill's name differs from its directory name",
        ''),
    'duplicate-skill-name': ('error',
        'two SKILL.md files declare the same name',
        ''),
    'system-not-file': ('error',
        'SYSTEM.md is not a regular file',
        ''),
    'system-blank': ('error',
        'SYSTEM.md is empty or whitespace',
        ''),
    'system-wrong-case': ('error',
        "the recipe's system prompt is named system.md (or another case) and there is "
        'no SYSTEM.md: the only name read. A directory holding one is checked as a '
        'recipe so that this is said, not skipped',
        ''),
    'fixture-json': ('error',
        'the line is not a JSON object: invalid UTF-8 or JSON, NaN/Infinity (or a '
        'number too large for a double), a key repeated in any object '
        '({"expected":"pass","expected":"fail"} is refused, not read as fail), or a '
        'judge_input with no RFC 8785 form (an integer beyond ±(2^53−1), a lone '
        'surrogate). An object spread over several lines (an editor pretty-printed the '
        'file) is one fixture-json on its first line, naming its first and last line '
        '("lines 2–40 hold one JSON object spread over 39 lines"), not one per line; a '
        'line that is a whole object on its own is never counted as part of it, so a '
        'row cut short does not swallow the rows after it',
        'restore the line exactly as exported, or re-export the conversation; a '
        'pretty-printed row goes back on one line (jq -c . on that object)'),
    'fixture-schema-version': ('error',
        'schema_version is missing or not 1',
        "re-export with this CLI's runtime, or upgrade introspection"),
    'fixture-record-type': ('error',
        'record_type is not judge_fixture, e.g. a plain conversation bundle exported '
        'without --judge-fixtures',
        'export again with --judge-fixtures'),
    'fixture-not-ok': ('error',
        'ok is not true: the runtime did not export the conversation successfully',
        'remove the line, or re-export'),
    'fixture-engine-version': ('error',
        'engine.version is missing or empty',
        're-export'),
    'fixture-protocol-changed': ('error',
        'engine.protocol_version is not 1, the protocol this CLI speaks',
        're-export from a runtime speaking protocol 1, or upgrade introspection'),
    'fixture-contract-changed': ('error',
        'engine.contract_version is not 1',
        'as above, for the contract version'),
    'fixture-shape': ('error',
        'a required field is missing or has the wrong type: engine (with integer '
        'protocol_version and contract_version), source with non-empty conversation_id '
        'and runtime_url and an RFC 3339 exported_at, judge_input with conversation_id '
        'and events (a list of objects with a string type), snapshot_hash',
        'restore the row as exported, or re-export'),
    'fixture-extra-field': ('error',
        'a top-level field other than the exported ones, expected and split (a "did you '
        'mean" names a close one)',
        'remove it; only expected and split may be added'),
    'fixture-conversation-mismatch': ('error',
        'judge_input.conversation_id differs from source.conversation_id',
        'undo the edit, or re-export'),
    'fixture-hash-mismatch': ('error',
        'snapshot_hash is not the hash of judge_input: something inside the '
        'conversation was changed after export',
        'undo the change (only expected and split may be edited), or re-export'),
    'fixture-duplicate-conversation': ('error',
        'the same source.conversation_id appears on more than one line; every such line '
        'is reported, naming the others',
        'keep one row per conversation and delete the other lines'),
    'fixture-unlabelled': ('warning',
        'expected is missing or null',
        'add a label. A warning in check, a rejection in judges eval'),
    'fixture-bad-label': ('error',
        'expected is not pass, fail or not_applicable (case matters)',
        'use one of the three verdicts'),
    'fixture-bad-split': ('error',
        'split is not train, dev, test or null',
        'use one of those'),
    'fixture-blank-line': ('warning',
        'a line holding only whitespace (a blank line is not a row, so it is not a '
        'rejection)',
        'delete it. A warning in check; never a row in eval'),
}
