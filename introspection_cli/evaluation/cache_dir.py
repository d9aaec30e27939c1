"""Where the verdict cache and the files beside it (batches, the evaluation ledger) live.

Its own module, standard library only: ``judges status`` reads the ledger without
loading the cache's machinery (asyncio, its worker threads).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

CACHE_DIR_ENV = "INTROSPECTION_CACHE_DIR"


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$INTROSPECTION_CACHE_DIR``, else the platform's user cache dir for introspection."""
    override = (os.environ if environ is None else environ).get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    import platformdirs  # only runs that use the cache pay for it

    return Path(platformdirs.user_cache_dir("introspection"))
