"""Browser assets shared by every page introspection shows, and the rules for embedding data.

The transcript renderer lives here so that each page showing a conversation
uses the same one: the labelling app serves these files, and a self-contained
page (the HTML eval report) inlines them. Its JavaScript API is documented at
the top of ``transcript.js``::

    IntrospectionTranscript.render(events, {highlight: [0, 2]}) -> <ol> element

Building a self-contained page that shows transcripts::

    from introspection_cli import webui

    css = webui.asset_text(webui.TRANSCRIPT_CSS)
    js = webui.asset_text(webui.TRANSCRIPT_JS)
    data = webui.script_json({"events": events})        # inert inside <script type=...json>
    page_js = "..."  # reads the JSON element, calls IntrospectionTranscript.render
    csp = webui.inline_csp([js, page_js], styles=[css])  # allows exactly these, nothing else
    # <meta http-equiv="Content-Security-Policy" content="{csp}">
    # <style>{css}</style>
    # <script type="application/json" id="data">{data}</script>
    # <script>{js}</script><script>{page_js}</script>

Conversation text must reach the page only as JSON data (never as markup), and
the page must render it with the DOM, as ``transcript.js`` does with
``IntrospectionTranscript.text``: bidi controls shown as visible escapes, long
text in pieces a browser lays out in linear time, text over :data:`FOLD_CHARS`
folded behind "Show all". Text a page writes server-side (the HTML report's
model reasoning, error messages, conversation ids) goes through
:func:`page_text`, which writes the same markup, or :func:`visible_bidi` for an
attribute or a title. Standard library only; nothing here is imported by ``check``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Sequence
from importlib import resources

TRANSCRIPT_JS = "transcript.js"
TRANSCRIPT_CSS = "transcript.css"

#: Characters laid out as one paragraph at most (``PIECE`` in transcript.js).
PIECE_CHARS = 1024
#: Characters of one text shown before "Show all" (``FOLD`` in transcript.js).
FOLD_CHARS = 65536
#: The bidirectional embedding, override and isolate controls, which make text read
#: differently from what it is; the text reports drop them, pages show them escaped.
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
#: Other control characters (C0 and C1 but tab, line feed and carriage return): dropped,
#: as the text reports drop them (ESC would start a terminal sequence there).
OTHER_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_BREAKS = " \t\n\r"

#: Characters that could end a <script> element or start markup inside JSON text.
_SCRIPT_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                  "\u2028": "\\u2028", "\u2029": "\\u2029"}


def asset_text(name: str) -> str:
    """The text of the asset ``name`` shipped in this package (e.g. :data:`TRANSCRIPT_JS`)."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def script_json(value: object) -> str:
    """``value`` as JSON text safe to place inside ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` are written as ``\\u`` escapes, so no conversation
    text (``</script>``, ``<!--``) can end the element or be read as markup;
    ``JSON.parse`` gives back exactly ``value``.
    """
    text = json.dumps(value, ensure_ascii=False)
    for char, escape in _SCRIPT_UNSAFE.items():
        text = text.replace(char, escape)
    return text


def csp_hash(source: str) -> str:
    """The CSP source expression (``'sha256-...'``) allowing exactly this inline script or style."""
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def inline_csp(scripts: Sequence[str], *, styles: Sequence[str] = ()) -> str:
    """A Content-Security-Policy for a self-contained page: nothing loads from anywhere,
    and only ``scripts`` (and ``styles``, by hash) run; everything else inline is refused."""
    script_src = " ".join(csp_hash(s) for s in scripts) or "'none'"
    style_src = " ".join(csp_hash(s) for s in styles) or "'none'"
    return (f"default-src 'none'; script-src {script_src}; style-src {style_src}; "
            "img-src data:; base-uri 'none'; form-action 'none'")



def bidi_escape(control: str) -> str:
    """``\\u202e``: a bidi control as the text reports write it (a Python escape)."""
    return f"\\u{ord(control):04x}"


def visible_bidi(text: str) -> str:
    """``text`` with each bidi control written as its escape, for an attribute or a title."""
    return BIDI_CONTROLS.sub(lambda match: bidi_escape(match.group()), text)


def page_text(text: str) -> str:
    """Untrusted ``text`` as HTML element content, as ``IntrospectionTranscript.text`` draws
    it: escaped, other control characters dropped, bidi controls as visible escapes, in
    pieces of at most :data:`PIECE_CHARS` when longer, and beyond :data:`FOLD_CHARS`
    folded behind "Show all". (Lengths count code points here and UTF-16 units there:
    the two agree on text without characters beyond U+FFFF.)"""
    text = OTHER_CONTROLS.sub("", text)
    if len(text) <= PIECE_CHARS:
        return _escaped(text)
    shown, rest = text[:FOLD_CHARS], text[FOLD_CHARS:]
    more = ""
    if rest:
        more = (f'<details class="ix-more"><summary>Show all {len(text):,} characters '
                f"({len(rest):,} more)</summary>{_pieces(rest)}</details>")
    return f'<span class="ix-long">{_pieces(shown)}{more}</span>'


def _escaped(text: str) -> str:
    # A raw CR in markup would be read back as LF; the page keeps it as text does.
    return BIDI_CONTROLS.sub(
        lambda match: f'<span class="ix-escape">{bidi_escape(match.group())}</span>',
        html.escape(text, quote=False)).replace("\r", "&#13;")


def _pieces(text: str) -> str:
    parts = []
    start = 0
    while start < len(text):
        end = _piece_end(text, start)
        parts.append(f'<span class="ix-piece">{_escaped(text[start:end])}</span>')
        start = end
    return "".join(parts)


def _piece_end(text: str, start: int) -> int:
    """After the last space or line break in the piece's second half, else PIECE_CHARS on."""
    end = start + PIECE_CHARS
    if end >= len(text):
        return len(text)
    cut = max(text.rfind(char, start + PIECE_CHARS // 2, end) for char in _BREAKS)
    return cut + 1 if cut >= 0 else end
