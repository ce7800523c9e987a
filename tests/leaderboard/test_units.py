"""The unit path without a cluster: what a unit's ``lm_eval`` gets, and what never starts one.

A fake ``lm_eval`` (a shell script) records the environment it was started with and fails, so these
builds cost no model and no lm-eval start; the one real ``lm_eval`` start checks the shard
variable's one-line error.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.harness_ext.shards.shard import ENV_SHARD, Shard
from logic_consistency.leaderboard.board.ingest import BootstrapSettings
from logic_consistency.leaderboard.run.modellist import load_model_list
from logic_consistency.leaderboard.run.nightly import BuildStopped, build, stop_signals_raise
from logic_consistency.leaderboard.run.placement import capped_shards, normalise_endpoint
from logic_consistency.leaderboard.run.runner import RunSettings
from logic_consistency.leaderboard.run.units import ModelRun, plan_model

from .conftest import FIXTURE_DATA, lm_eval_env
from .shard_support import hash_lm_eval, model_list

NIGHT = "2026-06-04"


def _recording_lm_eval(folder: Path) -> tuple[str, Path]:
    """An ``lm_eval`` that appends ``<shard variable>|<OPENAI_API_KEY>`` per start to a file, then fails."""
    record = folder / "starts.txt"
    script = folder / "lm_eval_record"
    script.write_text(
        f'#!/bin/sh\necho "${{{ENV_SHARD}}}|${{OPENAI_API_KEY}}" >> "{record}"\nexit 3\n', encoding="utf-8"
    )
    script.chmod(0o755)
    return str(script), record


def _build(tmp_path: Path, models: Path, lm_eval: str, **overrides: object) -> tuple[list[str], list[str]]:
    lines: list[str] = []
    result = build(
        tmp_path / "out",
        model_list=models,
        overrides=overrides,
        night=NIGHT,
        lm_eval=lm_eval,
        bootstrap=BootstrapSettings(n_resamples=200),
        progress=False,
        log=lines.append,
        embedded_sha=lambda name: "0" * 64,
    )
    return [str(failure["error"]["code"]) for failure in result.document["failures"]], lines


def test_an_inherited_shard_variable_never_splits_a_plain_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_SHARD, "1/3")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    lm_eval, record = _recording_lm_eval(tmp_path)
    _, lines = _build(tmp_path, model_list(tmp_path, tasks=["logic_consistency_summeval"]), lm_eval)
    assert record.read_text(encoding="utf-8").splitlines() == ["|"]  # one whole run, no shard variable
    assert any(line.startswith(f"warning: {ENV_SHARD}='1/3' in the environment is ignored") for line in lines)


@pytest.mark.parametrize(
    ("limit", "shards", "why"),
    [
        ("null", 3, "its tasks have at most 3 documents"),
        ("2", 2, "its tasks have at most 2 documents under limit 2"),
        ("100", 3, "its tasks have at most 3 documents under limit 100"),
    ],
    ids=["no-limit", "limit-below", "limit-above"],
)
def test_shards_above_the_documents_are_capped_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: str, shards: int, why: str
) -> None:
    """The fixture's SummEval has 3 documents: ``--shards 256`` starts one ``lm_eval`` per document at most."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURE_DATA))
    lm_eval, record = _recording_lm_eval(tmp_path)
    models = tmp_path / "models.yaml"
    models.write_text(
        f"tasks: [logic_consistency_summeval]\nlimit: {limit}\nmodels:\n  - {{name: hash, model: lc-test-hash}}\n",
        encoding="utf-8",
    )
    _, lines = _build(tmp_path, models, lm_eval, shards=256)
    note = f"note: hash: shards 256 capped to {shards}: {why} (a shard past them would start lm_eval for none)"
    assert note in lines, lines
    assert record.read_text(encoding="utf-8").splitlines() == [f"{i}/{shards}|" for i in range(shards)]


def test_shards_that_cannot_be_counted_are_capped_by_the_limit_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No data on the driver (a Ray cluster's nodes may have it): a warning naming why, and only ``limit`` caps."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("LOGIC_CONSISTENCY_DATA", str(tmp_path / "no-data"))
    lm_eval, record = _recording_lm_eval(tmp_path)
    _, lines = _build(tmp_path, model_list(tmp_path, tasks=["logic_consistency_summeval"], limit=2), lm_eval, shards=5)
    assert any(line.startswith("warning: hash: cannot count its documents here (") for line in lines), lines
    assert "note: hash: shards 5 capped to 2: limit 2 leaves no document to the others" in " ".join(lines)
    assert record.read_text(encoding="utf-8").splitlines() == ["0/2|", "1/2|"]
    assert (capped_shards(5, None), capped_shards(5, 0.5), capped_shards(5, 3.0), capped_shards(2, 9.0)) == (5, 5, 3, 2)


def test_a_unit_gets_the_drivers_credential_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The credential travels in the job (Ray pickles it to the worker), overriding the node's value."""
    (spec,) = load_model_list(model_list(tmp_path, entry=", env: {EXTRA: 'x'}"), {"shards": 2})
    settings = RunSettings(
        night=NIGHT,
        out=tmp_path,
        cache_dir=tmp_path,
        lm_eval="lm_eval",
        bootstrap=BootstrapSettings(n_resamples=200),
        embedded_sha=lambda name: "0" * 64,
        credentials={"OPENAI_API_KEY": "sk-driver-key"},
    )
    planned = plan_model(spec, settings, local=False)
    assert isinstance(planned, ModelRun)
    node = {"OPENAI_API_KEY": "sk-node-key", ENV_SHARD: "5/9", "PATH": "/bin"}
    env = planned.jobs[1].lm_eval_run(tmp_path).environment(node)
    assert (env["OPENAI_API_KEY"], env["EXTRA"], env[ENV_SHARD], env["PATH"]) == ("sk-driver-key", "x", "1/2", "/bin")
    assert env["LOGIC_CONSISTENCY_BUILD_ID"] == settings.build_id
    assert "sk-driver-key" not in repr(planned.jobs[1]) and "sk-driver-key" not in repr(settings)


def test_a_backend_that_needs_a_key_without_one_fails_before_lm_eval_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    lm_eval, record = _recording_lm_eval(tmp_path)
    models = tmp_path / "models.yaml"
    models.write_text(
        "tasks: [logic_consistency_summeval]\nlimit: 2\nmodels:\n"
        "  - {name: paid, model: openai-chat-completions, model_args: 'model=gpt-4o-mini'}\n",
        encoding="utf-8",
    )
    (code,), _ = _build(tmp_path, models, lm_eval)
    assert code == "missing_credential", code
    (log_file,) = (tmp_path / "out" / "runs" / NIGHT).glob("paid*/lm_eval.log")
    log = log_file.read_text(encoding="utf-8")  # the full message: the local log only (issue 46)
    assert "backend openai-chat-completions needs OPENAI_API_KEY, which is set neither" in log
    assert not record.exists()  # no lm_eval, so no call billed to no key


@pytest.mark.parametrize(
    "text", ["1_0/20", " 1/3", "1/3 ", "+1/3", "\u0661/3", "1/3\n", "1//3", "3/2", "-1/3", "a/b", "0/0", ""]
)
def test_the_shard_variable_is_digits_slash_digits(text: str) -> None:
    with pytest.raises(ValueError, match=f"{ENV_SHARD}="):
        Shard.parse(text)


@pytest.mark.slow
def test_a_bad_shard_variable_is_one_line_before_the_model_is_built(tmp_path: Path) -> None:
    env = {**lm_eval_env(), ENV_SHARD: "1_0/20", "HASH_LM_ECHO": "HOME"}  # the model prints a line when built
    command = [hash_lm_eval(tmp_path), "--model", "lc-test-hash", "--tasks", "logic_consistency_summeval"]
    command += ["--limit", "2", "--output_path", str(tmp_path / "o"), "--log_samples"]
    run = children.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 2, run.stderr[-2000:]
    lines = run.stderr.strip().splitlines()
    assert lines[-1] == f"lm_eval: error: {ENV_SHARD}='1_0/20': expected i/N (digits only), e.g. 0/3", lines[-5:]
    assert "Traceback" not in run.stderr and "hash_lm:" not in run.stderr


@pytest.mark.parametrize(
    ("text", "endpoint"),
    [
        ("https://judge.example.org/v1/chat/completions", "judge.example.org:443"),
        ("judge.example.org:443", "judge.example.org:443"),
        ("http://Judge.Example.org", "judge.example.org:80"),
        ("http://localhost:8000/v1", "127.0.0.1:8000"),
        ("http://[::1]:8000/v1", "127.0.0.1:8000"),
        ("127.0.0.1:8000", "127.0.0.1:8000"),
        ("http://[2001:db8::1]:9/v1", "[2001:db8::1]:9"),
    ],
)
def test_endpoints_are_normalised(text: str, endpoint: str) -> None:
    assert normalise_endpoint(text) == endpoint


def test_the_documented_api_limits_example_caps_its_model(tmp_path: Path) -> None:
    """docs/cluster.md's example, as written: the limit applies to the paid judge."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "cluster.md"
    text = docs.read_text(encoding="utf-8")
    example = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "models.yaml").write_text(example, encoding="utf-8")
    specs = {spec.name: spec for spec in load_model_list(tmp_path / "models.yaml")}
    judge = specs["paid-judge"]
    assert (judge.endpoint, judge.api_limit, judge.slots) == ("judge.example.org:443", 8, 4)


def test_a_stop_while_ray_connects_is_the_builds_stop(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """SIGTERM while ``ray.init`` connects meets Ray's handler (``sys.exit(15)``): it becomes the build's
    stop (exit 143 with its line), and the build's handlers are back after."""
    ray = pytest.importorskip("ray")
    from logic_consistency.leaderboard.run.executor import build_executor

    def connecting(**_options: object) -> None:
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(signum))  # what ray.init installs
        os.kill(os.getpid(), signal.SIGTERM)  # arrives while connecting
        time.sleep(5)
        pytest.fail("the stop was lost")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", connecting)
    (spec,) = load_model_list(model_list(tmp_path))
    settings = RunSettings(NIGHT, tmp_path, tmp_path, "lm_eval", BootstrapSettings(n_resamples=200))
    with stop_signals_raise():
        build_handler = signal.getsignal(signal.SIGTERM)
        with pytest.raises(BuildStopped) as stopped:
            build_executor("ray").run([spec], settings)
        assert signal.getsignal(signal.SIGTERM) is build_handler
    assert stopped.value.signum == signal.SIGTERM


def test_a_file_the_build_redacts_is_named_with_its_count(tmp_path: Path) -> None:
    """Issue 54: the build's redaction of a run's files (defence in depth) says what it rewrote, never silently."""
    from logic_consistency.credentials import Redactor
    from logic_consistency.leaderboard.run.runner import scrub_outputs

    key = "kW3-local-key-1234"
    (tmp_path / "samples_t.jsonl").write_text(f'{{"resps": ["{key}", "again {key}"]}}\n', encoding="utf-8")
    (tmp_path / "results.json").write_text('{"ok": 1}', encoding="utf-8")
    (note,) = scrub_outputs(tmp_path, Redactor({key: "OPENAI_API_KEY"}), since=0.0)
    assert note == f"note: {tmp_path / 'samples_t.jsonl'}: 2 replacement(s) of a credential, written as [redacted NAME]"
    assert key not in (tmp_path / "samples_t.jsonl").read_text(encoding="utf-8")
