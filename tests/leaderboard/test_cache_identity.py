"""Issue 54: the build's request cache is chosen by the model's private identity, not its public face.

One model-list entry pointed at two deployments of one gateway (``/deployment-a/v1/...`` and
``/deployment-b/v1/...``, as Azure OpenAI names deployments by path) has one public identity (the
path is not published) but two caches, and the second night asks the second deployment every
request: its row is its own answers, never the first deployment's from the cache.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

pytestmark = pytest.mark.slow  # starts the CLI, which starts lm_eval

ROOT = Path(__file__).resolve().parents[2]
LOGIC_CONSISTENCY = shutil.which("logic-consistency", path=str(Path(sys.executable).parent)) or "logic-consistency"


class Gateway(http.server.ThreadingHTTPServer):
    """An OpenAI-compatible chat endpoint that records the path of every request it answers."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.paths: list[str] = []

    def url(self, deployment: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{deployment}/v1/chat/completions"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: Gateway

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.paths.append(self.path)
        top = [{"token": "A", "logprob": -0.4}, {"token": "B", "logprob": -1.2}]
        choice = {"index": 0, "message": {"role": "assistant", "content": "A"}}
        choice["logprobs"] = {"content": [{"token": "A", "logprob": -0.4, "top_logprobs": top}]}
        data = json.dumps({"model": "judge", "choices": [choice]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    server = Gateway()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _build(root: Path, url: str, night: str) -> None:
    models = root / "models.yaml"
    models.write_text(
        "tasks: toy_pairwise\nlimit: 2\napply_chat_template: true\nmodels:\n"
        f"  - {{name: judge, model: lc-chat, model_args: 'model=judge,base_url={url},max_retries=1', "
        f"extra_args: ['--include_path', '{ROOT / 'tests' / 'fixtures' / 'tasks'}']}}\n",
        encoding="utf-8",
    )
    env = {
        **{k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"},
        "LOGIC_CONSISTENCY_DATA": str(ROOT / "tests" / "fixtures" / "data"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    command = [LOGIC_CONSISTENCY, "leaderboard", "build", "--models", str(models), "--out", str(root / "board")]
    command += ["--night", night, "--n-resamples", "1000", "--no-progress"]
    run = children.run(command, capture_output=True, text=True, env=env, timeout=900, cwd=root)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]


def test_two_gateway_paths_get_two_caches_and_two_sets_of_calls(gateway: Gateway, tmp_path: Path) -> None:
    _build(tmp_path, gateway.url("deployment-a"), "2026-05-01")
    first = list(gateway.paths)
    _build(tmp_path, gateway.url("deployment-b"), "2026-05-02")
    second = gateway.paths[len(first) :]
    assert first and {path.split("/")[1] for path in first} == {"deployment-a"}
    assert second and {path.split("/")[1] for path in second} == {"deployment-b"}
    assert len(second) == len(first)  # every request asked again: nothing came from the first cache
    assert len(list((tmp_path / "board" / "cache").glob("*_rank0.db"))) == 2
    board = json.loads((tmp_path / "board" / "leaderboard.json").read_text(encoding="utf-8"))
    assert "deployment" not in json.dumps(board)  # the path is private: the cache follows it, the board does not
    _build(tmp_path, gateway.url("deployment-b"), "2026-05-03")
    assert len(gateway.paths) == len(first) + len(second)  # the same deployment again: all from its cache
