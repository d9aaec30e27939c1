"""Reports of a judge run, in layers that import one way only.

* the report model, at the bottom: :mod:`.metrics` (statistics over row
  outcomes), :mod:`.model` (the JSON report, its schema and version) and
  :mod:`.gates` (thresholds read off a report);
* comparisons on it: :mod:`.baseline`;
* :mod:`.formatting`: the formatting helpers renderers share;
* renderers on top, each independent of the others: :mod:`.render_text`,
  :mod:`.render_markdown`, :mod:`.render_json`;
* :mod:`.formats`, which picks a renderer by name.

The contracts in ``pyproject.toml`` (``[tool.importlinter]``) enforce this
order; ``tests/test_architecture.py`` runs them.
"""
