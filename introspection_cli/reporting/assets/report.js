/* The HTML eval report's only behaviour: a row's conversation transcript is drawn
 * (by IntrospectionTranscript, DOM APIs and textContent only) when its row is
 * unfolded. Before printing every fold opens (rows, the baseline's lists, a
 * transcript's own folds) so paper loses nothing, and closes again after; only a
 * text's "Show all N characters" (over 65,536 of them) stays folded: the print shows
 * its first 65,536 and the count. The conversations arrive as JSON data in the
 * application/json element #report-data, never as markup. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var transcripts = data.transcripts || {};

  function draw(details) {
    var holder = details.querySelector(".transcript");
    if (!holder || holder.getAttribute("data-drawn") === "true") return;
    holder.setAttribute("data-drawn", "true");
    var key = holder.getAttribute("data-key");
    if (Object.prototype.hasOwnProperty.call(transcripts, key)) {
      holder.appendChild(IntrospectionTranscript.render(transcripts[key], {}));
    } else {
      var note = document.createElement("p");
      note.className = "note";
      note.textContent = holder.getAttribute("data-missing") || "No transcript in this report.";
      holder.appendChild(note);
    }
  }

  var rows = Array.prototype.slice.call(document.querySelectorAll("details.row"));
  rows.forEach(function (details) {
    details.addEventListener("toggle", function () { if (details.open) draw(details); });
  });

  function setAll(open) {
    rows.forEach(function (details) { if (open) draw(details); details.open = open; });
  }
  var expand = document.getElementById("expand-all");
  var collapse = document.getElementById("collapse-all");
  if (expand) expand.addEventListener("click", function () { setAll(true); });
  if (collapse) collapse.addEventListener("click", function () { setAll(false); });
  var openedForPrint = [];
  window.addEventListener("beforeprint", function () {
    rows.forEach(draw);
    openedForPrint = Array.prototype.slice.call(
      document.querySelectorAll("details:not([open]):not(.ix-more)"));
    openedForPrint.forEach(function (details) { details.open = true; });
  });
  window.addEventListener("afterprint", function () {
    openedForPrint.forEach(function (details) { details.open = false; });
    openedForPrint = [];
  });
  document.documentElement.setAttribute("data-ready", "true");
})();
