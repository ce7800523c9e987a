"""``leaderboard build --executor ray`` on a real Ray cluster on this machine (a head and two workers).

The cluster (``ray.cluster_utils.Cluster``) has one CPU per node; one worker also has the custom
resource ``special``. The model is ``lc-test-hash`` (tests/fixtures/hash_lm.py), whose answers are
functions of the request. Kept few and small: each lm_eval run is a few seconds of model calls.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.leaderboard.board.ingest import BootstrapSettings
from logic_consistency.leaderboard.run.nightly import build

from .conftest import FIXTURE_DATA, LOGIC_CONSISTENCY, lm_eval_env
from .shard_support import (
    ECHO_ENV,
    HASH_LM,
    HASH_RUN,
    comparable,
    files_holding,
    hash_lm_eval,
    model_list,
    scrubbed_echoes,
)

ray = pytest.importorskip("ray")  # the test extra installs it; CI runs these
from logic_consistency.leaderboard.run.endpoint_budget import EndpointBudget  # noqa: E402
from logic_consistency.leaderboard.run.executor import build_executor  # noqa: E402
from logic_consistency.leaderboard.run.ray_executor import NAMESPACE, RayClusterError  # noqa: E402

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
    os.environ.pop("OPENAI_API_KEY", None)  # the nodes have no key: a unit must get the driver's
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


def test_the_address_probe_passes_a_real_head(cluster: Any) -> None:
    from logic_consistency.leaderboard.run.ray_executor import check_reachable

    check_reachable(cluster["cluster"].address)  # the GCS answers HTTP/2's preface (grpc_probe.py)


def _build(tmp_path: Path, out: str, models: Path, executor: Any = None, **overrides: Any) -> tuple[Any, list[str]]:
    lines: list[str] = []
    result = build(
        tmp_path / out,
        model_list=models,
        overrides=overrides,
        night=NIGHT,
        cache_dir=tmp_path / "caches" / out,  # the request cache's own redaction is tested elsewhere
        lm_eval=hash_lm_eval(tmp_path),
        bootstrap=BOOT,
        progress=False,
        log=lines.append,
        executor=executor,
    )
    assert not result.failed, [outcome.failure for outcome in result.outcomes]
    return result, lines


def test_the_local_executor_local_shards_and_ray_shards_give_the_same_rows_and_keep_no_key(
    cluster: Any, tmp_path: Path
) -> None:
    """One model list through every path of one ``execute`` and one ``finish_model``: the same rows,
    and the key the model echoes (generations, log) in no file under any output folder."""
    models = model_list(tmp_path, tasks=TASKS, limit=3, entry=ECHO_ENV)
    local, _ = _build(tmp_path, "local", models)
    shards, _ = _build(tmp_path, "local3", models, shards=3)
    special = model_list(
        tmp_path, tasks=TASKS, limit=3, entry=ECHO_ENV + ", resources: {custom: {special: 1}}", name="s.yaml"
    )
    one, one_log = _build(tmp_path, "ray1", special, build_executor("ray"))
    three, _ = _build(tmp_path, "ray3", models, build_executor("ray"), shards=3)
    rows = [[comparable(row) for row in result.document["rows"]] for result in (local, shards, one, three)]
    assert rows[0] and rows[0] == rows[1] == rows[2] == rows[3]
    # the unit that needs the custom resource ran on the only node that has it
    assert f"ray nodes ['{cluster['special']}']" in one_log[-1], one_log
    assert len(list((tmp_path / "ray3" / "runs" / NIGHT / HASH_RUN).glob("shard-*-of-3/lm_eval.log"))) == 3
    for out, units in (("local", 1), ("local3", 3), ("ray1", 1), ("ray3", 3)):
        assert scrubbed_echoes(tmp_path / out / "runs") == units, out  # each lm_eval echoed it: scrubbed
        assert files_holding(tmp_path / out) == [], out


def _calls(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


@pytest.mark.parametrize(("in_flight", "bound"), [("", 0), ("1", 1)], ids=["between-calls", "inside-a-call"])
def test_a_killed_worker_repeats_at_most_the_calls_in_flight(
    cluster: Any, tmp_path: Path, in_flight: str, bound: int
) -> None:
    """The documented bound: a retry repeats only calls in flight when the worker died (num_concurrent 1)."""
    calls, died = tmp_path / "calls.txt", tmp_path / "died"
    env = (
        f"{{HASH_LM_CALLS: '{calls}', HASH_LM_DIE_AFTER: '6', HASH_LM_DIE_AFTER_DONE: '{died}', "
        f"HASH_LM_KILL_PARENT: '1', HASH_LM_DIE_IN_FLIGHT: '{in_flight}'}}"
    )
    models = model_list(tmp_path, tasks=TASKS[:1] + TASKS[2:], limit=2, entry=f", env: {env}")
    reference, _ = _build(tmp_path, "clean", model_list(tmp_path, tasks=TASKS[:1] + TASKS[2:], limit=2, name="c.yaml"))
    result, _ = _build(tmp_path, "killed", models, build_executor("ray", retries=2))
    assert died.exists(), "the worker was never killed"
    lines = _calls(calls)
    before, after = lines[:6], lines[6:]  # the first attempt died at its sixth call
    assert before and after, (len(before), len(after))
    repeated = set(before) & set(after)
    print(f"worker killed {'inside' if in_flight else 'between'} calls: {len(repeated)} repeated", file=sys.stderr)
    assert len(repeated) == bound, repeated
    if bound:
        assert repeated == {before[-1]}  # the call in flight, and only it
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
    driver = children.start(command, env=lm_eval_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while not _calls(calls) and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.5)
    if not _calls(calls):
        driver.kill()
        pytest.fail(f"no model call started: {driver.communicate()[1][-3000:]}")
    driver.send_signal(stop)
    _, stderr = driver.communicate(timeout=120)
    assert driver.returncode == 128 + stop, stderr[-2000:]  # 130 for Ctrl-C, 143 for SIGTERM
    assert f"interrupted by {stop.name}" in stderr, stderr[-2000:]
    deadline = time.monotonic() + 30
    while _running_hash_lm(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _running_hash_lm(tmp_path)
    assert not (tmp_path / "out" / "leaderboard.json").exists()


def _running_hash_lm(folder: Path) -> list[str]:
    """Command lines of live processes running the stand-in model for this test (its lm_eval writes
    under ``folder``; other tests may run the same model on other pytest workers meanwhile)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            text = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(HASH_LM) in text and str(folder) in text:
            found.append(text)
    return found


class _CountingServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _CountingHandler)
        self.lock = threading.Lock()
        self.in_flight = self.peak = self.total = 0
        self.authorization: list[str] = []


class _CountingHandler(http.server.BaseHTTPRequestHandler):
    server: _CountingServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with self.server.lock:
            self.server.authorization.append(self.headers.get("Authorization", ""))
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


def test_the_api_budget_holds_across_shards_and_workers_send_the_drivers_key(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit's key names the server as 127.0.0.1, the model's base_url as localhost: one endpoint.
    The nodes were started without OPENAI_API_KEY; the driver's must reach every call."""
    key = "sk-driver-" + "9" * 30
    monkeypatch.setenv("OPENAI_API_KEY", key)
    server = _CountingServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://localhost:{server.server_address[1]}/v1/chat/completions"
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
        _build(tmp_path, "out", models, build_executor("ray"), shards=3)
        in_use, held_at_once = ray.get(budget.usage.remote())
    finally:
        server.shutdown()
        server.server_close()
    print(f"budget 1: peak {server.peak} concurrent of {server.total} requests", file=sys.stderr)
    assert server.total > 0
    assert server.peak == 1  # three shards, one slot between them
    assert (in_use, held_at_once) == (0, 1)
    assert set(server.authorization) == {f"Bearer {key}"}, sorted(set(server.authorization))[:3]
    assert files_holding(tmp_path / "out", key) == []


@pytest.mark.parametrize(
    ("resources", "named"),
    [
        ("{custom: {nowhere: 1}}", "nowhere 1 (largest node: 0)"),
        ("{num_cpus: 4}", "CPU 4 (largest node: 1)"),
        ("{num_gpus: 1}", "GPU 1 (largest node: 0)"),
        ("{memory: 1.0e+15}", "memory 1e+15"),
    ],
    ids=["custom", "cpus", "gpus", "memory"],
)
def test_a_unit_no_node_can_hold_is_refused_before_it_runs(
    cluster: Any, tmp_path: Path, resources: str, named: str
) -> None:
    models = model_list(tmp_path, tasks=TASKS[:1], limit=2, entry=f", resources: {resources}")
    started = time.monotonic()
    with pytest.raises(RayClusterError, match="hash: no node of the Ray cluster") as refused:
        _build(tmp_path, "out", models, build_executor("ray"))
    assert named in str(refused.value), str(refused.value)
    assert time.monotonic() - started < 60
    assert not (tmp_path / "out" / "runs").exists() or not any((tmp_path / "out" / "runs").rglob("*.log"))


#: Starts a one-node Ray of its own (not the module's cluster), runs a build against it and kills the
#: head's GCS once the model is called; prints the driver's status, seconds after the kill and stderr.
HEAD_DIES = """
import json, os, subprocess, sys, time
from pathlib import Path
from ray.cluster_utils import Cluster
tmp, models, calls, lm_eval, cli = (Path(arg) for arg in sys.argv[1:6])
nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
address = nodes.address
try:
    command = [str(cli), "leaderboard", "build", "--models", str(models), "--out", str(tmp / "out"),
               "--executor", "ray", "--ray-address", address, "--lm-eval", str(lm_eval),
               "--night", "2026-06-05", "--no-progress"]
    driver = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while not (calls.exists() and calls.read_text()) and time.monotonic() < deadline and driver.poll() is None:
        time.sleep(0.5)
    killed = time.monotonic()
    nodes.head_node.kill_gcs_server()
    try:
        _, stderr = driver.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        driver.kill()
        _, stderr = driver.communicate()
    print(json.dumps({"address": address, "status": driver.returncode,
                      "seconds": time.monotonic() - killed, "stderr": stderr[-3000:]}))
finally:  # the head's other processes and the agents its raylet started (Ray cannot stop them now)
    pids = [info.process.pid for infos in nodes.head_node.all_processes.values() for info in infos]
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) in pids:
                pids.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            pass
    for pid in pids:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
"""


def test_a_head_that_dies_is_one_line_naming_the_head_and_its_address(tmp_path: Path) -> None:
    """Ray's driver would end the process itself 60 s later, naming neither head nor address."""
    calls = tmp_path / "calls.txt"
    models = model_list(
        tmp_path, tasks=TASKS[:1], limit=3, entry=f", env: {{HASH_LM_CALLS: '{calls}', HASH_LM_DELAY: '2'}}"
    )
    args = [str(tmp_path), str(models), str(calls), hash_lm_eval(tmp_path), str(LOGIC_CONSISTENCY)]
    run = children.run([sys.executable, "-c", HEAD_DIES, *args], capture_output=True, text=True, env=lm_eval_env())
    assert run.returncode == 0, run.stderr[-3000:]
    end = json.loads(run.stdout.strip().splitlines()[-1])
    line = [text for text in end["stderr"].splitlines() if text.startswith("logic-consistency: error:")]
    assert end["status"] == 2, end
    assert line == [
        f"logic-consistency: error: lost the Ray head ({end['address']}): its GCS at {end['address']} no longer "
        "answers (Connection refused); the build stopped and wrote nothing"
    ], end["stderr"]
    assert end["seconds"] < 30
    assert not (tmp_path / "out" / "leaderboard.json").exists()
