"""A direct ``lm_eval`` run prints no private part of its model arguments (manual pass of issue 54).

lm-eval's CLI ends with the summary line ``MODEL ({model_args}), gen_kwargs: ...``, printed from the
arguments as given: ``base_url``'s private path and query went to the terminal, and a build wrote them
into ``runs/<night>/<model>/lm_eval.log``. The hook prints the public arguments there
(``publish/run.py``, ``public_prints``), as the results and the log records already did.
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

pytestmark = pytest.mark.slow  # starts lm_eval

ROOT = Path(__file__).resolve().parents[2]
LM_EVAL = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) or "lm_eval"
PATH_TOKEN, QUERY_TOKEN, KEY = "PaTh7wQz9XrK", "qzPde0IgxLd6", "sk-Tm/Qz+w4Lp8yQ0"


class _Endpoint(http.server.BaseHTTPRequestHandler):
    """A chat endpoint answering "A" with top log-probabilities, whatever the path."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
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
def port() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_the_summary_line_shows_the_public_model_arguments(port: int, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{port}/{PATH_TOKEN}/v1/chat/completions?api-version={QUERY_TOKEN}"
    command = [LM_EVAL, "--model", "lc-chat", "--model_args", f"model=judge,base_url={url},max_retries=1"]
    command += ["--tasks", "toy_pairwise", "--include_path", str(ROOT / "tests" / "fixtures" / "tasks")]
    command += ["--limit", "1", "--apply_chat_template", "--output_path", str(tmp_path / "out"), "--log_samples"]
    env = {**os.environ, "OPENAI_API_KEY": KEY, "LOGIC_CONSISTENCY_DATA": str(ROOT / "tests" / "fixtures" / "data")}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    run = children.run(command, capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    summary = [line for line in run.stdout.splitlines() if line.startswith("lc-chat (")]
    assert summary == [
        f"lc-chat ({{'model': 'judge', 'base_url': 'http://127.0.0.1:{port}', 'max_retries': 1}}), gen_kwargs: "
        "({}), limit: 1.0, num_fewshot: None, batch_size: 1"
    ]
    written = [path.read_text(encoding="utf-8") for path in (tmp_path / "out").rglob("*") if path.is_file()]
    assert len(written) == 2  # the results and the samples file
    for text in [run.stdout, run.stderr, *written]:
        assert PATH_TOKEN not in text and QUERY_TOKEN not in text and KEY not in text
