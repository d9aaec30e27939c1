"""The batch layer's values and its one abstract class, one per provider's batch API.

A :class:`BatchBackend` submits requests as one provider batch, reports the
batch's state, and streams its results back as ``(key, reply or error)`` pairs,
with an :class:`UnreadableLine` for each line that is no result (the reconciler,
:mod:`.reconcile`, accounts for every request from them).
The key is the sample's verdict-cache key, sent as the request's ``custom_id``:
a batch result and a direct call of the same request are one cache entry.
What a result means (a verdict or not) is decided where direct replies are,
by the settler (:mod:`..settle`); a backend only reads the provider's formats.
"""

from __future__ import annotations

import abc
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from introspection_cli.diagnostics import escape_text
from introspection_cli.evaluation.providers.interface import (
    ModelReply,
    ModelRequest,
    ProviderError,
)
from introspection_cli.evaluation.stopped import ResultNotCollected as ResultNotCollected

#: One request's result: the model's reply, or why there is none (a
#: ``ProviderServiceError`` for a request the provider failed, expired or
#: cancelled; a ``ProviderBadResponse`` for a result that is not a reply).
ItemResult = ModelReply | ProviderError

#: The longest provider message kept in an error row.
_MESSAGE_CHARS = 300
#: What an id from the provider (a batch, a file) may look like: it goes into URLs,
#: the batch store and messages, so nothing but a plain id will do.
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}")
_STATUS = re.compile(r"[a-z_]{1,40}")


@dataclass(frozen=True, slots=True)
class BatchItem:
    """One request to put in a batch: its verdict-cache key (the ``custom_id``) and body."""

    key: str
    request: ModelRequest


@dataclass(frozen=True, slots=True)
class BatchState:
    """A batch as its last retrieval described it.

    ``status`` is the provider's word for it (``validating``, ``in_progress``,
    ``ended``...). ``failure`` says why a batch failed as a whole (OpenAI's
    ``failed``: nothing in it ran). ``results`` is what the backend needs to read
    the results once ``ended`` (file ids); opaque to everyone else.
    """

    batch_id: str
    status: str
    ended: bool
    done: int
    total: int
    failure: str | None = None
    results: Any = None


@dataclass(frozen=True, slots=True)
class UnreadableLine:
    """A line of a batch's results that is no result.

    ``problem`` is ``torn`` (not a whole JSON object), ``too large`` (over the line
    cap) or ``unnamed`` (an object without a ``custom_id``); ``custom_id`` is the
    request a torn or oversized line still names at its start, if any.
    """

    problem: str
    custom_id: str | None = None


#: What a backend's results stream holds: one result each, or a line that is none.
ResultLine = tuple[str, ItemResult] | UnreadableLine


class BatchGone(Exception):
    """The provider does not know this batch (deleted, another account, or long expired)."""


class NoBatchApi(ProviderError):
    """The endpoint answers the batch API's first call with 404 (or 405): a server
    without batch endpoints (many local ones), where no batch can be made."""


class BatchBackend(abc.ABC):
    """One provider's batch API, through its official SDK."""

    #: ``openai`` or ``anthropic``.
    provider: str
    #: The most requests, and request bytes, one batch may hold (below the provider's limits).
    max_requests: int
    max_bytes: int

    @property
    @abc.abstractmethod
    def endpoint(self) -> str:
        """The base URL batches are created at (recorded beside each batch id)."""

    def group_of(self, item: BatchItem) -> str:
        """Items of different groups never share a batch (OpenAI: one model per batch)."""
        return ""

    @abc.abstractmethod
    def encode(self, item: BatchItem) -> bytes:
        """``item`` as the provider's batch format holds it (one JSONL line's bytes)."""

    @abc.abstractmethod
    async def submit(self, items: Sequence[BatchItem], encoded: Sequence[bytes]) -> str:
        """Create one batch of ``items`` (``encoded`` as :meth:`encode` made them); its id."""

    @abc.abstractmethod
    async def retrieve(self, batch_id: str) -> BatchState:
        """The batch's current state; :class:`BatchGone` when the provider has no such batch."""

    @abc.abstractmethod
    def results(self, state: BatchState, tool_names: Mapping[str, str], *, requests: int
                ) -> AsyncIterator[ResultLine]:
        """Every line of an ended batch's results, as ``(custom_id, result)`` or an
        :class:`UnreadableLine`, read as a stream.

        ``tool_names`` maps a custom_id to its request's forced tool (the verdict tool
        for a request this run does not know); ``requests`` is how many the batch
        holds (by this tool's record, not the provider's count), which bounds how
        many lines are read.
        """

    @abc.abstractmethod
    def missing_reason(self, state: BatchState) -> str:
        """Why a request of this ended batch has no result at all."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release network resources."""


def plain_id(value: object) -> str | None:
    """``value`` if it is a plain id (OpenAI ``batch_...``, ``file-...``; Anthropic
    ``msgbatch_...``), else None."""
    return value if isinstance(value, str) and _PLAIN_ID.fullmatch(value) else None


def status_word(value: object) -> str:
    """A batch status as the provider sent it, if it is one plain word; else ``unknown``."""
    return (value if isinstance(value, str) and _STATUS.fullmatch(value) is not None
            else "unknown")


def provider_text(value: object) -> str:
    """A message the provider sent, safe for a one-line error: escaped and shortened."""
    text = escape_text(str(value))
    return text if len(text) <= _MESSAGE_CHARS else text[:_MESSAGE_CHARS] + "..."
