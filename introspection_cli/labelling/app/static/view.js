/* The labelling page's parts, drawn from what the server sent (app.js decides when).
 * Every string from the row, the recipe or the server is set as text, through
 * IntrospectionTranscript.text (transcript.js): bounded whatever its length, bidi
 * controls shown as visible escapes. Nothing here keeps state.
 *
 * A conversation's `labels` hold one entry per judge: {judge, line, version, writable,
 * rejections, expected, split, gate, review, absent, note, rated, ratings, conflict}.
 * For a rater, `expected` and `note` are their own (nothing of another rater is sent);
 * when adjudicating, `ratings` holds every rater's label and note. */
(function () {
  "use strict";

  function $(id) { return document.getElementById(id); }

  function text(value) { return window.IntrospectionTranscript.text(value); }

  function el(tag, className, content) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (content !== undefined && content !== null) node.appendChild(text(content));
    return node;
  }

  function button(content, id) {
    var node = el("button", null, content);
    node.type = "button";
    if (id) node.id = id;
    return node;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function setText(node, value) {
    clear(node);
    node.appendChild(text(value));
  }

  function pill(label, value) {
    return el("span", "pill" + (value ? " pill-" + value : ""), label + ": " +
      (value || "\u2014"));
  }

  function needsLabel(entry) { return entry.writable && entry.expected === null; }

  // "12 of 48 labelled" for one judge; "billing 3 of 10, helpful 5 of 10 labelled".
  function progressText(progress, judges, adjudicate) {
    if (!progress) return "";
    var parts = judges.map(function (judge) {
      var count = progress[judge.name] || { labelled: 0, total: 0 };
      return (judges.length > 1 ? judge.name + " " : "") + count.labelled + " of " + count.total;
    });
    return parts.join(", ") + (adjudicate ? " settled" : " labelled");
  }

  // The line, conversation id and export time; with one judge also its label and split.
  function renderHead(item, entry, several, rater) {
    var head = $("row-head");
    clear(head);
    if (!several && entry.line !== null) head.appendChild(el("span", null, "Line " + entry.line));
    var id = el("span", null, "Conversation ");
    id.appendChild(el("code", null, item.conversation_id || "(unreadable)"));
    head.appendChild(id);
    if (item.exported_at) head.appendChild(el("span", "muted", "exported " + item.exported_at));
    if (several) return;
    head.appendChild(pill(rater ? "Your label" : "Label", entry.expected));
    head.appendChild(pill("Split", entry.split));
  }

  function gateWords(gate) {
    if (!gate) return null;
    if (gate.error) return "gate undecided";
    if (gate.applies) {
      return "gate matches event" + (gate.matches.length > 1 ? "s " : " ") +
        gate.matches.map(function (i) { return i + 1; }).join(", ");
    }
    return "gate miss (usually not_applicable)";
  }

  // One row per judge: its line, label, split and gate; the focused one is marked.
  function renderLabels(item, focus, onFocus, rater) {
    var box = $("labels");
    clear(box);
    box.hidden = false;
    item.labels.forEach(function (entry, index) {
      var row = el("div", "judge-row" + (index === focus ? " judge-row-focus" : "") +
        (entry.gate && !entry.gate.applies && !entry.gate.error ? " judge-row-miss" : ""));
      row.setAttribute("role", "group");
      row.setAttribute("data-index", String(index));
      row.setAttribute("aria-label", "Judge " + entry.judge);
      row.tabIndex = index === focus ? 0 : -1;
      if (index === focus) row.setAttribute("aria-current", "true");
      row.appendChild(el("strong", "judge-row-name", entry.judge));
      if (entry.absent) {
        row.appendChild(el("span", "judge-row-absent", entry.absent));
      } else {
        row.appendChild(el("span", "muted", "line " + entry.line));
        row.appendChild(pill(rater ? "Your label" : "Label",
          entry.expected));
        row.appendChild(pill("Split", entry.split));
        if (entry.note) row.appendChild(el("span", "muted", "note"));
        if (!entry.writable) {
          row.appendChild(el("span", "judge-row-rejected", "rejected: " +
            entry.rejections.map(function (r) { return r.code; }).join(", ") + " (read-only)"));
        }
        var gate = gateWords(entry.gate);
        if (gate) row.appendChild(el("span", "judge-row-gate", gate));
        if (entry.review) row.appendChild(el("span", "judge-row-review",
          "model said " + entry.review.outcome));
      }
      row.addEventListener("click", function () { onFocus(index); });
      box.appendChild(row);
    });
  }

  function renderRejected(entry) {
    var box = $("rejected");
    clear(box);
    box.hidden = entry.writable || Boolean(entry.absent);
    if (box.hidden) return;
    box.appendChild(el("strong", null, "This row is rejected and cannot be labelled here " +
      "(shown read-only)."));
    entry.rejections.forEach(function (rejection) {
      var p = el("p");
      p.appendChild(el("code", null, rejection.code));
      p.appendChild(text(" " + rejection.message));
      box.appendChild(p);
    });
  }

  // The model's verdict and reasoning, and beside it the human's why: the rater's own
  // note (with --rater), else every rater's.
  function renderReview(entry, rater) {
    var review = entry.review;
    var box = $("review");
    clear(box);
    box.hidden = !review;
    if (!review) return;
    var head = el("p");
    head.appendChild(el("strong", null, "The model said " + review.outcome));
    var samples = review.samples && review.samples.length > 1 ?
      " (samples: " + review.samples.join(", ") + ")" : "";
    head.appendChild(text(samples + (rater ? "; your label is " + (entry.expected || "\u2014") +
      "." : "; the label was " + (review.expected_then || "\u2014") +
      " when the report was made.")));
    box.appendChild(head);
    if (review.reasoning) box.appendChild(el("p", "review-reasoning", review.reasoning));
    var notes = rater ? (entry.note ? [{ rater: "Your", note: entry.note, own: true }] : []) :
      entry.ratings.filter(function (r) { return r.note; });
    notes.forEach(function (r) {
      box.appendChild(el("p", "review-note", (r.own ? "Your note: " : r.rater + " (" +
        r.label + ") noted: ") + r.note));
    });
  }

  // The note of the label row in focus: the rater's own (or the adjudication's); a note
  // typed before the row has a label waits for it (`draft`).
  function renderNote(entry, draft, mode) {
    var box = $("note");
    if (document.getElementById("note-text")) return;  // being edited: leave it alone
    clear(box);
    box.hidden = !mode || !entry.writable;
    if (box.hidden) return;
    var whose = mode === "adjudicate" ? "Adjudication note" : "Your note";
    if (draft) {
      box.appendChild(el("p", null, whose + " (saved with your label: p, f or n): " + draft));
    } else if (entry.note) {
      box.appendChild(el("p", null, whose + ": " + entry.note));
    } else {
      box.appendChild(el("p", "muted", "No note. Press c to say why."));
    }
  }

  // A text box for the note: Enter saves, Shift-Enter starts a new line, Escape cancels.
  function openNoteEditor(initial, onSave, onCancel) {
    var box = $("note");
    clear(box);
    box.hidden = false;
    var label = el("label", null, "Note (Enter saves, Escape cancels):");
    label.setAttribute("for", "note-text");
    var area = document.createElement("textarea");
    area.id = "note-text";
    area.maxLength = 4000;
    area.value = initial || "";
    area.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        var value = area.value;
        area.remove();
        onSave(value);
      } else if (event.key === "Escape") {
        event.preventDefault();
        area.remove();
        onCancel();
      }
    });
    box.appendChild(label);
    box.appendChild(area);
    area.focus();
  }

  // When adjudicating: what each rater said, and why the row is in the queue.
  function renderRatings(entry, adjudicate) {
    var box = $("ratings");
    clear(box);
    box.hidden = !adjudicate || !entry.ratings.length;
    if (box.hidden) return;
    var why = entry.conflict === "disagree" ? "The raters disagree." :
      entry.conflict === "expected" ? "The raters agree, but expected says otherwise." :
      "Settled: the adjudicated label is " + (entry.expected || "\u2014") + ".";
    box.appendChild(el("p", null, why + " Expected now: " + (entry.expected || "\u2014") + "."));
    var list = el("ul");
    entry.ratings.forEach(function (r) {
      list.appendChild(el("li", null, r.rater + ": " + r.label + (r.note ? " \u2014 " + r.note :
        " (no note)")));
    });
    box.appendChild(list);
  }

  function renderGate(gate, judge) {
    var box = $("gate");
    clear(box);
    box.hidden = !gate;
    if (!gate) return;
    box.className = "gate" + (gate.applies ? " gate-match" : " gate-miss");
    var who = judge ? "Gate of " + judge : "Gate";
    var sentence;
    if (gate.error) sentence = who + ": could not be decided (" + gate.error + ").";
    else if (gate.applies) {
      sentence = who + ": matches event" + (gate.matches.length > 1 ? "s " : " ") +
        gate.matches.map(function (i) { return i + 1; }).join(", ") +
        " (marked below): the judge runs on this conversation.";
    } else {
      sentence = who + ": does not match this conversation, so the judge would not run " +
        "on it (a gate miss; usually not_applicable).";
    }
    setText(box, sentence);
  }

  // The judge's rubric: a side panel in a wide window, a block to unfold in a narrow one.
  function renderRubric(judge, wide, open) {
    document.body.classList.toggle("rubric-wide", wide);
    document.body.classList.toggle("rubric-folded", wide && !open);
    var toggle = $("rubric-toggle");
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    $("rubric-body").hidden = !open;
    var title;
    if (wide) title = open ? "Fold the rubric" : "Rubric: " + judge.name;
    else {
      title = "Judge " + judge.name + ": " + judge.description +
        (open ? " (hide instructions)" : " (show instructions)");
    }
    setText($("rubric-title"), title);
    setText($("rubric-name"), judge.name);
    setText($("rubric-description"), judge.description);
    setText($("rubric-instructions"), judge.instructions);
  }

  // For each gated judge, its unlabelled gate misses and the one-step action (asks first).
  function renderBulk(judges, misses, onConfirm) {
    var bulk = $("bulk");
    clear(bulk);
    var gated = judges.filter(function (judge) { return misses[judge.name] !== null &&
      misses[judge.name] !== undefined; });
    bulk.hidden = !gated.length;
    gated.forEach(function (judge) {
      var count = misses[judge.name];
      var line = el("div", "bulk-judge");
      var of = judges.length > 1 ? " of " + judge.name : "";
      if (count === 0) {
        line.appendChild(el("span", null, "Gate misses" + of + ": none left unlabelled in " +
          "this file."));
        bulk.appendChild(line);
        return;
      }
      line.appendChild(el("span", null, "Gate misses" + of + ": " + count + " unlabelled " +
        "row(s) in this file do not match the judge's gate, so the judge would never run " +
        "on them. "));
      var start = button("Label the " + count + (count === 1 ? " gate miss" : " gate misses") +
        of + " not_applicable\u2026", judges.length > 1 ? null : "bulk-start");
      start.setAttribute("data-judge", judge.name);
      start.className = "bulk-start";
      start.addEventListener("click", function () { confirmBulk(line, judge.name, count, of,
                                                                onConfirm); });
      line.appendChild(start);
      bulk.appendChild(line);
    });
  }

  function confirmBulk(line, judge, count, of, onConfirm) {
    var open = $("bulk-confirm");
    if (open) open.remove();
    var box = el("div", "bulk-confirm");
    box.id = "bulk-confirm";
    box.appendChild(el("span", null, "Label " + count + " row(s)" + of + " not_applicable " +
      "in one step? They leave the queue. (u undoes it)"));
    var yes = button("Yes, label " + count + " rows", "bulk-yes");
    var no = button("Cancel");
    no.addEventListener("click", function () { box.remove(); });
    yes.addEventListener("click", function () {
      box.remove();
      onConfirm(judge, count);
    });
    box.appendChild(yes);
    box.appendChild(no);
    line.appendChild(box);
    yes.focus();
  }

  // "line 3 (conv_a)", "line 4 (conv_b, rejected)"; with several judges
  // "conv_a: billing line 3, helpful line 7 (rejected)".
  function remainingName(item, several) {
    var id = item.conversation_id || "conversation " + item.item;
    if (!several) {
      var entry = item.labels[0];
      return "line " + entry.line + " (" + id + (entry.rejected ? ", rejected)" : ")");
    }
    return id + ": " + item.labels.map(function (entry) {
      return entry.judge + " line " + entry.line + (entry.rejected ? " (rejected)" : "");
    }).join(", ");
  }

  // The end of the queue: what is labelled and, when something is not, which rows.
  function renderDone(overview, several, onGo) {
    var done = $("done");
    clear(done);
    done.hidden = false;
    var remaining = overview.remaining;
    var adjudicate = overview.mode === "adjudicate";
    var progress = progressText(overview.progress, overview.judges, adjudicate);
    if (!remaining.unlabelled && !remaining.rejected) {
      done.appendChild(el("p", null, "End of the queue: " + progress + ". Every label is " +
        "already saved; you can close this tab and stop the server with Ctrl-C. Next: " +
        "introspection judges split."));
      return;
    }
    var counts = remaining.unlabelled + (adjudicate ? " row(s) still in conflict" :
      " row(s) still unlabelled") + (remaining.rejected ?
      ", " + remaining.rejected + " rejected (read-only here; introspection check says why)" :
      "");
    done.appendChild(el("p", null, "End of the queue: " + progress + ". " + counts + ":"));
    var list = el("ul", "remaining");
    remaining.items.forEach(function (item) {
      var go = button(remainingName(item, several));
      go.className = "remaining-go";
      go.addEventListener("click", function () { onGo(item.item); });
      var li = el("li");
      li.appendChild(go);
      list.appendChild(li);
    });
    done.appendChild(list);
    if (remaining.more) {
      done.appendChild(el("p", null, "\u2026 and " + remaining.more + " more conversation(s)."));
    }
    done.appendChild(el("p", null, "Every label you made is saved. Go to one of them, or " +
      "stop with Ctrl-C: introspection judges label queues the unlabelled rows again."));
  }

  window.LabelView = {
    $: $, el: el, text: text, clear: clear, setText: setText, needsLabel: needsLabel,
    progressText: progressText, renderHead: renderHead, renderLabels: renderLabels,
    renderRejected: renderRejected, renderReview: renderReview, renderGate: renderGate,
    renderNote: renderNote, openNoteEditor: openNoteEditor, renderRatings: renderRatings,
    renderRubric: renderRubric, renderBulk: renderBulk, renderDone: renderDone,
  };
})();
