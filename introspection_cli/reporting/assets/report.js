/* The HTML eval report's only behaviour: a row's conversation transcript is drawn
 * (by IntrospectionTranscript, DOM APIs and textContent only) when its row is
 * unfolded, or for every row before printing. The conversations arrive as JSON data
 * in the application/json element #report-data, never as markup. */
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
  window.addEventListener("beforeprint", function () { setAll(true); });
  document.documentElement.setAttribute("data-ready", "true");
})();
