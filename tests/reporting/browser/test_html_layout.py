"""The ``--html`` report's layout in real headless Chromium: wide, narrow and printed.

The report is the one :mod:`tests.reporting.browser.test_html_report` builds (a
real run: baseline, gates, two models, errors, hostile text). A wide window gives
its width to the tables and keeps prose at a readable measure; an 850 px window
has nothing wider than itself (a table too wide scrolls inside its own box);
printing opens every fold, keeps every table on the paper and puts no ink on dark
fills. Everything is measured in the page (widths, positions, colours), never
timed. Screenshots at 1280 px and 850 px, and the printed PDF, are saved as
artifacts.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from introspection_cli.evaluation.outcomes import EvalRun, JudgeRun, RowOutcome, Usage
from introspection_cli.reporting.assemble import build_report
from introspection_cli.reporting.render_html import render_html
from tests.evaluation.conftest import _clean_env, stub  # noqa: F401 (fixtures)
from tests.labelling.browser.conftest import artifacts, browser  # noqa: F401 (fixtures)
from tests.reporting.browser.test_html_report import html_report  # noqa: F401 (fixture)

#: Chromium's A4 page less the report's 12 mm print margins, in CSS pixels.
PRINTED_WIDTH = round((210 - 2 * 12) / 25.4 * 96)

#: Each table's width, its box's width, and whether it sits in a scrolling box.
TABLES = """() => [...document.querySelectorAll('table')].map(table => ({
  name: table.closest('section.baseline') ? 'baseline' : table.className || 'models',
  width: table.getBoundingClientRect().width,
  box: table.parentElement.clientWidth,
  scrolls: getComputedStyle(table.parentElement).overflowX === 'auto'}))"""

#: The widest paragraph, in characters of its own font (``0`` widths).
WIDEST_PARAGRAPH = """() => Math.max(...[...document.querySelectorAll('p')].map(p => {
  const probe = document.createElement('span');
  probe.textContent = '0'.repeat(10);
  p.appendChild(probe);
  const ch = probe.getBoundingClientRect().width / 10;
  probe.remove();
  return p.getBoundingClientRect().width / ch;
}))"""

#: Elements whose background is dark (relative luminance under 0.4), as tag.class.
DARK_FILLS = """() => [...document.querySelectorAll('*')].filter(element => {
  const [r, g, b, a = 1] = getComputedStyle(element).backgroundColor.match(/[\\d.]+/g).map(Number);
  const linear = c => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  return a > 0 && 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b) < 0.4;
}).map(element => element.tagName + '.' + element.className)"""


def _open(browser: Any, report: Path, width: int) -> tuple[Any, Any]:  # noqa: F811
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(report.as_uri())
    page.wait_for_selector("html[data-ready=true]")
    return context, page


def _box(page: Any, selector: str) -> dict[str, float]:
    return page.locator(selector).first.bounding_box()  # type: ignore[no-any-return]


def test_a_wide_window_gives_its_width_to_the_tables(
        html_report: Path, browser: Any, artifacts: Path) -> None:  # noqa: F811
    context, page = _open(browser, html_report, 1280)
    tables = page.evaluate(TABLES)
    splits = tables[0]  # the first table of the page is the judge's split table
    assert splits["width"] / 1280 >= 0.85, splits
    for table in tables:
        assert table["width"] <= table["box"] + 0.5, table  # nothing scrolls at 1280 px
        if table["name"] in ("splits", "models", "baseline"):
            assert table["width"] / 1280 >= 0.85, table
    # Long prose keeps a readable measure, however wide the window.
    assert page.evaluate(WIDEST_PARAGRAPH) <= 80
    # The gates stand beside the confusion heat map.
    gates, heat = _box(page, "ul.gates"), _box(page, "table.heat")
    assert heat["x"] >= gates["x"] + gates["width"]
    assert abs(heat["y"] - gates["y"]) < heat["height"]
    # An unfolded row shows the reasoning beside the conversation it judged.
    page.locator("#expand-all").click()
    page.wait_for_selector("details.row[open] .transcript .ix-event")
    why = _box(page, "details.row[open] .why")
    conversation = _box(page, "details.row[open] .transcript")
    assert conversation["x"] >= why["x"] + why["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    page.screenshot(path=str(artifacts / "eval-report-1280.png"), full_page=True)
    context.close()


def test_an_850_px_window_has_nothing_wider_than_itself(
        html_report: Path, browser: Any, artifacts: Path) -> None:  # noqa: F811
    context, page = _open(browser, html_report, 850)
    page.locator("#expand-all").click()
    page.wait_for_selector("details.row[open] .transcript .ix-event")
    assert page.evaluate("document.documentElement.scrollWidth") <= 850
    tables = page.evaluate(TABLES)
    for table in tables:
        assert table["width"] <= table["box"] + 0.5 or table["scrolls"], table
    # The split table fits as it is: the bounds wrap under the values.
    splits = tables[0]
    assert splits["width"] <= splits["box"] + 0.5, splits
    # One column: the heat map under the gates, the conversation under the reasoning.
    assert _box(page, "table.heat")["y"] > _box(page, "ul.gates")["y"]
    assert (_box(page, "details.row[open] .transcript")["y"]
            > _box(page, "details.row[open] .why")["y"])
    page.screenshot(path=str(artifacts / "eval-report-850.png"), full_page=True)
    context.close()


def _widest_split_table() -> dict[str, Any]:
    """A report whose split table has every column (three samples a row: ``unstable``)
    and a value in every cell but the empty test split's: each other split holds 2,400 rows
    of all three labels, right and wrong."""
    cases = (("pass", "pass"), ("pass", "fail"), ("fail", "fail"), ("fail", "pass"),
             ("not_applicable", "not_applicable"), ("not_applicable", "pass"))
    rows = [RowOutcome(line, f"conv_{line}", split, expected, outcome,
                       (outcome, outcome, "pass"), outcome != "pass", "reasoning")
            for line, (split, (expected, outcome)) in enumerate(
                ((split, case) for split in ("train", "dev", None) for case in cases
                 for _ in range(400)), start=1)]
    return build_report(EvalRun("recipe", (JudgeRun("billing", "openai", "gpt-x",
                                                     tuple(rows)),), Usage(), samples=3))


def test_the_widest_split_table_fits_an_850_px_window(
        browser: Any, tmp_path: Path) -> None:  # noqa: F811
    report = _widest_split_table()
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(report), encoding="utf-8")
    context, page = _open(browser, page_file, 850)
    splits = page.evaluate(TABLES)[0]
    assert splits["name"] == "splits"
    assert page.locator("table.splits td.null").count() == 4  # only the empty test split
    assert page.locator("table.splits th").all_inner_texts()[5] == "unstable"
    assert splits["width"] <= splits["box"] + 0.5, splits
    context.close()


def test_printing_opens_every_fold_keeps_tables_on_the_paper_and_no_dark_fill(
        html_report: Path, browser: Any, artifacts: Path) -> None:  # noqa: F811
    context, page = _open(browser, html_report, PRINTED_WIDTH)
    folded_before = page.locator("details:not([open])").count()
    assert folded_before > 0
    # Runs after the page's own beforeprint handler (registered first): what it sees is
    # what is printed.
    page.evaluate("""() => addEventListener('beforeprint', () => { window.printedState = {
        folded: document.querySelectorAll('details:not([open]):not(.ix-more)').length,
        rows: document.querySelectorAll('details.row').length,
        drawn: document.querySelectorAll('details.row .transcript[data-drawn=true]').length};
    })""")
    pdf = page.pdf(format="A4")
    assert pdf.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page\b", pdf)) >= 2
    (artifacts / "eval-report.pdf").write_bytes(pdf)
    printed = page.evaluate("window.printedState")
    assert printed["folded"] == 0 and printed["drawn"] == printed["rows"] == 3, printed
    # After printing the page is folded as it was.
    assert page.locator("details:not([open])").count() == folded_before

    page.emulate_media(media="print")
    page.evaluate("dispatchEvent(new Event('beforeprint'))")
    assert page.locator("#expand-all").is_hidden() and page.locator("nav").is_hidden()
    assert page.evaluate("document.documentElement.scrollWidth") <= PRINTED_WIDTH
    for table in page.evaluate(TABLES):
        assert table["width"] <= table["box"] + 0.5, table  # no table is cut at the edge
    assert page.evaluate(DARK_FILLS) == []
    page.screenshot(path=str(artifacts / "eval-report-print.png"), full_page=True)
    context.close()
