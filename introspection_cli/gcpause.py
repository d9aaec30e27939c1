"""Pausing the cyclic garbage collector while a command builds data that lives for the run.

Reading a calibration file builds tens of thousands of containers (every row's
parsed JSON) and keeps them for the whole run. None of them is in a reference
cycle, so the collector's passes over them free nothing; but each pass is
triggered by allocations and walks everything still young, and the older
generations' passes walk the lot again, so with the collector running a fifth to
a quarter of the time spent reading a file goes to collections. Reference
counting still frees everything as usual while the collector is paused.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """The cyclic collector off inside the block, and back as it was after it (nestable).

    Merely pausing defers the work: the first collection after the block walks
    everything allocated in it. With ``freeze``, what exists after the block is
    frozen (:func:`gc.freeze`), so no later collection walks it again; a frozen
    object is still freed by reference counting, only a cycle among frozen
    objects would stay until the process exits.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was_enabled:
            gc.enable()
