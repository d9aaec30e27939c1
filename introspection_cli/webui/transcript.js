/* The conversation transcript, rendered with DOM APIs only: conversation text is
 * untrusted and is only ever set as text nodes, never parsed as HTML.
 *
 * Reused by every page that shows a conversation (the labelling app, the HTML
 * eval report). API (a classic script: it defines one global):
 *
 *   IntrospectionTranscript.render(events, options) -> HTMLOListElement
 *     events   the row's judge_input.events, as parsed JSON
 *     options  {highlight: [eventIndex...]  events to mark as gate matches (0-based),
 *               foldChars: 400              JSON longer than this starts folded,
 *               foldLines: 12}              ... or with more lines than this
 *
 *   IntrospectionTranscript.text(value) -> Node
 *     Any untrusted text (a string, or anything else as String(value)) for any
 *     element, drawn in bounded time: every page sets untrusted text with this.
 *     - Bidi controls (U+202A-U+202E, U+2066-U+2069), which make text read
 *       differently from what it is, are shown as visible escapes ("\u202e",
 *       the notation of the text reports) in <span class="ix-escape">; other
 *       control characters but tab and line breaks are dropped, as there.
 *     - Text longer than PIECE characters is laid out in pieces of at most PIECE
 *       (<span class="ix-piece">, cut after a space or line break when there is
 *       one in the piece's second half): browsers lay out a paragraph in time
 *       that grows faster than its length (a 2 MB run of Thai letters, or of
 *       alternating Latin and Hebrew ones, took minutes), pieces keep it linear.
 *       Long runs wrap anywhere (transcript.css).
 *     - Text longer than FOLD characters shows its first FOLD, then a folded
 *       "Show all N characters" (<details class="ix-more">) drawn when opened.
 *     webui.page_text() writes the same markup server-side.
 *
 *   IntrospectionTranscript.json(value) -> string   indented JSON, as shown
 *
 * Style it with transcript.css (every class starts with "ix-").
 */
(function () {
  "use strict";

  var ROLES = { user: "User", assistant: "Assistant", system: "System" };
  var PIECE = 1024;
  var FOLD = 65536;
  var BIDI = /[\u202A-\u202E\u2066-\u2069]/g;
  // Other controls (C0, C1; not tab, LF, CR) are dropped, as the text reports drop them.
  var CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;

  // An element holding `text` (untrusted or not) drawn by text().
  function el(tag, className, content) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (content !== undefined) node.appendChild(text(content));
    return node;
  }

  // An element holding text of our own, short and known.
  function plain(tag, className, content) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    node.textContent = content;
    return node;
  }

  function escapeOf(control) {
    return "\\u" + ("000" + control.charCodeAt(0).toString(16)).slice(-4);
  }

  // `string` appended to `parent` as text nodes, each bidi control as a visible escape.
  function appendEscaped(parent, string) {
    var last = 0;
    string.replace(BIDI, function (control, at) {
      if (at > last) parent.appendChild(document.createTextNode(string.slice(last, at)));
      parent.appendChild(plain("span", "ix-escape", escapeOf(control)));
      last = at + 1;
      return control;
    });
    if (last < string.length) parent.appendChild(document.createTextNode(string.slice(last)));
  }

  function isBreak(code) { return code === 32 || code === 10 || code === 9 || code === 13; }

  // Where the piece starting at `start` ends: after the last space or line break in its
  // second half, else at PIECE characters (never between the halves of a surrogate pair).
  function pieceEnd(string, start) {
    var end = start + PIECE;
    if (end >= string.length) return string.length;
    for (var at = end - 1; at >= start + PIECE / 2; at--) {
      if (isBreak(string.charCodeAt(at))) return at + 1;
    }
    var code = string.charCodeAt(end - 1);
    return code >= 0xD800 && code <= 0xDBFF ? end - 1 : end;
  }

  function appendPieces(parent, string) {
    for (var start = 0; start < string.length;) {
      var end = pieceEnd(string, start);
      var piece = plain("span", "ix-piece", "");
      appendEscaped(piece, string.slice(start, end));
      parent.appendChild(piece);
      start = end;
    }
  }

  function count(n) { return n.toLocaleString("en-US"); }

  function text(value) {
    var string = (typeof value === "string" ? value : String(value)).replace(CONTROLS, "");
    if (string.length <= PIECE) {
      var fragment = document.createDocumentFragment();
      appendEscaped(fragment, string);
      return fragment;
    }
    var box = plain("span", "ix-long", "");
    var shown = string.length > FOLD ? FOLD : string.length;
    var code = string.charCodeAt(shown - 1);
    if (shown < string.length && code >= 0xD800 && code <= 0xDBFF) shown -= 1;
    appendPieces(box, string.slice(0, shown));
    if (shown < string.length) {
      var rest = string.slice(shown);
      var more = plain("details", "ix-more", "");
      more.appendChild(plain("summary", null, "Show all " + count(string.length) +
        " characters (" + count(rest.length) + " more)"));
      more.addEventListener("toggle", function fill() {
        if (!more.open) return;
        more.removeEventListener("toggle", fill);
        appendPieces(more, rest);
      });
      box.appendChild(more);
    }
    return box;
  }

  function json(value) {
    if (value === undefined) return "(missing)";
    return JSON.stringify(value, null, 2);
  }

  function asText(value) {
    return typeof value === "string" ? value : json(value);
  }

  // A block of JSON, folded behind a summary when it is long.
  function jsonBlock(label, value, options) {
    var shown = json(value);
    var pre = el("pre", "ix-json", shown);
    var long = shown.length > options.foldChars || shown.split("\n").length > options.foldLines;
    var wrap = el("div", "ix-field");
    if (!long) {
      wrap.appendChild(el("span", "ix-field-name", label));
      wrap.appendChild(pre);
      return wrap;
    }
    var details = el("details", "ix-fold");
    var lines = shown.split("\n").length;
    details.appendChild(plain("summary", "ix-field-name",
      label + " (" + lines + " lines, " + shown.length + " characters: show)"));
    details.appendChild(pre);
    wrap.appendChild(details);
    return wrap;
  }

  function head(item, kind, title) {
    var header = el("div", "ix-event-head");
    header.appendChild(plain("span", "ix-number", String(item.index + 1)));
    header.appendChild(el("span", "ix-kind ix-kind-" + kind, title));
    return header;
  }

  function message(item, event) {
    var role = typeof event.role === "string" ? event.role : "";
    var li = el("li", "ix-event ix-message ix-role-" + (ROLES[role] ? role : "other"));
    li.appendChild(head(item, "message", ROLES[role] || ("Message (" + asText(event.role) + ")")));
    li.appendChild(el("div", "ix-text", asText(event.text)));
    return li;
  }

  function tool(item, event, options) {
    var li = el("li", "ix-event ix-tool");
    var status = asText(event.status);
    var header = head(item, "tool", "Tool call");
    header.appendChild(el("code", "ix-tool-name", asText(event.name)));
    header.appendChild(el("span", "ix-status ix-status-" + (status === "error" ? "error" : "ok"),
      status));
    li.appendChild(header);
    li.appendChild(jsonBlock("input", event.input, options));
    li.appendChild(jsonBlock("output", event.output, options));
    return li;
  }

  function feedback(item, event) {
    var li = el("li", "ix-event ix-feedback");
    var header = head(item, "feedback", "Feedback");
    header.appendChild(el("span", "ix-rating", asText(event.rating)));
    li.appendChild(header);
    if (event.comment !== undefined && event.comment !== "") {
      li.appendChild(el("div", "ix-text", asText(event.comment)));
    }
    return li;
  }

  function other(item, event, options) {
    var li = el("li", "ix-event ix-other");
    var kind = event && typeof event.type === "string" ? event.type : "unknown";
    li.appendChild(head(item, "other", "Event \u201c" + kind + "\u201d (shown as recorded)"));
    li.appendChild(jsonBlock("event", event, options));
    return li;
  }

  function render(events, options) {
    options = options || {};
    var settings = {
      foldChars: options.foldChars || 400,
      foldLines: options.foldLines || 12,
    };
    var highlight = {};
    (options.highlight || []).forEach(function (index) { highlight[index] = true; });
    var list = el("ol", "ix-transcript");
    (Array.isArray(events) ? events : []).forEach(function (event, index) {
      var item = { index: index };
      var type = event && typeof event === "object" ? event.type : undefined;
      var li;
      if (type === "message") li = message(item, event);
      else if (type === "tool") li = tool(item, event, settings);
      else if (type === "feedback") li = feedback(item, event);
      else li = other(item, event, settings);
      if (highlight[index]) {
        li.classList.add("ix-gate-match");
        li.querySelector(".ix-event-head").appendChild(plain("span", "ix-gate-badge",
          "gate matched"));
      }
      list.appendChild(li);
    });
    if (!list.children.length) list.appendChild(plain("li", "ix-empty", "No events."));
    return list;
  }

  window.IntrospectionTranscript = { render: render, text: text, json: json,
                                     PIECE: PIECE, FOLD: FOLD };
})();
