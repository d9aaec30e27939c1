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
the page must render it with the DOM (``textContent``), as ``transcript.js`` does.
Standard library only; nothing here is imported by ``check``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from importlib import resources

TRANSCRIPT_JS = "transcript.js"
TRANSCRIPT_CSS = "transcript.css"

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

