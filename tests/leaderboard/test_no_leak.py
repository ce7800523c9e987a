"""Issue 29, done when: a board written through ``leaderboard build`` (local executor), ``ingest`` and a
direct ``lm_eval`` run, with a credential of 4, 12 and 200 characters planted in every place the audit
used, holds none of them: every file under the output and cache folders is searched. (Issue 39: a key
under 8 characters is no secret and is not redacted, so no endpoint here echoes the 4-character one.)

The judge is a stub OpenAI-compatible server on 127.0.0.1 (:class:`Stub`): it answers readings,
echoes the key it was sent in its generations, and, on the paths ending ``/echo-json`` and
``/echo-html``, answers with an error body that holds the key.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

pytestmark = pytest.mark.slow  # starts lm_eval, the CLI or a server in every test (the full tier)

ROOT = Path(__file__).resolve().parents[2]
BIN = str(Path(sys.executable).parent)
LM_EVAL = shutil.which("lm_eval", path=BIN) or "lm_eval"
LOGIC_CONSISTENCY = shutil.which("logic-consistency", path=BIN) or "logic-consistency"
TASKS = ("--tasks", "toy_pairwise", "--include_path", str(ROOT / "tests" / "fixtures" / "tasks"), "--limit", "2")
#: The planted keys: a local server's 4 characters, 12, and 200 (cut at 200 characters before issue 29).
KEYS = {4: "Qz4v", 12: "kW3-local-12", 200: ("sk-" + "Lp9x" * 50)[:200]}
#: Placeholder keys (issue 39): runs with them must change no JSON key, field or metric name.
PLACEHOLDERS = {"placeholder-dash": "-", "placeholder-none": "none", "placeholder-empty": "EMPTY"}
#: Issue 46: a gateway token in a URL's path (an endpoint answering 404 there), never on the board.
GATEWAY_TOKEN = "gw-7Hq2LmP9Zx4Rt1"
#: Issue 46: what the model generates on ``/v1/generate``: every pattern rule would rewrite part of it.
GENERATED = "A. The flag bearer Michael Phelps; sorted(items, key=len); code=E42; Bearer abcdefgh1234"


class Stub(http.server.ThreadingHTTPServer):
    """An OpenAI-compatible chat endpoint that leaks the ``Authorization`` key it receives back."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)

    def url(self, path: str = "/v1/chat/completions") -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        status = 200
        if self.path.endswith("/missing"):  # issue 46: a 404 whose URL holds a token, its body the key
            status, body, kind = 404, f"no route for key {key}", "text/plain"
        elif self.path.endswith("/echo-json"):
            body, kind = json.dumps({"error": {"message": f"Incorrect API key provided: {key}"}}), "application/json"
        elif self.path.endswith("/echo-repr"):  # as it is, and split by a newline (two characters in a repr)
            message = f"Bad key {key}; as sent: {key[:5]}\n{key[5:]}"
            body, kind = json.dumps({"error": {"message": message}}), "application/json"
        elif self.path.endswith("/echo-html"):
            body, kind = f"<html><body>401: {key} is not a valid key</body></html>", "text/html"
        elif self.path.endswith("/echo-entities"):
            body, kind = f"<html>{''.join(f'&#{ord(c)};' for c in key)} is not valid</html>", "text/html"
        else:
            top = [{"token": "A", "logprob": -0.4}, {"token": "B", "logprob": -1.2}]
            content = GENERATED if self.path.endswith("/generate") else f"A (your key: {key})"
            choice = {"index": 0, "message": {"role": "assistant", "content": content}}
            choice["logprobs"] = {"content": [{"token": "A", "logprob": -0.4, "top_logprobs": top}]}
            body, kind = json.dumps({"model": f"judge-{key}", "choices": [choice]}), "application/json"
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def stub() -> Iterator[Stub]:
    server = Stub()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _env(key: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "OPENAI_API_KEY")}
    return {
        **env,
        "LOGIC_CONSISTENCY_DATA": str(ROOT / "tests" / "fixtures" / "data"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "OPENAI_API_KEY": key,
    }


def _run(*command: str, key: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return children.run(command, capture_output=True, text=True, env=_env(key), timeout=900, cwd=cwd)


def _lm_eval(
    stub: Stub, root: Path, name: str, key: str, *, path: str = "/v1/chat/completions", tasks: tuple[str, ...] = TASKS,
    **more: str,
) -> Any:  # fmt: skip
    """A direct ``lm_eval`` run with its own output folder and request cache (a shared cache would answer it)."""
    args = f"model=judge,base_url={stub.url(path)},max_retries=1,num_concurrent=2"
    command = [LM_EVAL, "--model", "lc-chat", "--model_args", args, *tasks, "--apply_chat_template"]
    command += ["--output_path", str(root / "out" / name), "--use_cache", str(root / "cache" / name), "--log_samples"]
    for option, value in more.items():
        command += [f"--{option}", value]
    return _run(*command, key=key, cwd=root)


@pytest.fixture(scope="module")
def written(stub: Stub, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("no-leak")
    runs: dict[str, subprocess.CompletedProcess[str]] = {}
    # direct lm_eval: a good run whose generations and model name echo the key (12 characters), with the cache
    # (issue 39: a key under 8 characters, like KEYS[4], is no secret: never redacted, see test_secret_model.py)
    runs["direct"] = _lm_eval(stub, root, "direct", KEYS[12])
    # endpoints echoing the key in their error bodies (JSON: 12 and 200 characters; HTML: 200)
    runs["echo-json-12"] = _lm_eval(stub, root, "echo-json-12", KEYS[12], path="/v1/echo-json")
    runs["echo-json-200"] = _lm_eval(stub, root, "echo-json-200", KEYS[200], path="/v1/echo-json")
    runs["echo-html-200"] = _lm_eval(stub, root, "echo-html-200", KEYS[200], path="/v1/echo-html")
    # issue 46: generations holding "bearer", "key=" and "code=" (lc-chat's generate_until)
    generate = ("--tasks", "toy_pairwise_generate", *TASKS[2:])
    runs["generated"] = _lm_eval(stub, root, "generated", KEYS[12], path="/v1/generate", tasks=generate)
    # nested metadata and a key inside a list: refused before any call
    nested = json.dumps({"gateway": {"api_key": KEYS[12]}, "extra": [["Authorization", f"Bearer {KEYS[200]}"]]})
    runs["nested"] = _lm_eval(stub, root, "nested", KEYS[12], metadata=nested)
    # a build: the key in the model list's env (12 characters) and a 4-character gateway value
    models = root / "inputs" / "models.yaml"
    models.parent.mkdir()

    def entry(name: str, url: str) -> str:
        return (
            f"{{name: {name}, model: lc-chat, model_args: 'model=judge,base_url={url},max_retries=1', "
            f"env: {{OPENAI_API_KEY: {KEYS[12]}, MY_GATEWAY: {KEYS[4]}}}, "
            f"extra_args: ['--include_path', '{ROOT / 'tests' / 'fixtures' / 'tasks'}']}}"
        )

    lines = [
        "tasks: toy_pairwise",
        "limit: 2",
        "apply_chat_template: true",
        "models:",
        f"  - {entry('judge', stub.url())}",
    ]
    # issue 46: the key echoed as it is and split by a newline (a repr), and as HTML entities; a 404 on a
    # URL whose path holds a gateway token
    lines.append(f"  - {entry('judge-echo', stub.url('/v1/echo-repr'))}")
    lines.append(f"  - {entry('judge-echo-entities', stub.url('/v1/echo-entities'))}")
    lines.append(f"  - {entry('judge-404', stub.url(f'/t/{GATEWAY_TOKEN}/v1/missing'))}")
    # a sharded build (issue 39), on a suite task: the shards' merge does not pass a model's --include_path
    lines.append(
        f"  - {{name: judge-sharded, model: lc-chat, model_args: 'model=judge,base_url={stub.url()},max_retries=1', "
        f"env: {{OPENAI_API_KEY: {KEYS[12]}}}, shards: 2, tasks: logic_consistency_caters, "
        "metadata: {max_items: 3, ks: [3]}}"
    )
    models.write_text("\n".join(lines) + "\n", encoding="utf-8")
    board = root / "board"
    boot = ("--n-resamples", "1000", "--no-progress")
    runs["build"] = _run(
        LOGIC_CONSISTENCY, "leaderboard", "build", "--models", str(models), "--out", str(board),
        "--night", "2026-05-01", "--html", str(root / "page" / "index.html"), *boot, key=KEYS[200], cwd=root,
    )  # fmt: skip
    # ingest the direct run's results into the same board
    (results,) = (root / "out" / "direct").rglob("results_*.json")
    runs["ingest"] = _run(
        LOGIC_CONSISTENCY, "leaderboard", "ingest", str(results), "--out", str(board), "--night", "2026-05-02",
        "--allow-backfill",  # today's run filed under an older night on purpose
        *boot, key=KEYS[4], cwd=root,
    )  # fmt: skip
    # issue 39: placeholder keys many local servers document are no secrets: the runs ingest, nothing garbled
    for name, placeholder in PLACEHOLDERS.items():
        runs[name] = _lm_eval(stub, root, name, placeholder)
    (results,) = (root / "out" / "placeholder-dash").rglob("results_*.json")
    runs["ingest-placeholder"] = _run(
        LOGIC_CONSISTENCY, "leaderboard", "ingest", str(results), "--out", str(board), "--night", "2026-05-03",
        "--allow-backfill", *boot, key="-", cwd=root,
    )  # fmt: skip
    return {"root": root, "runs": runs, "board": board}


def _holding(root: Path, needle: str) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_relative_to(root / "inputs") and needle.encode() in path.read_bytes():
            found.append(str(path.relative_to(root)))
    return found


def test_no_file_and_no_output_holds_a_key(written: dict[str, Any]) -> None:
    root, runs = written["root"], written["runs"]
    assert runs["direct"].returncode == 0, runs["direct"].stderr[-3000:]
    assert runs["ingest"].returncode == 0, runs["ingest"].stderr[-3000:]
    assert runs["build"].returncode == 1, runs["build"].stderr[-3000:]  # the echoing entry fails; judge is a row
    files = [path for path in root.rglob("*") if path.is_file()]
    assert any(path.suffix == ".db" for path in files) and any(path.name.startswith("samples_") for path in files)
    for length, key in KEYS.items():
        needle = key if length < 200 else key[:24]  # also any 24-character piece of the long key's start
        assert _holding(root, needle) == [], f"the {length}-character key is in these files"
        for name, run in runs.items():
            assert needle not in run.stdout + run.stderr, f"{name} printed the {length}-character key"


def test_what_was_shown_instead(written: dict[str, Any]) -> None:
    runs = written["runs"]
    for name in ("echo-json-12", "echo-json-200", "echo-html-200"):
        last = runs[name].stderr.strip().splitlines()[-1]
        assert runs[name].returncode != 0 and "base_url=" in last and "[redacted " in runs[name].stderr, last
    assert runs["nested"].returncode != 0
    assert "'gateway.api_key'" in runs["nested"].stderr and "'Authorization' in 'extra[0]'" in runs["nested"].stderr
    board = json.loads((written["board"] / "leaderboard.json").read_text(encoding="utf-8"))
    failures = {failure["name"]: failure["error"] for failure in board["failures"]}
    assert sorted(failures) == ["judge-404", "judge-echo", "judge-echo-entities"]
    for name in ("judge-echo", "judge-echo-entities"):  # a code, the text in the log only
        assert (failures[name]["code"], failures[name]["error_class"]) == ("lm_eval_failed", "ReplyError"), name
    row = next(row for row in board["rows"] if row["model"]["name"] == "judge")
    assert row["model"]["model_args"].startswith("model=judge,base_url=private:judge")  # issue 54: host undeclared


def _keys(value: Any) -> Iterator[str]:
    """Every key of a JSON document, nested ones included."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from _keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _keys(inner)


def test_no_json_key_or_metric_name_is_redacted_and_placeholder_runs_ingest(written: dict[str, Any]) -> None:
    """Issue 39, done when: over a direct run, a build, a sharded build, an ingest and placeholder-key runs,
    no JSON key (field and metric names included) holds ``[redacted``, and the placeholder runs ingest."""
    root, runs = written["root"], written["runs"]
    for name in (*PLACEHOLDERS, "ingest-placeholder"):
        assert runs[name].returncode == 0, runs[name].stderr[-3000:]
        assert "[redacted" not in runs[name].stdout + runs[name].stderr, name
    documents = []
    for path in (p for p in root.rglob("*") if p.is_file() and not p.is_relative_to(root / "inputs")):
        if path.suffix == ".json":
            documents.append((path, json.loads(path.read_text(encoding="utf-8"))))
        elif path.suffix == ".jsonl":
            lines = path.read_text(encoding="utf-8").splitlines()
            documents += [(path, json.loads(line)) for line in lines if line.strip()]
    assert any("results" in doc for _, doc in documents if isinstance(doc, dict))
    for path, document in documents:
        redacted = [key for key in _keys(document) if "[redacted" in key]
        assert redacted == [], f"{path.relative_to(root)}: {redacted[:5]}"
    for name in PLACEHOLDERS:
        (results,) = (root / "out" / name).rglob("results_*.json")
        recorded = json.loads(results.read_text(encoding="utf-8"))
        assert "n-samples" in recorded and "s_comm,none" in recorded["results"]["toy_pairwise"], name
    board = json.loads((written["board"] / "leaderboard.json").read_text(encoding="utf-8"))
    rows = {row["model"]["name"]: row for row in board["rows"]}
    assert "judge-sharded" in rows, sorted(rows)  # the sharded build is a row, merged from its two shards


def test_the_board_publishes_codes_never_a_run_text(written: dict[str, Any]) -> None:
    """Issue 46, done when: a token in a URL path on an endpoint that answers 404 and a key echoed in an
    error body (plain, as a repr with a newline, as HTML entities): neither in any published file."""
    root, runs = written["root"], written["runs"]
    published = [written["board"] / "leaderboard.json", root / "page" / "index.html"]
    published += sorted((written["board"] / "history").glob("*.json"))
    for path in published:
        text = path.read_text(encoding="utf-8")
        assert GATEWAY_TOKEN not in text and "/t/gw-" not in text, path
        for key in (KEYS[12], KEYS[200][:24]):  # as written, split by an escaped newline, as HTML entities
            for form in (key, key[:5], "".join(f"&#{ord(char)};" for char in key[:4])):
                assert form not in text, (path, form)
    assert GATEWAY_TOKEN not in runs["build"].stdout + runs["build"].stderr  # the suite's lines: scheme, host, port
    board = json.loads((written["board"] / "leaderboard.json").read_text(encoding="utf-8"))
    failure = next(failure for failure in board["failures"] if failure["name"] == "judge-404")
    assert (failure["error"]["code"], failure["error"]["http_status"]) == ("endpoint_http_error", 404)
    assert failure["model_args"].startswith("model=judge,base_url=private:judge-404")  # issue 54: no host, no path
    assert failure["log_file"].startswith("runs/2026-05-01/judge-404") and failure["log_file"].endswith("/lm_eval.log")
    log = (written["board"] / failure["log_file"]).read_text(encoding="utf-8")
    assert "failure endpoint_http_error" in log and "answered HTTP 404" in log  # the full message: the local log


def test_samples_hold_the_generation_byte_for_byte(written: dict[str, Any]) -> None:
    """Issue 46, done when: no pattern rule rewrites what a model wrote (``bearer``, ``key=``, ``code=``)."""
    run = written["runs"]["generated"]
    assert run.returncode == 0, run.stderr[-3000:]
    (samples,) = (written["root"] / "out" / "generated").rglob("samples_toy_pairwise_generate_*.jsonl")
    responses = [json.loads(line)["resps"] for line in samples.read_text(encoding="utf-8").splitlines()]
    assert responses and all(GENERATED in json.dumps(resps, ensure_ascii=False) for resps in responses)
    assert GENERATED.encode() in samples.read_bytes() and b"REDACTED" not in samples.read_bytes()
