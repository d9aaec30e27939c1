"""Several annotators: who labelled each calibration row, how, and why.

``judges/<name>.annotations.jsonl`` holds one line per (conversation_id,
snapshot_hash, rater). Modules, by responsibility::

    location.py   where a judge's file is (``check`` and ``judges eval`` need only that)
    record.py     one annotation: its value, its line, the rules for a rater's name
    file.py       reading the file (bounded, each line checked) and writing changes to it
    units.py      the conversations as the raters see them: who said what, the conflicts
    agreement.py  Krippendorff's alpha with its bootstrap interval, Cohen's kappa per pair,
                  per-class agreement (numpy, imported only there)

Everything but :mod:`.agreement` is standard library only: ``introspection
check`` validates annotation files and certificates read the conflicts.
"""
