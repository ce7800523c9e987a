"""Issue 54 (items 3, 4, 5), done when: one ``leaderboard build`` against a stub OpenAI-compatible endpoint on
127.0.0.1, over a 2.x board whose row kept its model arguments as given (a token in ``base_url``'s path):

* failures come from facts, not text: a reply saying "upstream answered HTTP 503" is no HTTP error; a reply
  holding ``RequestCacheError: `` is not the suite's cache error; a real 503 is one, with its status;
* the migration republishes nothing undeclared: the old row's token is in neither the board, the history
  nor the page;
* an endpoint's host is published only where the model list declares it (``public_endpoint: true``);
  otherwise, a tunnel's host included, ``private:<name>`` stands for it;
* LM Studio's placeholder key ``lm-studio`` is no secret: "serve it with lm-studio" stays in the samples;
  a real key echoed into the samples is redacted and one line of the run's log says how often and where.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from .conftest import LOGIC_CONSISTENCY, ROOT, lm_eval_env

pytestmark = pytest.mark.slow  # a build: a server and lm_eval children

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import hand_row  # noqa: E402  # tests/conftest.py's

from logic_consistency.leaderboard.board.ingest import BootstrapSettings  # noqa: E402
from logic_consistency.leaderboard.board.merge import make_document  # noqa: E402

#: A key a build sends (12 characters and more: a secret) and what the stub writes back in every generation.
KEY = "kW3-local-key-1234"
SAID = "A. serve it with lm-studio"
TOKEN = "gw-7Hq2LmP9Zx4Rt1"
TUNNEL = "a1b2-203-0-113-5.ngrok-free.app"
#: Reply bodies (HTTP 200, not JSON) whose words imitate what the suite and HTTP clients print.
WORDS = {"/v1/says-503": "upstream answered HTTP 503", "/v1/says-cache": "RequestCacheError: --use_cache: x is bad"}


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        status, kind = 200, "application/json"
        if self.path in WORDS:
            body, kind = WORDS[self.path], "text/plain"
        elif self.path == "/v1/real-503":
            status, body, kind = 503, "Service Unavailable", "text/plain"
        else:
            top = [{"token": "A", "logprob": -0.4}, {"token": "B", "logprob": -1.2}]
            choice = {"index": 0, "message": {"role": "assistant", "content": f"{SAID} (key {key})"}}
            choice["logprobs"] = {"content": [{"token": "A", "logprob": -0.4, "top_logprobs": top}]}
            body = json.dumps({"model": "judge", "choices": [choice]})
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def _old_board(out: Path) -> None:
    """A 2.x board and history whose row kept its model arguments as given (a gateway token in the path)."""
    row = hand_row("old-judge")
    row["model"].update(backend="lc-chat", model_args=f"model=judge,base_url=http://127.0.0.1:9/t/{TOKEN}/v1")
    for kind, folder in (("leaderboard", out), ("night", out / "history")):
        document = make_document(kind, [row], [], night="2026-01-01", bootstrap=BootstrapSettings(n_resamples=1000))
        document["schema_version"] = "2.2"
        folder.mkdir(parents=True, exist_ok=True)
        name = "leaderboard.json" if kind == "leaderboard" else "2026-01-01.json"
        (folder / name).write_text(json.dumps(document), encoding="utf-8")


@pytest.fixture(scope="module")
def built(port: int, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("declared")
    local = f"http://127.0.0.1:{port}"

    include = json.dumps(["--include_path", str(ROOT / "tests" / "fixtures" / "tasks")])

    def entry(name: str, url: str, key: str = KEY, more: str = "") -> str:
        args = f"model=judge,base_url={url},max_retries=1,timeout=20"
        return (
            f"  - {{name: {name}, model: lc-chat, model_args: '{args}', env: {{OPENAI_API_KEY: {key}}}, "
            f"extra_args: {include}{more}}}"
        )

    lines = [
        "tasks: toy_pairwise_generate",
        "limit: 1",
        "apply_chat_template: true",
        "models:",
        entry("placeholder", f"{local}/v1/chat/completions", key="lm-studio"),
        entry("declared", f"http://localhost:{port}/v1/chat/completions", more=", public_endpoint: true"),
        entry("says-503", f"{local}/v1/says-503"),
        entry("says-cache", f"{local}/v1/says-cache"),
        entry("real-503", f"{local}/v1/real-503"),
        entry("tunnel", f"https://{TUNNEL}/v1/chat/completions"),
    ]
    models = root / "models.yaml"
    models.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = root / "board"
    _old_board(out)
    command = [LOGIC_CONSISTENCY, "leaderboard", "build", "--models", str(models), "--out", str(out)]
    command += ["--night", "2026-05-01", "--html", str(out / "index.html"), "--n-resamples", "1000", "--no-progress"]
    env = {k: v for k, v in lm_eval_env().items() if k not in ("OPENAI_API_KEY", "HF_TOKEN")}
    run = children.run(command, capture_output=True, text=True, env=env, timeout=900, cwd=root)
    return {"run": run, "out": out, "port": port}


def _published(out: Path) -> dict[str, str]:
    paths = [out / "leaderboard.json", out / "index.html", *sorted((out / "history").glob("*.json"))]
    return {str(path.relative_to(out)): path.read_text(encoding="utf-8") for path in paths}


def _board(built: dict[str, Any]) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((built["out"] / "leaderboard.json").read_text(encoding="utf-8"))
    return document


def test_failures_come_from_what_the_run_raised_not_from_an_endpoints_words(built: dict[str, Any]) -> None:
    run: subprocess.CompletedProcess[str] = built["run"]
    assert run.returncode == 1, run.stderr[-3000:]
    failures = {failure["name"]: failure["error"] for failure in _board(built)["failures"]}
    assert sorted(failures) == ["real-503", "says-503", "says-cache", "tunnel"], run.stderr[-3000:]
    shown = {name: (error["code"], error["http_status"], error["error_class"]) for name, error in failures.items()}
    assert shown["says-503"] == ("lm_eval_failed", None, "ReplyError")  # its words said 503; none was sent
    assert shown["says-cache"] == ("lm_eval_failed", None, "ReplyError")  # its words named the suite's cache error
    # the status received (lc-chat ends the run with a RuntimeError caused by its EndpointError)
    assert shown["real-503"] == ("endpoint_http_error", 503, "RuntimeError")
    assert shown["tunnel"][0] == "lm_eval_failed" and shown["tunnel"][1] is None
    log = (built["out"] / _board(built)["failures"][0]["log_file"]).parent
    assert (log / "lm_eval_failure.json").is_file()  # the record the run's own process wrote


def test_no_undeclared_host_and_no_old_path_token_is_published(built: dict[str, Any]) -> None:
    board = _board(built)
    assert board["schema_version"] == "3.1"
    for name, text in _published(built["out"]).items():
        for needle in (TOKEN, "/t/gw-", "127.0.0.1", TUNNEL, "ngrok"):
            assert needle not in text, (name, needle)
    rows = {row["model"]["name"]: row["model"]["model_args"] for row in board["rows"]}
    assert rows["old-judge"] == "model=judge,base_url=private:old-judge"  # migrated: derived again, a label
    assert rows["placeholder"].startswith("model=judge,base_url=private:placeholder,")
    assert f"base_url=http://localhost:{built['port']}/v1/chat/completions" in rows["declared"]  # declared public
    failures = {failure["name"]: failure["model_args"] for failure in board["failures"]}
    assert failures["tunnel"].startswith("model=judge,base_url=private:tunnel")


def _samples(built: dict[str, Any], name: str) -> tuple[str, str]:
    (folder,) = (built["out"] / "runs" / "2026-05-01").glob(f"{name}-*")
    (samples,) = folder.rglob("samples_toy_pairwise_generate_*.jsonl")
    return samples.read_text(encoding="utf-8"), (folder / "lm_eval.log").read_text(encoding="utf-8")


def test_a_placeholder_key_rewrites_nothing_and_a_redacted_key_is_said(built: dict[str, Any]) -> None:
    samples, log = _samples(built, "placeholder")
    assert f"{SAID} (key lm-studio)" in samples and "[redacted" not in samples  # lm-studio: no secret
    assert "replacement(s)" not in log
    samples, log = _samples(built, "declared")
    assert KEY not in samples and f"{SAID} (key [redacted " in samples
    (line,) = [line for line in log.splitlines() if "replacement(s) of" in line]
    count = samples.count("[redacted ")
    assert f"samples_toy_pairwise_generate_*.jsonl: {count} replacement(s) of the lc-chat credential" in line, line
