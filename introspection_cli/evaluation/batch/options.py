"""What a ``--batch`` run is asked (how to wait), tells as it goes, and returns.

Light on purpose: the runner imports these on every run; the batch machinery
itself (:mod:`.dispatch`, the store, the SDK backends) only when ``--batch`` is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from introspection_cli.evaluation.batch.interface import BatchState
    from introspection_cli.evaluation.batch.reconcile import Reconciliation


@dataclass(frozen=True)
class BatchOptions:
    """How ``--batch`` waits: the first poll interval and the longest wait, in seconds."""

    poll_interval: float = 15.0
    #: The providers end a batch within 24 hours; an hour's margin on top.
    max_wait: float = 25 * 3600.0


class BatchEvents(Protocol):
    """What a batch run reports as it goes (the CLI prints it on stderr)."""

    def submitted(self, provider: str, batch_id: str, requests: int, *,
                  resumed: bool) -> None: ...

    def waiting(self, batches: int, options: BatchOptions) -> None: ...

    def polled(self, provider: str, state: BatchState) -> None: ...

    def collected(self, provider: str, state: BatchState,
                  reconciled: Reconciliation) -> None: ...


@dataclass(frozen=True)
class BatchRunResult:
    warnings: tuple[str, ...] = ()
    #: ``provider batch_id`` of each batch left running at the provider (max wait passed).
    still_running: tuple[str, ...] = ()
