"""Where the user's configuration lives: the stored login and the price table.

Its own module, standard library only: ``judges eval`` looks for the price table
on every run without loading the runtime client's credential handling.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

CONFIG_DIR_ENV = "INTROSPECTION_CONFIG_DIR"


def config_dir(environ: Mapping[str, str]) -> Path:
    """``$INTROSPECTION_CONFIG_DIR``, else the platform's user config dir for introspection."""
    override = environ.get(CONFIG_DIR_ENV)
    if override:
        return Path(override).expanduser()
    # Imported here: only commands that read the configuration need it, never `check`.
    import platformdirs

    return Path(platformdirs.user_config_dir("introspection"))
