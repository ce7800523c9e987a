"""The one starter of child processes (``harness_ext/jobs/processes.py``), for the board and the study
alike: a timeout stops the child's whole process group, kept logs are redacted, a stop of the parent
stops the child first, and the study's ``lm_eval`` runs get all of it (issue 41, item 5)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from logic_consistency.harness_ext.jobs import processes
from logic_consistency.harness_ext.jobs.processes import Stopped, run_captured, run_logged, stop_signals_raise
from logic_consistency.harness_ext.training import study_eval as study
from logic_consistency.harness_ext.training.study_eval import LmEvalRun

SECRET = "sk-test-9f8e7d6c5b4a39281706"

#: A child that prints the key variable, starts a grandchild sleeping in its process group (its pid
#: to a file), and sleeps: only a stop of the whole group ends both.
SLEEPER = """
import os, subprocess, sys, time
print("key:", os.environ["OPENAI_API_KEY"], flush=True)
print("stderr key:", os.environ["OPENAI_API_KEY"], file=sys.stderr, flush=True)
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open(sys.argv[1], "w").write(str(helper.pid))
time.sleep(60)
"""


def _gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            status = Path(f"/proc/{pid}/status")
            if status.exists() and "\nState:\tZ" in status.read_text():
                return True  # a zombie: ended, waiting for its parent to read its status
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_a_stop_signal_becomes_stopped_and_the_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Stopped) as stopped, stop_signals_raise():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    assert stopped.value.signum == signal.SIGTERM and "SIGTERM" in str(stopped.value)
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_a_timeout_stops_the_group_and_the_log_is_redacted(tmp_path: Path) -> None:
    pid_file, log = tmp_path / "helper.pid", tmp_path / "run.log"
    env = {**os.environ, "OPENAI_API_KEY": SECRET}
    ended = run_logged([sys.executable, "-c", SLEEPER, str(pid_file)], log_file=log, env=env, timeout=3)
    assert ended.timed_out and ended.returncode is None and ended.seconds < 3 + processes.KILL_GRACE_SECONDS
    assert _gone(int(pid_file.read_text())), "the grandchild outlived the stop of its group"
    text = log.read_text()
    assert "key:" in text and "stderr key:" in ended.stderr_tail
    assert SECRET not in text and SECRET not in ended.stderr_tail


@pytest.mark.slow
def test_a_stop_of_the_parent_stops_the_child_first(tmp_path: Path) -> None:
    pid_file = tmp_path / "helper.pid"
    env = {**os.environ, "OPENAI_API_KEY": SECRET}

    signal.setitimer(signal.ITIMER_REAL, 2.0)  # SIGTERM to this process while the child runs
    previous = signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGTERM))
    try:
        with pytest.raises(Stopped), stop_signals_raise():
            run_logged([sys.executable, "-c", SLEEPER, str(pid_file)], log_file=tmp_path / "run.log", env=env)
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert _gone(int(pid_file.read_text())), "the child's group outlived the parent's stop"


@pytest.mark.slow
def test_a_helper_command_is_captured_and_a_timeout_stops_it() -> None:
    done = run_captured([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr)"])
    assert (done.returncode, done.stdout.strip(), done.stderr.strip()) == (0, "out", "err")
    started = time.monotonic()
    with pytest.raises(Exception, match="timed out"):
        run_captured([sys.executable, "-c", "import time; time.sleep(60)"], timeout=1)
    assert time.monotonic() - started < 1 + processes.KILL_GRACE_SECONDS


@pytest.mark.slow
def test_the_studys_lm_eval_times_out_redacted_and_keeps_no_stale_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "test_eval"
    work = tmp_path / "test_eval.partial"  # where a run writes until it has ended well
    (work / "model").mkdir(parents=True)
    (work / "model" / "samples_task_old.jsonl").write_text("{}\n")  # a failed earlier try's
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    command = [sys.executable, "-c", SLEEPER, str(tmp_path / "helper.pid")]
    monkeypatch.setattr(LmEvalRun, "command", lambda self: command)
    run = LmEvalRun(base=Path("/m"), tasks="t", metadata={}, limit=None, out=out)
    with pytest.raises(RuntimeError, match=r"row: lm_eval failed \(timed out after 2 s\)") as failed:
        study.run_lm_eval(run, label="row", timeout=2)
    assert SECRET not in str(failed.value) and "stderr key: [redacted" in str(failed.value)
    log = (work / "lm_eval.log").read_text()
    assert "key: [redacted" in log and SECRET not in log
    assert not out.exists() and not (work / "done").exists() and not list(work.rglob("samples_*.jsonl"))
    assert _gone(int((tmp_path / "helper.pid").read_text()))


def test_improve_ends_on_sigterm_as_on_ctrl_c(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``improve`` under SIGTERM: the stop reaches the study where it is (its lm_eval is stopped there,
    see the tests above), then one line and exit status 143; its handlers are gone after."""
    import argparse

    from logic_consistency.cli import improve

    def study(args: argparse.Namespace) -> int:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        raise AssertionError("the stop was lost")

    monkeypatch.setattr(improve, "_study", study)
    before = signal.getsignal(signal.SIGTERM)
    assert improve._run(argparse.Namespace(out=str(tmp_path))) == 143
    assert "interrupted; finished rows and the last checkpoint are kept" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is before
