"""Whether a TCP server speaks HTTP/2 (gRPC), as a Ray head's GCS and Ray client server do.

``ray.init`` connected to a server that accepts the connection but is no Ray head (a web server on
the port) waits through its GCS time-outs for about 14 minutes before a traceback; this probe, sent
first, tells in seconds: HTTP/2's client preface and an empty SETTINGS frame, to which an HTTP/2
server answers with a SETTINGS frame (RFC 9113, 3.4) and an HTTP/1 server with ``HTTP/1.x 400``.
"""

from __future__ import annotations

import os
import socket

__all__ = ["not_grpc"]

#: HTTP/2's client connection preface, then an empty SETTINGS frame (length 0, type 4, no flags, stream 0).
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
#: The frame type of SETTINGS, at byte 3 of a frame header.
SETTINGS = 4


def _answer(sock: socket.socket, size: int) -> bytes:
    """Up to ``size`` bytes the server sends (fewer when it closes the connection)."""
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def not_grpc(sock: socket.socket, seconds: float) -> str | None:
    """Why the server on ``sock`` is not an HTTP/2 (gRPC) server, or ``None`` when it is.

    With ``RAY_USE_TLS`` set, the head speaks TLS first: nothing is probed (``None``).
    """
    if os.environ.get("RAY_USE_TLS", "0").strip().lower() in ("1", "true"):
        return None
    sock.settimeout(seconds)
    try:
        sock.sendall(PREFACE)
        data = _answer(sock, 9)
    except TimeoutError:
        return f"no HTTP/2 (gRPC) answer within {seconds:g} s"
    except OSError as error:
        return f"the connection failed ({error.strerror or error})"
    if len(data) == 9 and data[3] == SETTINGS:
        return None
    if data.startswith((b"HTTP/", b"<")):  # a status line, or an HTTP/0.9-style page (Python's http.server)
        line = (data + _rest_of_line(sock)).splitlines()[0].decode("ascii", "replace")
        return f"an HTTP/1 server answers there ({line!r})"
    if not data:
        return "it closed the connection without an HTTP/2 (gRPC) answer"
    return f"it answered {data[:16]!r}, not HTTP/2 (gRPC)"


def _rest_of_line(sock: socket.socket) -> bytes:
    try:
        return sock.recv(64)
    except OSError:
        return b""
