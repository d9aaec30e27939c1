"""Production estimates behind ``judges estimate``: what the judge's verdicts say about the
true pass rate.

:mod:`.counts` holds the standard-library value types (the calibration's confusion
counts, the production counts, the refusal); :mod:`.simplex`, :mod:`.threeway` and
:mod:`.ppi` need numpy, which only ``judges estimate`` imports. The formulas and
when each estimator applies are in ``docs/statistics.md``.
"""
