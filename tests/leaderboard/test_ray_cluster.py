"""``leaderboard build --executor ray`` on a real Ray cluster on this machine (a head and two workers).

The cluster (``ray.cluster_utils.Cluster``) has one CPU per node; one worker also has the custom
resource ``special``. The model is ``lc-test-hash`` (tests/fixtures/hash_lm.py), whose answers are
functions of the request. Kept few and small: each lm_eval run is a few seconds of model calls.
"""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.leaderboard.ingest import BootstrapSettings
from logic_consistency.leaderboard.nightly import build

from .conftest import FIXTURE_DATA, LOGIC_CONSISTENCY, lm_eval_env
from .shard_support import HASH_LM, HASH_RUN, comparable, hash_lm_eval, model_list

ray = pytest.importorskip("ray")  # the test extra installs it; CI runs these
from logic_consistency.leaderboard.ray_executor import NAMESPACE, EndpointBudget, RayExecutor  # noqa: E402

pytestmark = pytest.mark.slow
NIGHT = "2026-06-02"
BOOT = BootstrapSettings(n_resamples=200)
TASKS = ("logic_consistency_summeval", "logic_consistency_summeval_pairs", "logic_consistency_gv_arithmetic")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A head and two worker nodes, one CPU each; the second worker has the resource ``special``."""
    from ray.cluster_utils import Cluster

    saved = dict(os.environ)
    os.environ.update({"LOGIC_CONSISTENCY_DATA": str(FIXTURE_DATA), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    nodes.add_node(num_cpus=1)
    special = nodes.add_node(num_cpus=1, resources={"special": 1})
    nodes.wait_for_nodes()
    ray.init(address=nodes.address, namespace=NAMESPACE, log_to_driver=False)
    try:
        yield {"cluster": nodes, "special": special.node_id}
    finally:
        ray.shutdown()
        nodes.shutdown()
        os.environ.clear()
        os.environ.update(saved)


def _build(tmp_path: Path, out: str, models: Path, executor: Any = None, **overrides: Any) -> tuple[Any, list[str]]:
    lines: list[str] = []
    result = build(
        tmp_path / out,
        model_list=models,
        overrides=overrides,
        night=NIGHT,
        lm_eval=hash_lm_eval(tmp_path),
        bootstrap=BOOT,
        progress=False,
        log=lines.append,
        executor=executor,
    )
    assert not result.failed, [outcome.failure for outcome in result.outcomes]
    return result, lines


def test_local_ray_one_shard_and_ray_three_shards_give_the_same_rows(cluster: Any, tmp_path: Path) -> None:
    models = model_list(tmp_path, tasks=TASKS, limit=2)
    local, _ = _build(tmp_path, "local", models)
    special = model_list(tmp_path, tasks=TASKS, limit=2, entry=", resources: {custom: {special: 1}}", name="s.yaml")
    one, one_log = _build(tmp_path, "ray1", special, RayExecutor())
    three, _ = _build(tmp_path, "ray3", models, RayExecutor(), shards=3)  # limit 2: shard 2 has no document
    rows = [[comparable(row) for row in result.document["rows"]] for result in (local, one, three)]
    assert rows[0] and rows[0] == rows[1] == rows[2]
    # the unit that needs the custom resource ran on the only node that has it
    assert f"ray nodes ['{cluster['special']}']" in one_log[-1], one_log
    assert len(list((tmp_path / "ray3" / "runs" / NIGHT / HASH_RUN).glob("shard-*-of-3/lm_eval.log"))) == 3


def _calls(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def test_a_killed_worker_is_retried_with_no_repeated_call(cluster: Any, tmp_path: Path) -> None:
    calls, died = tmp_path / "calls.txt", tmp_path / "died"
    env = f"{{HASH_LM_CALLS: '{calls}', HASH_LM_DIE_AFTER: '6', HASH_LM_DIE_AFTER_DONE: '{died}', HASH_LM_KILL_PARENT: '1'}}"
    models = model_list(tmp_path, tasks=TASKS[:1] + TASKS[2:], limit=2, entry=f", env: {env}")
    reference, _ = _build(tmp_path, "clean", model_list(tmp_path, tasks=TASKS[:1] + TASKS[2:], limit=2, name="c.yaml"))
    result, _ = _build(tmp_path, "killed", models, RayExecutor(retries=2))
    assert died.exists(), "the worker was never killed"
    lines = _calls(calls)
    before, after = lines[:6], lines[6:]  # the first attempt died at its sixth call
    assert before and after, (len(before), len(after))
    assert not set(before) & set(after), "the retry repeated a model call"
    assert [comparable(r) for r in result.document["rows"]] == [comparable(r) for r in reference.document["rows"]]


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_cancels_the_ray_tasks_and_leaves_no_lm_eval(
    cluster: Any, tmp_path: Path, stop: signal.Signals
) -> None:
    calls = tmp_path / "calls.txt"
    models = model_list(
        tmp_path, tasks=TASKS[:1], limit=3, entry=f", env: {{HASH_LM_CALLS: '{calls}', HASH_LM_DELAY: '1'}}"
    )
    command = [LOGIC_CONSISTENCY, "leaderboard", "build", "--models", str(models), "--out", str(tmp_path / "out")]
    command += ["--executor", "ray", "--ray-address", cluster["cluster"].address, "--shards", "2"]
    command += ["--lm-eval", hash_lm_eval(tmp_path), "--night", NIGHT, "--no-progress"]
    driver = subprocess.Popen(command, env=lm_eval_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while not _calls(calls) and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.5)
    if not _calls(calls):
        driver.kill()
        raise AssertionError(f"no model call started: {driver.communicate()[1][-3000:]}")
    driver.send_signal(stop)
    _, stderr = driver.communicate(timeout=120)
    assert driver.returncode == 128 + stop, stderr[-2000:]  # 130 for Ctrl-C, 143 for SIGTERM
    assert f"interrupted by {stop.name}" in stderr, stderr[-2000:]
    deadline = time.monotonic() + 30
    while _running_hash_lm() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _running_hash_lm()
    assert not (tmp_path / "out" / "leaderboard.json").exists()


def _running_hash_lm() -> list[str]:
    """Command lines of live processes running the stand-in model (any lm_eval of these tests)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            text = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(HASH_LM) in text:
            found.append(text)
    return found


class _CountingServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _CountingHandler)
        self.lock = threading.Lock()
        self.in_flight = self.peak = self.total = 0


class _CountingHandler(http.server.BaseHTTPRequestHandler):
    server: _CountingServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with self.server.lock:
            self.server.in_flight += 1
            self.server.total += 1
            self.server.peak = max(self.server.peak, self.server.in_flight)
        time.sleep(0.05)
        with self.server.lock:
            self.server.in_flight -= 1
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


def test_the_api_budget_holds_across_shards(cluster: Any, tmp_path: Path) -> None:
    server = _CountingServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions"
        endpoint = f"127.0.0.1:{server.server_address[1]}"
        # the budget as another build would hold it: the build's units must share this actor
        budget = ray.remote(num_cpus=0)(EndpointBudget).options(name=f"api:{endpoint}", namespace=NAMESPACE).remote(1)
        models = model_list(
            tmp_path,
            tasks=TASKS[:1],
            limit=3,
            extra=f"api_limits: {{'{endpoint}': 1}}",
            entry=f", model_args: 'base_url={url},num_concurrent=1'",
        )
        _build(tmp_path, "out", models, RayExecutor(), shards=3)
        in_use, held_at_once = ray.get(budget.usage.remote())
    finally:
        server.shutdown()
        server.server_close()
    print(f"budget 1: peak {server.peak} concurrent of {server.total} requests", file=sys.stderr)
    assert server.total > 0
    assert server.peak == 1  # three shards, one slot between them
    assert (in_use, held_at_once) == (0, 1)
