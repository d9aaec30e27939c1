"""Turning exported calibration rows into a dataset: labels and splits.

Modules, by responsibility::

    calibration.py  one judge's calibration file as read: every line, verified
    split.py        ``judges split``: stratified, deterministic, frozen assignments
    setlabels.py    ``judges label --set LINE=LABEL[:SPLIT]``
    sheet.py        ``judges label --to-csv`` / ``--from``: a sheet for a spreadsheet
    sheet_raters.py the sheet's ``rater`` and ``note`` columns
    rating.py       a rater's label: their annotation, and what goes to ``expected``
    transcript.py   a conversation as plain text (the sheet's transcript column)
    app/            ``judges label``: the local labelling web app

Every write goes through :mod:`introspection_cli.fixture.byterule`. Nothing here
calls a model or the runtime, and nothing imports the model SDKs or Jinja2.
"""
