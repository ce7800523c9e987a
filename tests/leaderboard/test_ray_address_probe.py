"""``--ray-address`` of a server that is no Ray head is named within seconds (``ray.init`` waited about
14 minutes); an HTTP/2 server, as a Ray head's GCS is (gRPC), passes. No Ray cluster is started."""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from logic_consistency.leaderboard.run.ray_executor import RayClusterError, check_reachable


@pytest.fixture
def web_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_server() -> Iterator[str]:
    """Accepts connections and never says a word."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    yield f"127.0.0.1:{listener.getsockname()[1]}"
    for connection in accepted:
        connection.close()
    listener.close()


def test_a_web_server_is_named_in_seconds(web_server: str) -> None:
    started = time.monotonic()
    with pytest.raises(RayClusterError) as error:
        check_reachable(web_server)
    assert time.monotonic() - started < 10
    message = str(error.value)
    assert f"--ray-address {web_server!r}" in message and "is not a Ray head" in message
    assert "an HTTP/1 server answers there ('<!DOCTYPE HTML>')" in message  # Python's http.server
    with pytest.raises(RayClusterError, match="is not a Ray head"):
        check_reachable(f"ray://{web_server}")


def test_a_server_that_says_nothing_is_named(silent_server: str) -> None:
    with pytest.raises(RayClusterError, match=r"is not a Ray head: no HTTP/2 \(gRPC\) answer within 1 s"):
        check_reachable(silent_server, seconds=1)


@pytest.fixture
def http2_server() -> Iterator[str]:
    """Answers HTTP/2's client preface with a SETTINGS frame, as every HTTP/2 (gRPC) server does."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                connection.recv(64)
                connection.sendall(b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64")

    threading.Thread(target=serve, daemon=True).start()
    yield f"127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


def test_an_http2_server_passes(http2_server: str) -> None:  # a real Ray head: tests/leaderboard/test_ray_cluster.py
    check_reachable(http2_server)
    check_reachable(f"ray://{http2_server}")
