"""How fast labelling is in the browser app, against the browser driver's own cost.

1. 50 rows labelled by keyboard in real headless Chromium (the one the browser
   tests find, driven by Playwright), timed from the first page load to
   the last save confirmed on the page, one key after the other (the next key
   once the save shows). Baseline, same run and same driver: the same 50 keys
   on a page that confirms each one at once, with no server behind it, so the
   ratio is what the app costs over Playwright's own round trips. Target <= 5.
2. What a label adds per row, keypress to "Saved" on the page:
   (ours - baseline) / 50. Target <= 0.1 s, the limit under which a response
   feels instant.

Run: python bench/label_speed.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))
from _timing import BenchResult, table  # noqa: E402

from tests.labelling.browser.chromium import FLAGS, find_chromium  # noqa: E402
from tests.labelling.browser.harness import LabelApp  # noqa: E402
from tests.labelling.browser.keyboard import label_by_keyboard  # noqa: E402
from tests.labelling.recipes import UNGATED_JUDGE, row, write_recipe  # noqa: E402

ROWS = 50
KEYS = [(line, "pfn"[line % 3]) for line in range(1, ROWS + 1)]
#: The baseline page: every key is "saved" at once, in the page itself.
NO_SERVER_PAGE = b"""<!doctype html><title>baseline</title><body data-ready="true">
<p>baseline</p><div id="status"></div><script>
var line = 1;
document.addEventListener("keydown", function () {
  document.getElementById("status").textContent = "Saved line " + line + ": done"; line++;
});
</script></body>"""


class _Baseline(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # the stdlib's name
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(NO_SERVER_PAGE)))
        self.end_headers()
        self.wfile.write(NO_SERVER_PAGE)

    def log_message(self, format: str, *args: Any) -> None:  # the stdlib's name
        pass


def _with_app(page: Any) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        rows = [row(f"conv_{n:03d}", f"Question {n}: I was charged twice, can I get a refund?")
                for n in range(1, ROWS + 1)]
        app = LabelApp.start(write_recipe(Path(tmp) / "r", {"helpful": (UNGATED_JUDGE, rows)}))
        try:
            return label_by_keyboard(page, app.url, KEYS)
        finally:
            app.kill()


def measure(runs: int) -> list[BenchResult]:
    from playwright.sync_api import sync_playwright

    baseline_server = ThreadingHTTPServer(("127.0.0.1", 0), _Baseline)
    threading.Thread(target=baseline_server.serve_forever, daemon=True).start()
    baseline_url = f"http://127.0.0.1:{baseline_server.server_address[1]}/"
    ours: list[float] = []
    baseline: list[float] = []
    try:
        with sync_playwright() as playwright:
            executable = find_chromium(os.environ, playwright.chromium.executable_path)
            browser = playwright.chromium.launch(executable_path=executable, args=FLAGS)
            for _ in range(runs):
                for timings, work in ((ours, _with_app),
                                      (baseline, lambda p: label_by_keyboard(p, baseline_url,
                                                                             KEYS))):
                    context = browser.new_context(viewport={"width": 660, "height": 900})
                    timings.append(work(context.new_page()))
                    context.close()
            browser.close()
    finally:
        baseline_server.shutdown()
        baseline_server.server_close()
    ours_s, baseline_s = statistics.median(ours), statistics.median(baseline)
    return [
        BenchResult(f"label {ROWS} rows by keyboard, load to last save", ours_s, "s",
                    "same keys, no server", baseline_s, 5.0),
        BenchResult("time a label adds per row (key to saved)",
                    max(0.0, ours_s - baseline_s) / ROWS, "s", None, None, 0.1),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    print(table(measure(parser.parse_args().runs)))


if __name__ == "__main__":
    main()
