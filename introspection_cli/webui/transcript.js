/* The conversation transcript, rendered with DOM APIs only: conversation text is
 * untrusted and is only ever set with textContent, never parsed as HTML.
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
 *   IntrospectionTranscript.json(value) -> string   indented JSON, as shown
 *
 * Style it with transcript.css (every class starts with "ix-").
 */
(function () {
  "use strict";

  var ROLES = { user: "User", assistant: "Assistant", system: "System" };

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
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
    var text = json(value);
    var pre = el("pre", "ix-json", text);
    var long = text.length > options.foldChars || text.split("\n").length > options.foldLines;
    var wrap = el("div", "ix-field");
    if (!long) {
      wrap.appendChild(el("span", "ix-field-name", label));
      wrap.appendChild(pre);
      return wrap;
    }
    var details = el("details", "ix-fold");
    var lines = text.split("\n").length;
    details.appendChild(el("summary", "ix-field-name",
      label + " (" + lines + " lines, " + text.length + " characters: show)"));
    details.appendChild(pre);
    wrap.appendChild(details);
    return wrap;
  }

  function head(item, kind, title) {
    var header = el("div", "ix-event-head");
    header.appendChild(el("span", "ix-number", String(item.index + 1)));
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
        li.querySelector(".ix-event-head").appendChild(el("span", "ix-gate-badge", "gate matched"));
      }
      list.appendChild(li);
    });
    if (!list.children.length) list.appendChild(el("li", "ix-empty", "No events."));
    return list;
  }

  window.IntrospectionTranscript = { render: render, json: json };
})();
