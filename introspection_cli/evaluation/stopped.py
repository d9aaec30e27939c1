"""Why a provider's samples stop being sent, or go without a result: values the settler
reads with or without a call.

Apart from :mod:`.dispatch` (which needs the event loop) and the batch package
(which re-exports :class:`ResultNotCollected`), so a run that sends nothing imports
neither asyncio nor the batch layer to recognise them.
"""

from __future__ import annotations

from introspection_cli.evaluation.providers import (
    ProviderAuthError,
    ProviderError,
    ProviderServiceError,
)


class ProviderStopped(ProviderError):
    """Not sent: the breaker opened for this provider (the message says why)."""

    def __init__(self, message: str, *, refused: bool) -> None:
        super().__init__(message)
        self.refused = refused


class NotSubmitted(ProviderStopped):
    """Not sent: the batch that was to hold the request could not be created (the
    provider's refusal, ``refused``, or its failure); not a request the provider ran."""


class AuthAbort(Exception):
    """Cancels the run once a provider has rejected the API key."""

    def __init__(self, error: ProviderAuthError) -> None:
        super().__init__(str(error))
        self.error = error


class ResultNotCollected(ProviderServiceError):
    """A request whose result this run did not get: its batch is still running, or its
    results could not be read. The next run collects it from the same batch."""
