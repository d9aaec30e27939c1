"""Reports of a judge run, in layers that import one way only.

* the report model, at the bottom: :mod:`.metrics` (statistics over row
  outcomes), :mod:`.model` (the JSON report, its schema and version) and
  :mod:`.gates` (thresholds read off a report);
* comparisons on it: :mod:`.baseline` (against an earlier report) and
  :mod:`.model_comparison` (several ``--model`` runs of one judge);
* :mod:`.formatting`: the formatting helpers renderers share;
* renderers on top, each independent of the others: :mod:`.render_text`,
  :mod:`.render_markdown`, :mod:`.render_json`, :mod:`.render_junit`,
  :mod:`.render_html`;
* :mod:`.formats`, which picks a renderer by name.

The contracts in ``pyproject.toml`` (``[tool.importlinter]``) enforce this
order, and every module of the package must have a place in it;
``tests/test_architecture.py`` runs them.
"""
