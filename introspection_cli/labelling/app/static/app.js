/* The labelling page. Every label is written by the server the moment it is made;
 * the page shows each write's confirmation, or why it was refused.
 * Text from the row, the recipe or the server is only ever set as text, through
 * IntrospectionTranscript.text (see transcript.js): bounded whatever its length, bidi
 * controls shown as visible escapes. */
(function () {
  "use strict";

  var state = {
    csrf: null, overview: null, queue: [], index: 0, row: null, chain: Promise.resolve(),
  };
  var KEYS = {
    p: "pass", f: "fail", n: "not_applicable", s: "skip", u: "undo",
    ArrowLeft: "previous", ArrowRight: "next",
    "1": "split-train", "2": "split-dev", "3": "split-test", "0": "split-none",
  };

  function $(id) { return document.getElementById(id); }

  function text(value) { return window.IntrospectionTranscript.text(value); }

  function el(tag, className, content) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (content !== undefined && content !== null) node.appendChild(text(content));
    return node;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function setText(node, value) {
    clear(node);
    node.appendChild(text(value));
  }

  function status(message, ok) {
    var node = $("status");
    setText(node, message);
    node.className = "status " + (ok ? "status-ok" : "status-error");
  }

  function request(method, path, body) {
    var options = { method: method, credentials: "same-origin", headers: {} };
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.headers["X-CSRF-Token"] = state.csrf;
      options.body = JSON.stringify(body);
    }
    return fetch(path, options).then(function (response) {
      var type = response.headers.get("Content-Type") || "";
      var read = type.indexOf("application/json") === 0 ? response.json() : response.text()
        .then(function (text) { return { error: text.trim() }; });
      return read.then(function (data) { return { ok: response.ok, status: response.status, data: data }; });
    }).catch(function () {
      return { ok: false, status: 0, data: { error: "The labelling server is not answering " +
        "(was it stopped?). Labels already confirmed are saved." } };
    });
  }

  // Actions run one after another, so keys pressed quickly are applied in order.
  function enqueue(task) {
    state.chain = state.chain.then(task, task);
    return state.chain;
  }

  function progressText(progress) {
    if (!progress) return "";
    var line = progress.labelled + " of " + progress.total + " labelled";
    if (state.queue.length) {
      line += " \u00b7 row " + Math.min(state.index + 1, state.queue.length) + " of " +
        state.queue.length + " in the queue";
    }
    return line;
  }

  function renderOverview(overview) {
    setText($("judge-name"), overview.judge.name);
    var modes = { unlabelled: "unlabelled rows", all: "all rows",
                  review: "rows the eval report disagrees with" };
    $("mode").textContent = "\u00b7 " + (modes[overview.mode] || overview.mode);
    setText($("judge-summary"), "Judge " + overview.judge.name + ": " +
      overview.judge.description + " (show instructions)");
    setText($("judge-description"), overview.judge.description);
    setText($("judge-instructions"), overview.judge.instructions);
    var notes = $("notes");
    clear(notes);
    notes.className = "notes";
    (overview.notes || []).forEach(function (note) { notes.appendChild(el("p", null, note)); });
    state.gateMisses = overview.gate_misses;
    renderBulk(overview.gate_misses);
  }

  function renderBulk(count) {
    var bulk = $("bulk");
    clear(bulk);
    if (count === null || count === undefined) { bulk.hidden = true; return; }
    bulk.hidden = false;
    if (count === 0) {
      bulk.appendChild(el("span", null, "Gate misses: none left unlabelled in this file."));
      return;
    }
    bulk.appendChild(el("span", null, "Gate misses: " + count + " unlabelled row(s) in this " +
      "file do not match the judge's gate, so the judge would never run on them. "));
    var start = el("button", null, "Label the " + count + (count === 1 ? " gate miss" :
      " gate misses") + " not_applicable\u2026");
    start.type = "button";
    start.id = "bulk-start";
    start.addEventListener("click", function () { confirmBulk(count); });
    bulk.appendChild(start);
  }

  function confirmBulk(count) {
    var bulk = $("bulk");
    var box = el("div", "bulk-confirm");
    box.id = "bulk-confirm";
    box.appendChild(el("span", null, "Label " + count + " row(s) not_applicable in one step? " +
      "(u undoes it)"));
    var yes = el("button", null, "Yes, label " + count + " rows");
    yes.type = "button";
    yes.id = "bulk-yes";
    var no = el("button", null, "Cancel");
    no.type = "button";
    no.addEventListener("click", function () { box.remove(); });
    yes.addEventListener("click", function () {
      box.remove();
      enqueue(function () {
        return request("POST", "/api/gate-misses", { count: count }).then(function (answer) {
          // the confirmation shows once the page shows the new state
          return refreshOverview().then(function () { return showRow(true); }).then(function () {
            status(answer.ok ? answer.data.message : answer.data.error, answer.ok);
          });
        });
      });
    });
    box.appendChild(yes);
    box.appendChild(no);
    bulk.appendChild(box);
  }

  function refreshOverview() {
    return request("GET", "/api/session").then(function (answer) {
      if (!answer.ok) { status(answer.data.error, false); return; }
      state.overview = answer.data;
      renderOverview(answer.data);
      $("progress").textContent = progressText(answer.data.progress);
    });
  }

  function pill(label, value) {
    return el("span", "pill" + (value ? " pill-" + value : ""), label + ": " +
      (value || "\u2014"));
  }

  function renderRow(row) {
    state.row = row;
    var head = $("row-head");
    clear(head);
    head.appendChild(el("span", null, "Line " + row.line));
    var id = el("span", null, "Conversation ");
    id.appendChild(el("code", null, row.conversation_id || "(unreadable)"));
    head.appendChild(id);
    if (row.exported_at) head.appendChild(el("span", "muted", "exported " + row.exported_at));
    head.appendChild(pill("Label", row.expected));
    head.appendChild(pill("Split", row.split));
    $("progress").textContent = progressText(row.progress);
    if (row.gate_misses !== state.gateMisses) {
      state.gateMisses = row.gate_misses;
      renderBulk(row.gate_misses);
    }
    pressed(row);
    renderRejected(row);
    renderReview(row.review);
    renderGate(row.gate);
    var transcript = $("transcript");
    clear(transcript);
    if (row.events) {
      transcript.appendChild(window.IntrospectionTranscript.render(row.events, {
        highlight: row.gate ? row.gate.matches : [],
      }));
    } else if (row.raw !== undefined) {
      transcript.appendChild(el("pre", "raw", row.raw));
    }
    history.replaceState(null, "", "#line=" + row.line);
  }

  function pressed(row) {
    document.querySelectorAll("#actions button[data-action]").forEach(function (button) {
      var action = button.getAttribute("data-action");
      var on = action === row.expected || action === "split-" + (row.split || "none");
      if (["pass", "fail", "not_applicable"].indexOf(action) >= 0 ||
          action.indexOf("split-") === 0) {
        button.setAttribute("aria-pressed", on ? "true" : "false");
        button.disabled = !row.writable;
      }
    });
  }

  function renderRejected(row) {
    var box = $("rejected");
    clear(box);
    box.hidden = row.writable;
    if (row.writable) return;
    box.appendChild(el("strong", null, "This row is rejected and cannot be labelled here " +
      "(shown read-only)."));
    row.rejections.forEach(function (rejection) {
      var p = el("p");
      p.appendChild(el("code", null, rejection.code));
      p.appendChild(text(" " + rejection.message));
      box.appendChild(p);
    });
  }

  function renderReview(review) {
    var box = $("review");
    clear(box);
    box.hidden = !review;
    if (!review) return;
    var head = el("p");
    head.appendChild(el("strong", null, "The model said " + review.outcome));
    var samples = review.samples && review.samples.length > 1 ?
      " (samples: " + review.samples.join(", ") + ")" : "";
    head.appendChild(text(samples + "; the label was " +
      (review.expected_then || "\u2014") + " when the report was made."));
    box.appendChild(head);
    if (review.reasoning) box.appendChild(el("p", "review-reasoning", review.reasoning));
  }

  function renderGate(gate) {
    var box = $("gate");
    clear(box);
    box.hidden = !gate;
    if (!gate) return;
    box.className = "gate" + (gate.applies ? " gate-match" : "");
    var sentence;
    if (gate.error) sentence = "Gate: could not be decided (" + gate.error + ").";
    else if (gate.applies) {
      sentence = "Gate: matches event" + (gate.matches.length > 1 ? "s " : " ") +
        gate.matches.map(function (i) { return i + 1; }).join(", ") +
        " (marked below): the judge runs on this conversation.";
    } else {
      sentence = "Gate: does not match this conversation, so the judge would not run on it " +
        "(a gate miss; usually not_applicable).";
    }
    setText(box, sentence);
  }

  function showRow(keepStatus) {
    var done = $("done");
    if (!state.queue.length) {
      done.hidden = false;
      done.textContent = "There are no rows in this queue. Run with --all to see every row.";
      return Promise.resolve();
    }
    var line = state.queue[state.index];
    return request("GET", "/api/row/" + line).then(function (answer) {
      if (!answer.ok) { status(answer.data.error, false); return; }
      done.hidden = true;
      renderRow(answer.data);
      if (!keepStatus) status("", true);
    });
  }

  function move(step) {
    var next = state.index + step;
    if (next < 0) { status("This is the first row of the queue.", false); return Promise.resolve(); }
    if (next >= state.queue.length) { finished(); return Promise.resolve(); }
    state.index = next;
    return showRow(true);
  }

  function finished() {
    var progress = state.row ? state.row.progress : null;
    var done = $("done");
    done.hidden = false;
    done.textContent = "End of the queue" + (progress ? ": " + progress.labelled + " of " +
      progress.total + " labelled" : "") + ". Every label is already saved; you can close " +
      "this tab and stop the server with Ctrl-C. Next: introspection judges split.";
  }

  function write(values) {
    var row = state.row;
    if (!row) return Promise.resolve();
    if (!row.writable) {
      status("This row is rejected and cannot be labelled here.", false);
      return Promise.resolve();
    }
    var body = { line: row.line, version: row.version };
    Object.keys(values).forEach(function (key) { body[key] = values[key]; });
    return request("POST", "/api/label", body).then(function (answer) {
      if (answer.ok) {
        status(answer.data.message, true);
        renderRow(answer.data.row);
        return values.expected !== undefined ? move(1) : undefined;
      }
      status(answer.data.error, false);
      if (answer.data.row) renderRow(answer.data.row);
    });
  }

  function undo() {
    return request("POST", "/api/undo", {}).then(function (answer) {
      if (!answer.ok) { status(answer.data.error, false); return; }
      var at = state.queue.indexOf(answer.data.row.line);
      if (at >= 0) state.index = at;
      renderRow(answer.data.row);
      return refreshOverview().then(function () { status(answer.data.message, true); });
    });
  }

  function act(action) {
    if (action === "pass" || action === "fail" || action === "not_applicable") {
      return write({ expected: action });
    }
    if (action.indexOf("split-") === 0) {
      var split = action.slice(6);
      return write({ split: split === "none" ? null : split });
    }
    if (action === "skip" || action === "next") return move(1);
    if (action === "previous") return move(-1);
    if (action === "undo") return undo();
    return Promise.resolve();
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) {
      return;
    }
    var action = KEYS[event.key];
    if (!action) return;
    event.preventDefault();
    enqueue(function () { return act(action); });
  }

  function start() {
    document.querySelectorAll("#actions button[data-action]").forEach(function (button) {
      button.addEventListener("click", function () {
        var action = button.getAttribute("data-action");
        enqueue(function () { return act(action); });
      });
    });
    document.addEventListener("keydown", onKey);
    request("GET", "/api/session").then(function (answer) {
      if (!answer.ok) { status(answer.data.error, false); return; }
      state.csrf = answer.data.csrf;
      state.overview = answer.data;
      state.queue = answer.data.queue;
      var wanted = /^#line=(\d+)$/.exec(location.hash);
      var at = wanted ? state.queue.indexOf(Number(wanted[1])) : -1;
      state.index = at >= 0 ? at : 0;
      renderOverview(answer.data);
      return showRow();
    }).then(function () { document.body.setAttribute("data-ready", "true"); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
