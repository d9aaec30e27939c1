"""Why a provider's samples stop being sent: values the runner reads with or without a call.

Apart from :mod:`.dispatch` (which needs the event loop), so a run that sends
nothing imports no asyncio to recognise them.
"""

from __future__ import annotations

from introspection_cli.evaluation.providers import ProviderAuthError, ProviderError


class ProviderStopped(ProviderError):
    """Not sent: the breaker opened for this provider (the message says why)."""

    def __init__(self, message: str, *, refused: bool) -> None:
        super().__init__(message)
        self.refused = refused


class AuthAbort(Exception):
    """Cancels the run once a provider has rejected the API key."""

    def __init__(self, error: ProviderAuthError) -> None:
        super().__init__(str(error))
        self.error = error
