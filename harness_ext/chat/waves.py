"""``lc-chat``'s concurrent calls: a bad reply costs at most one wave (issue 29).

lm-eval 0.4.13 retries each concurrent call on its own and lets the others run on: an unreadable
endpoint is asked every context, ``max_retries`` times, and the run ends in ``Server disconnected``.
Here the first failure that will not heal stops new calls:

* a reply that cannot be read (:class:`ValueError`: not a chat completion, a reading error) is not
  retried, and no further call is sent;
* any other failure (an HTTP error, a time-out) is retried with lm-eval's back-off, the call keeping
  its slot meanwhile, and stops new calls when its last attempt fails;
* calls already in flight are awaited (never resent), then the first failure is raised as it was,
  naming the endpoint and the reason.

After a bad reply the endpoint sees at most ``num_concurrent`` calls plus one call's retries.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import aiohttp

from logic_consistency.credentials import redact

__all__ = ["Stopped", "send_in_waves"]

eval_logger = logging.getLogger(__name__)

#: Back-off before attempt n + 1 (seconds): lm-eval's ``wait_exponential(multiplier=0.5, min=1, max=10)``.
BACKOFF_MIN, BACKOFF_MAX = 1.0, 10.0


class Stopped(RuntimeError):
    """A call not sent because an earlier one failed for good."""


def _chunks(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[start : start + size] for start in range(0, len(items), max(1, size))]


def _backoff(attempt: int) -> float:
    return float(min(BACKOFF_MAX, max(BACKOFF_MIN, 0.5 * 2**attempt)))


async def send_in_waves(
    send: Callable[..., Awaitable[Any]],
    requests: Sequence[Any],
    cache_keys: Sequence[Any],
    ctxlens: Sequence[Any],
    *,
    concurrent: int,
    batch_size: int,
    max_retries: int,
    call_kwargs: Mapping[str, Any],
) -> list[Any]:
    """Each batch's answer from ``send(session, messages, cache_keys=..., ctxlens=..., **call_kwargs)``.

    Raises:
        The first failure that stopped the calls (see the module docstring).
    """
    failures: list[BaseException] = []
    slots = asyncio.Semaphore(concurrent)

    async def one(messages: Any, keys: Any, lens: Any) -> Any:
        async with slots:  # held through the back-off: a failing endpoint never gets a new call meanwhile
            for attempt in range(1, max_retries + 1):
                if failures:
                    raise Stopped("not sent: an earlier call failed")
                try:
                    return await send(session, messages, cache_keys=keys, ctxlens=lens, **call_kwargs)
                except ValueError as error:  # a reply that cannot be read: the same again would fail too
                    failures.append(error)
                    raise
                except Exception as error:
                    if attempt >= max_retries:
                        failures.append(error)
                        raise
                    eval_logger.warning(
                        "lc-chat: attempt %d of %d failed (%s); retrying",
                        attempt,
                        max_retries,
                        redact(f"{type(error).__name__}: {error}"),
                    )
                await asyncio.sleep(_backoff(attempt))
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    connector = aiohttp.TCPConnector(limit=concurrent)
    async with aiohttp.ClientSession(connector=connector) as session:
        batches = zip(
            _chunks(requests, batch_size), _chunks(cache_keys, batch_size), _chunks(ctxlens, batch_size), strict=True
        )
        tasks = [asyncio.create_task(one(messages, keys, lens)) for messages, keys, lens in batches]
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)  # in-flight calls end before the session
    if failures:
        raise failures[0]
    for outcome in outcomes:
        if isinstance(outcome, BaseException):  # pragma: no cover - every failure is recorded first
            raise outcome
    return list(outcomes)
