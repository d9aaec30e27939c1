/* The labelling page: the queue, the keys, and the writes. Every label is written by the
 * server the moment it is made; the page shows each write's confirmation, or why it was
 * refused. Drawing is view.js's; every untrusted string goes through
 * IntrospectionTranscript.text there.
 *
 * One judge or several: each conversation is shown once, with a label row per judge.
 * The keys act on the judge in focus (Tab / Shift-Tab move it); after a label the focus
 * goes on to the next judge of the conversation without one, then to the next
 * conversation.
 *
 * With --rater NAME the labels are that rater's own and `c` writes their note; with
 * --adjudicate the queue is the rows in conflict and every rater's label is shown. A note
 * typed on a row not yet labelled waits (state.draft) and is sent with the label. */
(function () {
  "use strict";

  var view = window.LabelView;
  var $ = view.$;
  var WIDE = window.matchMedia("(min-width: 1100px)");
  var state = {
    csrf: null, overview: null, judges: [], several: false, queue: [], index: 0, item: null,
    focus: 0, highlight: null, rubric: { wide: true, narrow: false }, toolsOpen: false,
    gateMisses: null, chain: Promise.resolve(), rater: null, adjudicate: false, draft: null,
  };
  var KEYS = {
    p: "pass", f: "fail", n: "not_applicable", s: "skip", u: "undo",
    ArrowLeft: "previous", ArrowRight: "next", i: "rubric", t: "tools",
    "1": "split-train", "2": "split-dev", "3": "split-test", "0": "split-none", c: "note",
  };

  function status(message, ok) {
    var node = $("status");
    view.setText(node, message);
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

  function focused() { return state.item ? state.item.labels[state.focus] : null; }

  function showProgress(progress) {
    var line = view.progressText(progress, state.judges, state.adjudicate);
    if (state.queue.length) {
      line += " \u00b7 " + (state.several ? "conversation " : "row ") +
        Math.min(state.index + 1, state.queue.length) + " of " + state.queue.length +
        " in the queue";
    }
    $("progress").textContent = line;
  }

  function renderOverview(overview) {
    state.overview = overview;
    view.setText($("judge-name"), state.judges.map(function (j) { return j.name; }).join(" + "));
    var modes = { unlabelled: "unlabelled rows", all: "all rows",
                  review: "rows the eval report disagrees with",
                  adjudicate: "adjudication: rows the raters disagree on" };
    var mode = "\u00b7 " + (modes[overview.mode] || overview.mode);
    view.setText($("mode"), mode + (overview.rater ? " \u00b7 rater " + overview.rater : ""));
    var notes = $("notes");
    view.clear(notes);
    notes.className = "notes";
    (overview.notes || []).forEach(function (note) { notes.appendChild(view.el("p", null, note)); });
    renderBulk(overview.gate_misses);
    renderRubric();
    showProgress(overview.progress);
  }

  function renderBulk(misses) {
    var key = JSON.stringify(misses);
    if (key === state.gateMisses) return;  // unchanged: keep an open confirmation
    state.gateMisses = key;
    view.renderBulk(state.judges, misses, function (judge, count) {
      enqueue(function () { return bulk(judge, count); });
    });
  }

  function renderRubric() {
    var judge = state.judges[state.focus] || state.judges[0];
    var wide = WIDE.matches;
    view.renderRubric(judge, wide, wide ? state.rubric.wide : state.rubric.narrow);
  }

  function toggleRubric() {
    if (WIDE.matches) state.rubric.wide = !state.rubric.wide;
    else state.rubric.narrow = !state.rubric.narrow;
    renderRubric();
  }

  function toggleTools() {
    state.toolsOpen = !state.toolsOpen;
    $("tools-toggle").setAttribute("aria-pressed", state.toolsOpen ? "true" : "false");
    window.IntrospectionTranscript.setToolsOpen($("transcript"), state.toolsOpen);
  }

  function renderItem(item) {
    var hadFocus = document.activeElement && document.activeElement.classList &&
      document.activeElement.classList.contains("judge-row");
    state.item = item;
    var entry = focused();
    view.renderHead(item, entry, state.several, state.rater);
    if (state.several) {
      view.renderLabels(item, state.focus, function (index) { setFocus(index, true); },
                        state.rater);
      view.setText($("label-for"), entry.judge + ":");
      $("label-for").hidden = false;
    }
    showProgress(item.progress);
    renderBulk(item.gate_misses);
    pressed(entry);
    view.renderRejected(entry);
    view.renderNote(entry, draftFor(entry), noteMode());
    view.renderRatings(entry, state.adjudicate);
    view.renderReview(entry, state.rater);
    view.renderGate(entry.gate, state.several ? entry.judge : null);
    renderRubric();
    renderTranscript(item, entry);
    if (hadFocus) focusRow();
    history.replaceState(null, "", "#item=" + item.item);
  }

  function renderTranscript(item, entry) {
    var matches = entry.gate ? entry.gate.matches : [];
    // Labels never change a conversation's text: draw it again only for another
    // conversation or a rejected line (which may change); another judge's gate only
    // moves the marks, so expanded tool calls stay expanded.
    var key = item.item + ":" +
      (item.events ? "" : item.labels.map(function (e) { return e.version; }).join(","));
    var transcript = $("transcript");
    var list = transcript.querySelector(".ix-transcript");
    if (key === state.highlight && list) {
      window.IntrospectionTranscript.setHighlight(list, matches);
      return;
    }
    state.highlight = key;
    view.clear(transcript);
    if (item.events) {
      transcript.appendChild(window.IntrospectionTranscript.render(item.events, {
        highlight: matches, compactTools: true, toolsOpen: state.toolsOpen,
      }));
    } else if (item.raw !== undefined) {
      transcript.appendChild(view.el("pre", "raw", item.raw));
    }
  }

  function focusRow() {
    var row = document.querySelector(".judge-row[data-index=\"" + state.focus + "\"]");
    if (row) row.focus();
  }

  function setFocus(index, moveDomFocus) {
    if (!state.item || index < 0 || index >= state.item.labels.length) return;
    state.focus = index;
    renderItem(state.item);
    if (moveDomFocus) focusRow();
  }

  function pressed(entry) {
    document.querySelectorAll("#actions button[data-action]").forEach(function (button) {
      var action = button.getAttribute("data-action");
      var on = action === entry.expected || action === "split-" + (entry.split || "none");
      if (["pass", "fail", "not_applicable"].indexOf(action) >= 0 ||
          action.indexOf("split-") === 0) {
        button.setAttribute("aria-pressed", on ? "true" : "false");
        button.disabled = !entry.writable;
      }
    });
  }

  // The first judge after the focused one (in order, wrapping) whose row needs a label.
  function nextUnlabelled(item, from) {
    for (var step = 1; step <= item.labels.length; step++) {
      var index = (from + step) % item.labels.length;
      if (view.needsLabel(item.labels[index])) return index;
    }
    return -1;
  }

  function arrive(item) {
    var first = nextUnlabelled(item, item.labels.length - 1);
    if (first >= 0) state.focus = first;
    if (state.focus >= item.labels.length) state.focus = 0;
    renderItem(item);
  }

  function showItem(keepStatus) {
    var done = $("done");
    if (!state.queue.length) {
      done.hidden = false;
      done.textContent = state.adjudicate ? "No row is in conflict: the raters agree on " +
        "every row they labelled (introspection judges agree shows how much)." :
        "There are no rows in this queue. Run with --all to see every row.";
      return Promise.resolve();
    }
    return request("GET", "/api/item/" + state.queue[state.index]).then(function (answer) {
      if (!answer.ok) { status(answer.data.error, false); return; }
      done.hidden = true;
      arrive(answer.data);
      if (!keepStatus) status("", true);
    });
  }

  function move(step) {
    var next = state.index + step;
    if (next < 0) { status("This is the first row of the queue.", false); return Promise.resolve(); }
    if (next >= state.queue.length) return finished();
    state.index = next;
    return showItem(true);
  }

  function go(key) {
    var at = state.queue.indexOf(key);
    if (at < 0) return Promise.resolve();
    state.index = at;
    return showItem(true);
  }

  function finished() {
    state.index = state.queue.length;
    return refreshOverview().then(function () {
      view.renderDone(state.overview, state.several, function (key) {
        enqueue(function () { return go(key); });
      });
    });
  }

  // A new queue from the server (a bulk action or its undo): stay on the conversation
  // shown, or go on to the next one still in the queue.
  function setQueue(queue, key) {
    var old = state.queue;
    var at = queue.indexOf(key);
    for (var i = state.index; at < 0 && i < old.length; i++) at = queue.indexOf(old[i]);
    state.queue = queue;
    state.index = at < 0 ? queue.length : at;
  }

  function noteMode() {
    return state.adjudicate ? "adjudicate" : state.rater ? "rater" : null;
  }

  function draftFor(entry) {
    var draft = state.draft;
    return draft && state.item && draft.item === state.item.item && draft.judge === entry.judge ?
      draft.text : null;
  }

  // c: a note on the row in focus. Saved at once when the row has this rater's label;
  // otherwise kept and sent with the label.
  function note() {
    var entry = focused();
    if (!entry) return Promise.resolve();
    if (!noteMode()) {
      status("Notes are kept per rater: run judges label with --rater NAME (or " +
             "--adjudicate).", false);
      return Promise.resolve();
    }
    if (!entry.writable) {
      status(entry.absent || "This row is rejected and cannot be labelled here.", false);
      return Promise.resolve();
    }
    var shown = state.item.item;
    return new Promise(function (resolve) {
      view.openNoteEditor(draftFor(entry) || entry.note, function (text) {
        enqueue(function () { return saveNote(shown, entry, text); });
        resolve();
      }, function () {
        view.renderNote(entry, draftFor(entry), noteMode());
        status("Note not changed.", true);
        resolve();
      });
    });
  }

  function saveNote(shown, entry, text) {
    if (!state.item || state.item.item !== shown) return Promise.resolve();
    if (!entry.rated) {
      state.draft = text.trim() ? { item: shown, judge: entry.judge, text: text } : null;
      view.renderNote(entry, draftFor(entry), noteMode());
      status(state.draft ? "Note kept: it is saved with your label (p, f or n)." :
             "Note cleared.", true);
      return Promise.resolve();
    }
    return request("POST", "/api/note", { judge: entry.judge, line: entry.line,
                                          version: entry.version, note: text })
      .then(function (answer) {
        status(answer.ok ? answer.data.message : answer.data.error, answer.ok);
        if (answer.data.item) renderItem(answer.data.item);
        else view.renderNote(entry, null, noteMode());
      });
  }

  function write(values) {
    var entry = focused();
    if (!entry) return Promise.resolve();
    if (!entry.writable) {
      status(entry.absent ? entry.absent : "This row is rejected and cannot be labelled here.",
             false);
      return Promise.resolve();
    }
    var body = { judge: entry.judge, line: entry.line, version: entry.version };
    Object.keys(values).forEach(function (key) { body[key] = values[key]; });
    var draft = values.expected !== undefined ? draftFor(entry) : null;
    if (draft) body.note = draft;
    return request("POST", "/api/label", body).then(function (answer) {
      if (!answer.ok) {
        status(answer.data.error, false);
        if (answer.data.item) renderItem(answer.data.item);
        return undefined;
      }
      if (draft) state.draft = null;
      status(answer.data.message, true);
      if (!answer.data.item) return undefined;  // a line the session did not start with
      renderItem(answer.data.item);
      if (values.expected === undefined) return undefined;
      var next = nextUnlabelled(answer.data.item, state.focus);
      if (next >= 0 && next !== state.focus) { setFocus(next, false); return undefined; }
      return move(1);
    });
  }

  function undo() {
    return request("POST", "/api/undo", {}).then(function (answer) {
      if (!answer.ok) { status(answer.data.error, false); return; }
      var item = answer.data.item;
      state.queue = answer.data.queue;
      var at = item ? state.queue.indexOf(item.item) : -1;
      if (at >= 0) state.index = at;
      if (item) {
        $("done").hidden = true;
        renderItem(item);
      }
      return refreshOverview().then(function () { status(answer.data.message, true); });
    });
  }

  function bulk(judge, count) {
    var shown = state.item ? state.item.item : null;
    return request("POST", "/api/gate-misses", { judge: judge, count: count })
      .then(function (answer) {
        if (answer.ok) setQueue(answer.data.queue, shown);
        return refreshOverview().then(function () {
          return state.index < state.queue.length ? showItem(true) : finished();
        }).then(function () {
          // the confirmation shows once the page shows the new state
          status(answer.ok ? answer.data.message : answer.data.error, answer.ok);
        });
      });
  }

  function refreshOverview() {
    return request("GET", "/api/session").then(function (answer) {
      if (!answer.ok) { status(answer.data.error, false); return; }
      renderOverview(answer.data);
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
    if (action === "note") return note();
    if (action === "rubric") toggleRubric();
    if (action === "tools") toggleTools();
    return Promise.resolve();
  }

  // Tab / Shift-Tab move the judge in focus while the page (or a judge's row) has the
  // keyboard focus; past the first or last judge they move on as anywhere else.
  function onTab(event) {
    var active = document.activeElement;
    if (!state.several || !state.item || (active && active !== document.body &&
        !active.classList.contains("judge-row"))) return;
    var next = state.focus + (event.shiftKey ? -1 : 1);
    if (next < 0 || next >= state.item.labels.length) return;
    event.preventDefault();
    enqueue(function () { setFocus(next, true); });
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) {
      return;
    }
    if (event.key === "Tab") { onTab(event); return; }
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
    $("rubric-toggle").addEventListener("click", toggleRubric);
    WIDE.addEventListener("change", renderRubric);
    document.addEventListener("keydown", onKey);
    request("GET", "/api/session").then(function (answer) {
      if (!answer.ok) { status(answer.data.error, false); return; }
      state.csrf = answer.data.csrf;
      state.judges = answer.data.judges;
      state.rater = answer.data.rater;
      state.adjudicate = answer.data.adjudicate;
      $("note-button").hidden = !(state.rater || state.adjudicate);
      state.several = state.judges.length > 1;
      state.queue = answer.data.queue;
      var wanted = /^#item=(\d+)$/.exec(location.hash);
      var at = wanted ? state.queue.indexOf(Number(wanted[1])) : -1;
      state.index = at >= 0 ? at : 0;
      renderOverview(answer.data);
      return showItem();
    }).then(function () { document.body.setAttribute("data-ready", "true"); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
