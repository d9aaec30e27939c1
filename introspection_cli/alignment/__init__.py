"""``introspection judges align``: improve a judge's rubric from its train disagreements.

A round asks an optimizer model for one targeted edit of the judge's
``instructions`` (:mod:`.optimizer`), refuses a candidate that quotes a row
outside ``train`` (:mod:`.leakage`), evaluates it on ``train`` and ``dev``
through the ordinary judge runner (the verdict cache applies), and keeps it
only when the dev comparison passes every keep rule (:mod:`.keep_rules`).
The ``test`` split is never rendered or sent. :mod:`.yaml_block` writes the
kept rubric back into the judge file, changing no byte outside its
``instructions`` value. The package never imports the reports, the workflows
or the command line; its report is printed by
:mod:`introspection_cli.reporting.render_align`.
"""
