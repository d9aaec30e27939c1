"""``judges eval --batch``: every uncached sample through the providers' batch APIs.

About half the price of direct calls, for a wait of minutes to hours. The
requests are exactly the direct path's, keyed the same way, so their results
land in the verdict cache like any call. Submitted batches are recorded beside
the cache (:mod:`.store`) and resumed by the next run if this one is
interrupted. A backend's SDK is imported only when it is created.
"""

from __future__ import annotations

from introspection_cli.evaluation.batch.interface import (
    BatchBackend,
    BatchItem,
    BatchState,
    ItemResult,
    NoBatchApi,
    ResultNotCollected,
)
from introspection_cli.evaluation.batch.options import BatchEvents, BatchOptions, BatchRunResult

# The machinery (dispatch, store, sink, the SDK backends) is imported from its own
# modules, and only by a --batch run: a direct run loads nothing more than these.
__all__ = [
    "BatchBackend",
    "BatchEvents",
    "BatchItem",
    "BatchOptions",
    "BatchRunResult",
    "BatchState",
    "ItemResult",
    "NoBatchApi",
    "ResultNotCollected",
]
