"""``lc-chat``'s transport: one POST with a total deadline, and a reply checked before it is read.

lm-eval 0.4.13 sends a request without concurrency through ``requests`` with ``timeout=`` (a bound
on each socket read, so an endpoint that trickles one byte a second never ends), and reads every
reply with ``json()`` and indexing (a login page or ``choices: []`` ends in a bare
``JSONDecodeError`` or ``IndexError``). ``lc-chat`` sends every request, with or without
concurrency, through :func:`post`: aiohttp's ``ClientTimeout(total=timeout)`` bounds the whole
attempt (connection, sending, headers and body), and :func:`checked_reply` turns anything that is
not a chat completion into one :class:`ReplyError` naming the endpoint (as published: scheme, host and
port, never its path or query, :func:`~logic_consistency.credentials.url_origin`). A failed attempt is retried
(``max_retries``) like any failed call; the last failure ends the run.
"""

from __future__ import annotations

import asyncio
import http
import json
import ssl
from collections.abc import Mapping
from typing import Any

import aiohttp

from logic_consistency.credentials import redact, url_origin


class ReplyError(ValueError):
    """A reply that is not a usable chat completion (the message names the endpoint)."""


class EndpointTimeout(TimeoutError):
    """An attempt that did not end within its total deadline (the message names the endpoint)."""


class EndpointError(Exception):
    """An HTTP error status (retried by the caller). Its message names the endpoint as published (scheme,
    host and port) and the status: never aiohttp's line, which holds the whole URL (a token in its path)."""

    def __init__(self, url: str, status: int) -> None:
        known = status in {int(code) for code in http.HTTPStatus}  # the standard phrase, never the endpoint's reason
        phrase = f" ({http.HTTPStatus(status).phrase})" if known else ""
        super().__init__(f"lc-chat: base_url={url_origin(url)} answered HTTP {status}{phrase}")
        self.status = status


def ssl_setting(verify_certificate: bool, ca_cert_path: str | None) -> ssl.SSLContext | bool:
    """aiohttp's ``ssl=`` for lm-eval's ``verify_certificate`` and ``ca_cert_path`` arguments."""
    if ca_cert_path:
        return ssl.create_default_context(cafile=ca_cert_path)
    return bool(verify_certificate)


async def post(
    session: aiohttp.ClientSession,
    url: str,
    payload: Mapping[str, Any],
    *,
    headers: Mapping[str, str] | None,
    timeout: float,
    ssl_context: ssl.SSLContext | bool = True,
) -> dict[str, Any]:
    """POST ``payload``; the checked reply, or an error naming ``url``.

    Raises:
        EndpointTimeout: The attempt took longer than ``timeout`` seconds in all.
        EndpointError: An HTTP error status (retried by the caller).
        ReplyError: A 2xx reply that is not a chat completion.
    """

    async def attempt() -> tuple[bytes, str]:
        async with session.post(
            url, json=payload, headers=headers, ssl=ssl_context, timeout=aiohttp.ClientTimeout(total=timeout)
        ) as response:
            body = await response.read()
            if not response.ok:  # the body (which may echo the key) stays unread by any message
                raise EndpointError(url, response.status)
            return body, response.headers.get("Content-Type", "")

    try:  # aiohttp's total deadline, and ours in case it is not kept
        body, content_type = await asyncio.wait_for(attempt(), timeout)
    except (asyncio.TimeoutError, TimeoutError) as error:
        raise EndpointTimeout(
            f"lc-chat: base_url={url_origin(url)} did not answer within timeout={timeout:g} s (a total deadline per attempt)"
        ) from error
    return checked_reply(body, url=url, content_type=content_type)


def post_once(url: str, payload: Mapping[str, Any], **options: Any) -> dict[str, Any]:
    """:func:`post` (same keyword arguments) from synchronous code, in a session of its own."""

    async def run() -> dict[str, Any]:
        async with aiohttp.ClientSession() as session:
            return await post(session, url, payload, **options)

    return asyncio.run(run())


def _start(text: str, content_type: str) -> str:
    """The content type and start of a reply, redacted before the cut (an echoed key never shows)."""
    return f"{content_type or 'no content type'}, starting {redact(text)[:80]!r}"


def checked_reply(body: bytes, *, url: str, content_type: str = "") -> dict[str, Any]:
    """The JSON object of a chat-completions reply with a non-empty ``choices`` list.

    Raises:
        ReplyError: Not UTF-8 JSON (an HTML login page, a proxy's error page), not an object, or
            without choices; the message names ``url`` and shows the start of the body.
    """
    text = body.decode("utf-8", errors="replace")
    try:
        reply = json.loads(text)
    except ValueError:
        raise ReplyError(
            f"lc-chat: base_url={url_origin(url)} sent a reply that is not JSON ({_start(text, content_type)}); is it an "
            "OpenAI-compatible /v1/chat/completions URL (not a login page or proxy)?"
        ) from None
    if not isinstance(reply, dict):
        raise ReplyError(
            f"lc-chat: base_url={url_origin(url)} sent JSON that is not an object ({_start(text, content_type)})"
        )
    if "error" in reply and "choices" not in reply:
        raise ReplyError(
            f"lc-chat: base_url={url_origin(url)} answered with an error: {redact(str(reply['error']))[:200]}"
        )
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise ReplyError(
            f"lc-chat: base_url={url_origin(url)} sent a reply without choices (choices: {redact(repr(choices))[:80]})"
        )
    return reply


def logprob_content(reply: Mapping[str, Any], *, url: str) -> list[Any]:
    """``choices[0].logprobs.content`` of a checked reply: one entry per generated token.

    Raises:
        ReplyError: Missing, not a list, or empty (the endpoint ignored ``logprobs``).
    """
    logprobs = reply["choices"][0].get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    if not isinstance(content, list) or not content:
        raise ReplyError(
            f"lc-chat: the reply of base_url={url_origin(url)} has no choices[0].logprobs.content "
            f"(logprobs: {redact(repr(logprobs))[:80]}); does the endpoint support logprobs and top_logprobs?"
        )
    return content
