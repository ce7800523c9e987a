"""The ``api_limits`` budget of one API endpoint across a Ray cluster: a named actor granting leases.

Each unit of a model whose endpoint ``api_limits`` caps holds ``num_concurrent`` slots of its
endpoint's :class:`EndpointBudget` (one Ray named actor per endpoint) while its ``lm_eval`` runs.
Leases are time-limited and renewed by the holder, so a killed worker's slots come back.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ray.actor import ActorHandle

__all__ = ["LEASE_SECONDS", "EndpointBudget", "lease"]

#: Seconds an endpoint lease lasts without renewal (a dead holder's slots come back after it).
LEASE_SECONDS = 30.0


class EndpointBudget:
    """A cluster-wide counting semaphore of one API endpoint, with leases (a Ray named actor)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.leases: dict[str, tuple[int, float]] = {}
        self.peak = 0

    def _expire(self) -> None:
        now = time.monotonic()
        self.leases = {token: held for token, held in self.leases.items() if held[1] > now}

    def acquire(self, token: str, slots: int, ttl: float) -> bool:
        """Take ``slots`` for ``ttl`` seconds if they are free."""
        self._expire()
        if sum(slots for slots, _ in self.leases.values()) + slots > self.limit:
            return False
        self.leases[token] = (slots, time.monotonic() + ttl)
        self.peak = max(self.peak, sum(slots for slots, _ in self.leases.values()))
        return True

    def renew(self, token: str, ttl: float) -> None:
        """Extend a lease."""
        if token in self.leases:
            self.leases[token] = (self.leases[token][0], time.monotonic() + ttl)

    def release(self, token: str) -> None:
        """Give a lease back."""
        self.leases.pop(token, None)

    def usage(self) -> tuple[int, int]:
        """Slots in use now, and the most ever in use at once."""
        self._expire()
        return sum(slots for slots, _ in self.leases.values()), self.peak


@contextlib.contextmanager
def lease(budget: ActorHandle | None, slots: int) -> Iterator[None]:
    """Hold ``slots`` of ``budget`` (an :class:`EndpointBudget` actor handle, or ``None``) meanwhile."""
    if budget is None:
        yield
        return
    import ray

    token = uuid.uuid4().hex
    while not ray.get(budget.acquire.remote(token, slots, LEASE_SECONDS)):
        time.sleep(0.2)
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(LEASE_SECONDS / 3):
            budget.renew.remote(token, LEASE_SECONDS)

    renewer = threading.Thread(target=renew, daemon=True)
    renewer.start()
    try:
        yield
    finally:
        stop.set()
        ray.get(budget.release.remote(token))
