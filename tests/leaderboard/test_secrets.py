"""No secret is ever written: a build, an ingest and a render with a distinctive secret given in every
accepted way, then every written file is searched for it; every refused way is refused before any call."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.leaderboard.board.ingest import without_credentials
from logic_consistency.leaderboard.board.results import read_run

pytestmark = pytest.mark.slow  # starts lm_eval or the CLI in every test (the full tier)

ROOT = Path(__file__).resolve().parents[2]
BIN = str(Path(sys.executable).parent)
LM_EVAL = shutil.which("lm_eval", path=BIN) or "lm_eval"
LOGIC_CONSISTENCY = shutil.which("logic-consistency", path=BIN) or "logic-consistency"
#: A distinctive prefix: every secret of a test starts with it, so one search finds them all.
PREFIX = f"SECRET-7f3c-{uuid.uuid4().hex[:12]}"
#: The accepted ways: the key environment variables of the build (and a model list entry's ``env``).
KEY_VARIABLES = {
    "OPENAI_API_KEY": f"{PREFIX}-openai",
    "ANTHROPIC_API_KEY": f"{PREFIX}-anthropic",
    "HF_TOKEN": f"{PREFIX}-hf",
    "MY_JUDGE_SECRET": f"{PREFIX}-judge",
}
MODEL_ENV_SECRET = f"{PREFIX}-model-list-env"
SMALL = ("--tasks", "logic_consistency_pairwise", "--limit", "2", "--metadata", json.dumps({"max_items": 5}))
BOOT = ("--n-resamples", "1000", "--no-progress")

#: An ``lm_eval`` stand-in that leaks on purpose: ``--model leaky`` runs the real ``lm_eval`` with the
#: dummy model, then copies every key variable's value into its results and samples files, a file of
#: its own, stdout and stderr; ``--model crash`` prints them to stderr and fails.
LEAKY_LM_EVAL = """\
#!{python}
import json, os, subprocess, sys
from pathlib import Path

args = sys.argv[1:]
model = args[args.index("--model") + 1]
secrets = sorted(v for k, v in os.environ.items() if v.startswith({prefix!r}))
print("environment:", *secrets, flush=True)
print("stderr:", *secrets, file=sys.stderr, flush=True)
if model == "crash":
    from logic_consistency.harness_ext.publish.failure_facts import record_failure
    record_failure(RuntimeError("cannot connect"))  # what lm_eval's entry point records (issue 54)
    sys.exit("RuntimeError: cannot connect with key " + " ".join(secrets))
args[args.index("--model") + 1] = "dummy"
status = subprocess.call([{lm_eval!r}, *args])
out = Path(args[args.index("--output_path") + 1])
for results in out.rglob("results_*.json"):
    data = json.loads(results.read_text(encoding="utf-8"))
    data["git_hash"] = secrets[0]
    data["config"]["device"] = secrets[-1]
    results.write_text(json.dumps(data), encoding="utf-8")
for samples in out.rglob("samples_*.jsonl"):
    lines = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
    samples.write_text("".join(json.dumps({{**line, "leak": secrets}}) + "\\n" for line in lines), encoding="utf-8")
(out / "debug.txt").write_text(" ".join(secrets), encoding="utf-8")
sys.exit(status)
"""


def _env() -> dict[str, str]:
    """The environment of an offline run on the fixture data, with every key variable set."""
    return {
        **os.environ,
        "LOGIC_CONSISTENCY_DATA": str(ROOT / "tests" / "fixtures" / "data"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        **KEY_VARIABLES,
    }


def _run(*argv: str, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    return children.run(list(argv), capture_output=True, text=True, env=_env(), timeout=timeout, cwd=ROOT)


def _files_holding(folder: Path, text: str) -> list[str]:
    """Every file under ``folder`` (any kind: JSON, logs, SQLite caches, HTML) whose bytes contain ``text``."""
    return sorted(str(path) for path in folder.rglob("*") if path.is_file() and text.encode() in path.read_bytes())


def _with_credentials(source: Path, target: Path, secret: str) -> Path:
    """A copy of a run whose results carry ``secret`` as lm-eval writes ``--model_args`` (and its metadata copy)."""
    shutil.copytree(source.parent, target)
    path = target / source.name
    data = json.loads(path.read_text(encoding="utf-8"))
    url = f"http://judge-user:{secret}-password@127.0.0.1:9/v1/chat/completions?api-key={secret}-query"
    data["config"]["model"] = "local-chat-completions"  # a backend that declares model and base_url public
    data["config"]["model_args"] = f"model=judge-model,base_url={url},api_key={secret}-arg"
    for config in data["configs"].values():
        config.setdefault("metadata", {}).update(model="judge-model", base_url=url, api_key=f"{secret}-arg")
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A build (a real dummy run that leaks, a crash that leaks), two ingests (a key, then a rotated key), a render."""
    root = tmp_path_factory.mktemp("secrets")
    inputs = root / "inputs"  # the user's files: they hold the secrets, and are not written by the suite
    inputs.mkdir()
    fake = inputs / "lm_eval_leaky"
    fake.write_text(LEAKY_LM_EVAL.format(python=sys.executable, prefix=PREFIX, lm_eval=LM_EVAL), encoding="utf-8")
    fake.chmod(0o755)
    models = inputs / "models.yaml"
    models.write_text(
        textwrap.dedent(
            f"""
            batch_size: 1
            models:
              - {{name: leaky, model: leaky, env: {{MY_MODEL_TOKEN: {MODEL_ENV_SECRET}}}}}
              - {{name: crash, model: crash}}
            """
        ),
        encoding="utf-8",
    )
    out, page = root / "board", root / "page" / "index.html"
    build = _run(
        LOGIC_CONSISTENCY, "leaderboard", "build", "--models", str(models), "--out", str(out),
        "--night", "2026-05-01", "--lm-eval", str(fake), "--html", str(page), *SMALL, *BOOT,
    )  # fmt: skip
    found = list((out / "runs" / "2026-05-01").rglob("results_*.json"))
    assert len(found) == 1, build.stderr[-3000:]
    (results,) = found
    ingests = [
        _run(
            LOGIC_CONSISTENCY,
            "leaderboard",
            "ingest",
            str(_with_credentials(results, inputs / name, key)),
            "--out",
            str(out),
            "--night",
            "2026-05-02",
            "--allow-backfill",  # the build's night, for runs measured today
            *BOOT,
        )  # fmt: skip
        for name, key in (("first", f"{PREFIX}-key"), ("rotated", f"{PREFIX}-rotated-key"))
    ]
    render = _run(LOGIC_CONSISTENCY, "leaderboard", "render", str(out), "--out", str(root / "render" / "index.html"))
    return {"root": root, "out": out, "build": build, "ingests": ingests, "render": render, "inputs": inputs}


def test_a_build_an_ingest_and_a_render_write_no_secret(written: dict[str, Any]) -> None:
    root, out = written["root"], written["out"]
    build, ingests, render = written["build"], written["ingests"], written["render"]
    assert build.returncode == 1, build.stderr[-3000:]  # the crash fails; the leaky dummy run is a row
    assert all(run.returncode == 0 for run in (*ingests, render)), [r.stderr[-2000:] for r in (*ingests, render)]
    leaked = [path for path in _files_holding(root, PREFIX) if not path.startswith(str(written["inputs"]))]
    assert leaked == []
    for run in (build, *ingests, render):  # what the commands print (a cron job's log) holds none either
        assert PREFIX not in run.stdout + run.stderr
    # the secrets were there to leak: the stand-in wrote them, the ingested files hold them
    assert _files_holding(written["inputs"], f"{PREFIX}-key-password")
    board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    (failure,) = board["failures"]
    assert (failure["error"]["code"], failure["error"]["error_class"]) == ("lm_eval_failed", "RuntimeError")
    logs = "".join(path.read_text(encoding="utf-8") for path in (out / "runs").rglob("lm_eval.log"))
    assert "RuntimeError: cannot connect with key [redacted " in logs  # the full message: the local log only
    assert "[redacted MY_MODEL_TOKEN]" in logs  # a model list entry's env is redacted too
    leaky = next(row for row in board["rows"] if row["model"]["name"] == "leaky")
    assert leaky["provenance"]["git_hash"] == "[redacted ANTHROPIC_API_KEY]"  # the first secret, sorted


def test_a_real_results_file_without_credentials_is_left_as_it_is(written: dict[str, Any]) -> None:
    """No false finding in lm-eval's own fields (task configs, prompts, versions) of a real run."""
    (results,) = (written["out"] / "runs" / "2026-05-01").rglob("results_*.json")
    run = read_run(results)
    assert without_credentials(run, warn=pytest.fail) is run


def test_ingest_warns_once_naming_the_fields_and_a_rotated_key_keeps_the_row(written: dict[str, Any]) -> None:
    for run in written["ingests"]:
        (warning,) = [line for line in run.stderr.splitlines() if "warning" in line]
        assert warning.endswith(
            "credentials redacted in config.model_args, configs.<task>.metadata.api_key, "
            "configs.<task>.metadata.base_url (never written to the board, history or page); "
            "give keys in environment variables such as OPENAI_API_KEY"
        )
    board = json.loads((written["out"] / "leaderboard.json").read_text(encoding="utf-8"))
    judges = [row for row in board["rows"] if row["model"]["name"] == "judge-model"]
    assert len(judges) == 1  # the rotated key gave the same row id: one row, measured again
    # the allowlist: api_key is no public argument; base_url's host is not declared public (issue 54): a label
    assert judges[0]["model"]["model_args"] == "model=judge-model,base_url=private:judge-model"
    history = json.loads((written["out"] / "history" / "2026-05-02.json").read_text(encoding="utf-8"))
    assert [row["row_id"] for row in history["rows"]] == [judges[0]["row_id"]]


# ----------------------------------------------------------------------------- refused before any call

REFUSED = {
    "api_key": ("lc-chat", "model_args: 'model=m,api_key={s}'", "'api_key'", "OPENAI_API_KEY"),
    "token": ("hf", "model_args: {{pretrained: org/m, token: {s}}}", "'token'", "HF_TOKEN"),
    "url user info": (
        "local-chat-completions",
        "model_args: 'base_url=http://user:{s}@127.0.0.1:9/v1/chat/completions'",
        "user info in the URL of 'base_url'",
        "OPENAI_API_KEY",
    ),
    "url query": (
        "lc-chat",
        "model_args: 'base_url=http://127.0.0.1:9/v1/chat/completions?api-key={s}'",
        "query parameter 'api-key'",
        "OPENAI_API_KEY",
    ),
    "metadata": (
        "dummy",
        "metadata: {{password: {s}}}",
        "metadata: refusing a credential or an undeclared query parameter (argument 'password')",
        "variable",
    ),
    "extra_args": ("hf", "extra_args: ['--wandb_args', 'project=p,api_key={s}']", "extra_args", "WANDB_API_KEY"),
}


@pytest.mark.parametrize("way", list(REFUSED))
def test_a_build_refuses_a_credential_before_any_call(way: str, tmp_path: Path) -> None:
    backend, entry, found, home = REFUSED[way]
    secret = f"{PREFIX}-refused"
    calls = tmp_path / "calls.txt"
    fake = tmp_path / "lm_eval"
    fake.write_text(f"#!{sys.executable}\nopen({str(calls)!r}, 'a').write('called\\n')\n", encoding="utf-8")
    fake.chmod(0o755)
    models = tmp_path / "models.yaml"
    models.write_text(f"models:\n  - {{name: m, model: {backend}, {entry.format(s=secret)}}}\n", encoding="utf-8")
    run = children.run(
        [LOGIC_CONSISTENCY, "leaderboard", "build", "--models", str(models), "--out", str(tmp_path / "board"),
         "--lm-eval", str(fake), "--night", "2026-05-01"],
        capture_output=True, text=True, env=_env(), timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr[-2000:]
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith(f"logic-consistency: error: {models}: models[0] (m): ")
    assert found in line and home in line and secret not in line
    assert not calls.exists() and not (tmp_path / "board").exists()


class _Counting(http.server.BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        type(self).requests.append(self.path)
        self.send_response(500)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[str]]]:
    """An endpoint on 127.0.0.1 that records every request (none may arrive)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    _Counting.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", _Counting.requests
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("backend", "base_url"),
    [
        ("local-chat-completions", "http://judge:{s}@{host}/v1/chat/completions"),
        ("lc-chat", "http://{host}/v1/chat/completions?api-key={s}"),
    ],
)
def test_plain_lm_eval_refuses_a_credential_before_any_call(
    backend: str, base_url: str, endpoint: tuple[str, list[str]], tmp_path: Path
) -> None:
    host, requests = endpoint
    secret = f"{PREFIX}-lm-eval"
    url = base_url.format(s=secret, host=host)
    run = children.run(
        [LM_EVAL, "--model", backend, "--model_args", f"model=judge,base_url={url},tokenizer_backend=none",
         "--tasks", "logic_consistency_summeval", "--limit", "1", "--apply_chat_template",
         "--output_path", str(tmp_path / "out"), "--log_samples"],
        capture_output=True, text=True, env=_env(), timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert "lm_eval --model_args: refusing a credential" in last and "OPENAI_API_KEY" in last
    assert requests == [] and not (tmp_path / "out").exists()
    assert secret not in run.stdout + run.stderr
