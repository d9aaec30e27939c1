"""Every renderer of the tool, and the values they render, in layers that import one way.

* values, at the bottom: :mod:`.metrics` (statistics over row outcomes),
  :mod:`.model` (the JSON eval report, its schema and version), :mod:`.report` (that
  report as frozen dataclasses, with ``as_json()`` and ``from_json()``), :mod:`.outputs`
  (what certify, verify, estimate and the dry run print),
  :mod:`.doctor_findings` (doctor's findings), :mod:`.status_values` (what
  ``judges status`` prints), :mod:`.plan_values` (``judges plan``'s, on them) and
  :mod:`.align_values` (``judges align``'s); :mod:`.gates` (thresholds read off a
  report);
* comparisons on the eval report: :mod:`.baseline` (against an earlier report)
  and :mod:`.model_comparison` (several ``--model`` runs of one judge);
  :mod:`.assemble` builds a run's report once, with its costs, raters,
  comparisons and gates;
* helpers renderers share: :mod:`.formatting` (the eval report's) and
  :mod:`.rule_help` (each check code's help, for SARIF), on :mod:`.sentences` (the
  typed report's wording);
* renderers, each independent of the others: the eval report's
  (:mod:`.render_text`, :mod:`.render_markdown`, :mod:`.render_json`,
  :mod:`.render_junit`, :mod:`.render_html`), check's (:mod:`.render_check`,
  with :mod:`.render_check_sarif` on it), doctor's, certify's, estimate's, the
  dry run's, ``judges render``'s (:mod:`.render_prompt`), ``judges plan``'s
  (:mod:`.render_plan`), ``judges status``'s (:mod:`.render_status`) and ``judges
  align``'s (:mod:`.render_align`), and
  :mod:`.render_document` (the JSON of a result that is its document);
* :mod:`.registry` at the top, which finds a renderer by (report kind, format)
  and imports it only then.

Workflows build the values and render them through the registry; the CLI only
writes out the :class:`~introspection_cli.errors.CommandResult`. The contracts in
``pyproject.toml`` (``[tool.importlinter]``) enforce this order, and every module
of the package must have a place in it; ``tests/test_architecture.py`` runs them.
"""
