"""The nightly build: run the suite on every listed model, merge into the leaderboard, keep history.

``logic-consistency leaderboard build`` (:func:`build`):

1. reads the model list (:mod:`.modellist`) and the existing ``leaderboard.json`` (validated first,
   so a corrupt board is reported before hours of evaluation);
2. for each model, in its own ``lm_eval`` subprocess (a model that cannot load, crashes or hangs
   past its ``timeout`` cannot take the build down): ``--output_path runs/<night>/<slug>
   --log_samples --use_cache cache/<slug>-<revision>``. lm-eval's request cache is keyed by the
   request text, so the cache file name carries the weights' revision: an unchanged model is
   answered from the cache instead of being re-scored, a changed one starts a fresh cache;
3. ingests each results file into a row (:mod:`.ingest`); a failure (non-zero exit, timeout, no or
   unreadable results) is recorded with its error and the last lines of stderr, and the next model
   runs;
4. writes ``history/<night>.json`` (tonight's rows and failures, merged with an earlier build of the
   same night) and then ``leaderboard.json`` (merged with the existing board), each atomically.

Nothing is written before every model has run, and each write is atomic, so a crash or Ctrl-C at
any point leaves the previous leaderboard intact (lm-eval's outputs of the models already run stay
in ``runs/`` and can be added with ``leaderboard ingest``). A lock file stops two builds on the same
folder from interleaving.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from tqdm.auto import tqdm

from .atomic import atomic_write_json, build_lock, remove_stale_temporaries
from .ingest import DEFAULT_BOOTSTRAP, BootstrapSettings, ingest_results, iso_utc
from .merge import make_document, merge_documents
from .modelid import ModelIdentity, identify, slug
from .modellist import ModelSpec, load_model_list
from .results import find_results_files
from .schema import load_document, validate

__all__ = [
    "BuildResult", "build", "check_night", "commit", "ingest_into", "lm_eval_command", "run_logged", "run_model", "today",
]

LEADERBOARD_FILE = "leaderboard.json"
HISTORY_DIR = "history"
RUNS_DIR = "runs"
CACHE_DIR = "cache"
#: Lines of a failed run's stderr kept in the leaderboard.
STDERR_TAIL_LINES = 30
#: Seconds between SIGTERM and SIGKILL when a run is stopped.
KILL_GRACE_SECONDS = 10.0


def today() -> str:
    """Today's date in UTC (``YYYY-MM-DD``): the default night."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def check_night(night: str) -> str:
    """Return ``night`` if it is a ``YYYY-MM-DD`` date, else raise :class:`ValueError`."""
    try:
        datetime.strptime(night, "%Y-%m-%d")
    except (TypeError, ValueError):
        raise ValueError(f"--night must be a date YYYY-MM-DD, got {night!r}") from None
    return night


def _disable(progress: bool | None) -> bool | None:
    """tqdm's ``disable`` for a progress flag (``None``: bars only on a terminal)."""
    return None if progress is None else not progress


def default_lm_eval() -> str:
    """The ``lm_eval`` next to this Python (the venv's), else the one on ``PATH``."""
    found = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) or shutil.which("lm_eval")
    return found or "lm_eval"


def lm_eval_command(spec: ModelSpec, *, lm_eval: str, output_path: Path, cache_path: Path) -> list[str]:
    """The ``lm_eval`` command line of one model's run."""
    import json

    command = [lm_eval, "--model", spec.backend]
    if spec.model_args:
        command += ["--model_args", spec.model_args]
    command += ["--tasks", spec.tasks]
    if spec.batch_size is not None:
        command += ["--batch_size", spec.batch_size]
    if spec.limit is not None:
        command += ["--limit", f"{int(spec.limit)}" if float(spec.limit).is_integer() else f"{spec.limit}"]
    if spec.metadata:
        command += ["--metadata", json.dumps(spec.metadata, sort_keys=True)]
    if spec.apply_chat_template:
        command.append("--apply_chat_template")
    command += ["--output_path", str(output_path), "--log_samples", "--use_cache", str(cache_path)]
    command += list(spec.extra_args)
    return command


@dataclass(frozen=True)
class ProcessResult:
    """How a subprocess ended."""

    returncode: int | None
    stderr_tail: str
    timed_out: bool
    seconds: float


def _kill_group(process: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the run's process group, then SIGKILL it if it has not exited after a grace period."""
    _kill_group(process, signal.SIGTERM)
    try:
        process.wait(timeout=KILL_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        _kill_group(process, signal.SIGKILL)
        process.wait()


def run_logged(
    command: Sequence[str],
    *,
    log_file: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    on_output: Callable[[str], None] | None = None,
) -> ProcessResult:
    """Run ``command`` in its own process group, appending its output to ``log_file``.

    Args:
        command: Program and arguments.
        log_file: Receives stdout and stderr (appended).
        env: Environment (default: this process's).
        timeout: Seconds before the whole process group is stopped.
        on_output: Called with each output line (progress display).

    Returns:
        Exit status (``None`` if it had to be killed), the last stderr lines, whether it timed out.

    Raises:
        KeyboardInterrupt: Re-raised after stopping the process group (Ctrl-C stops the run too).
    """
    log_file.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
    lock = threading.Lock()
    with log_file.open("ab") as log:
        log.write(f"\n=== {iso_utc(time.time())} $ {' '.join(command)}\n".encode())
        log.flush()
        process = subprocess.Popen(
            list(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(env or os.environ),
            start_new_session=True,
        )

        def pump(stream: IO[bytes], keep: bool) -> None:
            for raw in stream:
                with lock:
                    log.write(raw)
                text = raw.decode("utf-8", errors="replace").rstrip("\n")
                last = [piece for piece in text.split("\r") if piece.strip()]
                if not last:
                    continue
                if keep:
                    tail.append(last[-1])
                if on_output is not None:
                    on_output(last[-1])

        assert process.stdout is not None and process.stderr is not None
        threads = [threading.Thread(target=pump, args=(process.stdout, False), daemon=True),
                   threading.Thread(target=pump, args=(process.stderr, True), daemon=True)]
        for thread in threads:
            thread.start()
        timed_out = False
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop(process)
        except BaseException:
            _stop(process)
            raise
        finally:
            for thread in threads:
                thread.join(timeout=5)
    returncode = None if timed_out else process.returncode
    return ProcessResult(returncode, "\n".join(tail), timed_out, time.monotonic() - started)


def _embedded_sha_subprocess(name: str) -> str:
    """GGUF sha256 of an embedded model, resolved (converted on first use) in a subprocess."""
    import json

    completed = subprocess.run(
        [sys.executable, "-m", "logic_consistency.cli", "model-path", name],
        capture_output=True, text=True,
    )
    if completed.returncode != 0:
        tail = "\n".join(completed.stderr.strip().splitlines()[-5:])
        raise ValueError(f"cannot resolve embedded model {name!r}: {tail}")
    folder = Path(completed.stdout.strip().splitlines()[-1])
    manifest = json.loads((folder / "logic_consistency_model.json").read_text(encoding="utf-8"))
    return str(manifest["gguf_sha256"])


@dataclass(frozen=True)
class RunOutcome:
    """One model's run: a row, or a failure record."""

    spec: ModelSpec
    row: dict[str, Any] | None
    failure: dict[str, Any] | None
    seconds: float
    log_file: Path


def _failure(spec: ModelSpec, night: str, message: str, *, returncode: int | None = None,
             stderr_tail: str = "", log_file: Path | None = None) -> dict[str, Any]:
    return {
        "name": spec.name,
        "backend": spec.backend,
        "model_args": spec.model_args,
        "night": night,
        "failed_at": iso_utc(time.time()),
        "error": {"message": message, "returncode": returncode, "stderr_tail": stderr_tail},
        "log_file": str(log_file) if log_file is not None else None,
    }


def _cache_name(spec: ModelSpec, identity: ModelIdentity) -> str:
    revision = re.sub(r"[^A-Za-z0-9._-]+", "-", identity.revision)[:16]
    return f"{slug(spec.name)}-{revision}"


def run_model(
    spec: ModelSpec,
    *,
    night: str,
    out: Path,
    cache_dir: Path,
    lm_eval: str,
    bootstrap: BootstrapSettings,
    embedded_sha: Callable[[str], str] = _embedded_sha_subprocess,
    on_output: Callable[[str], None] | None = None,
) -> RunOutcome:
    """Run the suite on one model and ingest the result; never raises for a failing model.

    Raises:
        KeyboardInterrupt: Ctrl-C (the run's process group is stopped first).
    """
    started = time.monotonic()
    run_dir = out / RUNS_DIR / night / slug(spec.name)
    log_file = run_dir / "lm_eval.log"

    def failed(message: str, **kwargs: Any) -> RunOutcome:
        failure = _failure(spec, night, message, log_file=log_file, **kwargs)
        return RunOutcome(spec, None, failure, time.monotonic() - started, log_file)

    try:
        identity = identify(spec.backend, spec.model_args, name=spec.name, revision=spec.revision,
                            precision=spec.precision, embedded_sha=embedded_sha)
    except (ValueError, OSError, KeyError, IndexError, ImportError) as error:
        return failed(f"cannot identify the model: {error}")
    command = lm_eval_command(spec, lm_eval=lm_eval, output_path=run_dir,
                              cache_path=cache_dir / _cache_name(spec, identity))
    before = {path: path.stat().st_mtime for path in find_results_files(run_dir)} if run_dir.is_dir() else {}
    try:
        process = run_logged(command, log_file=log_file, env={**os.environ, **spec.env},
                             timeout=spec.timeout, on_output=on_output)
    except OSError as error:
        return failed(f"cannot start {command[0]}: {error}")
    if process.timed_out:
        return failed(f"timed out after {spec.timeout:g} s; stopped", stderr_tail=process.stderr_tail)
    if process.returncode != 0:
        return failed(f"lm_eval exited with status {process.returncode}", returncode=process.returncode,
                      stderr_tail=process.stderr_tail)
    written = [path for path in find_results_files(run_dir)
               if path not in before or path.stat().st_mtime > before[path]]
    if not written:
        return failed(f"lm_eval exited 0 but wrote no results_*.json under {run_dir}",
                      returncode=0, stderr_tail=process.stderr_tail)
    newest = max(written, key=lambda path: path.stat().st_mtime)
    try:
        row = ingest_results(newest, identity=identity, night=night, bootstrap=bootstrap)
    except (ValueError, FileNotFoundError) as error:
        return failed(f"unreadable results: {error}", returncode=0)
    return RunOutcome(spec, row, None, time.monotonic() - started, log_file)


def commit(
    out: Path,
    night: str,
    rows: Iterable[Mapping[str, Any]],
    failures: Iterable[Mapping[str, Any]],
    *,
    bootstrap: BootstrapSettings,
) -> dict[str, Any]:
    """Write tonight's history file and merge it into ``leaderboard.json`` (both atomically).

    Call under :func:`~.atomic.build_lock`.

    Returns:
        The new leaderboard document.

    Raises:
        ValueError: The existing files are invalid, or the merged document fails validation (in
            which case nothing is written).
    """
    board_path, history_path = out / LEADERBOARD_FILE, out / HISTORY_DIR / f"{night}.json"
    current = load_document(board_path) if board_path.exists() else None
    tonight = make_document("night", rows, failures, night=night, bootstrap=bootstrap)
    if history_path.exists():
        tonight = merge_documents(load_document(history_path), tonight, kind="night")
    tonight["nights"] = [{"night": night, "rows": len(tonight["rows"]), "failures": len(tonight["failures"]),
                          "history_file": None}]
    incoming = copy.deepcopy(tonight)
    incoming["nights"][0]["history_file"] = f"{HISTORY_DIR}/{night}.json"
    merged = merge_documents(current, incoming, kind="leaderboard")
    validate(tonight, history_path)
    validate(merged, board_path)
    atomic_write_json(history_path, tonight)
    atomic_write_json(board_path, merged)
    return merged


@dataclass(frozen=True)
class BuildResult:
    """What a build did."""

    document: dict[str, Any]
    outcomes: list[RunOutcome]

    @property
    def failed(self) -> list[RunOutcome]:
        """The models whose run failed."""
        return [outcome for outcome in self.outcomes if outcome.failure is not None]


def build(
    out: str | os.PathLike[str],
    *,
    model_list: str | os.PathLike[str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    only: Sequence[str] = (),
    night: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    lm_eval: str | None = None,
    bootstrap: BootstrapSettings = DEFAULT_BOOTSTRAP,
    progress: bool | None = None,
    embedded_sha: Callable[[str], str] = _embedded_sha_subprocess,
    log: Callable[[str], None] = lambda message: print(message, file=sys.stderr),
) -> BuildResult:
    """Run the nightly build (see the module docstring).

    Args:
        out: Leaderboard folder (``leaderboard.json``, ``history/``, ``runs/``, ``cache/``).
        model_list: Model list YAML (default: the shipped two embedded models).
        overrides: Command-line settings over the list (``tasks``, ``limit``, ``metadata``, ...).
        only: Run only these model names.
        night: Night date (default: today, UTC).
        cache_dir: lm-eval request caches (default: ``out/cache``).
        lm_eval: The ``lm_eval`` executable (default: the venv's).
        bootstrap: Interval parameters.
        progress: tqdm bar over models (``None``: only on a terminal).
        embedded_sha: Resolves an embedded model's GGUF sha256 (injectable for tests).
        log: Receives one status line per model.

    Returns:
        The written leaderboard and each model's outcome.

    Raises:
        FileNotFoundError, ValueError: Bad model list, unknown ``only`` name, invalid existing
            leaderboard, or another build running on ``out``. Model failures do not raise.
        KeyboardInterrupt: Ctrl-C; nothing is written.
    """
    root = Path(out)
    night = check_night(night or today())
    specs = load_model_list(model_list, overrides)
    if only:
        unknown = sorted(set(only) - {spec.name for spec in specs})
        if unknown:
            raise ValueError(f"--only: no model named {unknown} in the model list ({[s.name for s in specs]})")
        specs = [spec for spec in specs if spec.name in set(only)]
    caches = Path(cache_dir) if cache_dir is not None else root / CACHE_DIR
    executable = lm_eval or default_lm_eval()
    with build_lock(root):
        remove_stale_temporaries(root)
        remove_stale_temporaries(root / HISTORY_DIR)
        if (root / LEADERBOARD_FILE).exists():
            load_document(root / LEADERBOARD_FILE)  # fail now, not after hours of runs
        outcomes: list[RunOutcome] = []
        with tqdm(specs, desc=f"night {night}", unit="model", disable=_disable(progress)) as bar:
            for spec in bar:
                bar.set_postfix_str(f"{spec.name}: starting", refresh=True)
                last_update = [0.0]

                def show(line: str, name: str = spec.name, last: list[float] = last_update) -> None:
                    now = time.monotonic()
                    if now - last[0] > 0.5:
                        last[0] = now
                        bar.set_postfix_str(f"{name}: {line.strip()[-60:]}", refresh=True)

                outcome = run_model(spec, night=night, out=root, cache_dir=caches, lm_eval=executable,
                                    bootstrap=bootstrap, embedded_sha=embedded_sha, on_output=show)
                outcomes.append(outcome)
                status = "ok" if outcome.failure is None else f"FAILED: {outcome.failure['error']['message']}"
                log(f"[{night}] {spec.name}: {status} ({outcome.seconds:.0f} s; log {outcome.log_file})")
        rows = [outcome.row for outcome in outcomes if outcome.row is not None]
        failures = [outcome.failure for outcome in outcomes if outcome.failure is not None]
        document = commit(root, night, rows, failures, bootstrap=bootstrap)
    return BuildResult(document, outcomes)


def ingest_into(
    out: str | os.PathLike[str],
    results_paths: Sequence[str | os.PathLike[str]],
    *,
    night: str | None = None,
    name: str | None = None,
    revision: str | None = None,
    precision: str | None = None,
    bootstrap: BootstrapSettings = DEFAULT_BOOTSTRAP,
    progress: bool | None = None,
) -> dict[str, Any]:
    """Add existing lm-eval results files (or folders of them) to the leaderboard in ``out``.

    Raises:
        FileNotFoundError: A path does not exist.
        ValueError: No results file found, or one is unreadable / mismatched (file and field named).
    """
    root = Path(out)
    night = check_night(night or today())
    files: list[Path] = []
    for given in results_paths:
        path = Path(given)
        if path.is_dir():
            found = find_results_files(path)
            if not found:
                raise ValueError(f"{path}: no results_*.json file in this folder")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"{path}: results file or folder not found")
    rows = [
        ingest_results(path, name=name, revision=revision, precision=precision, night=night,
                       bootstrap=bootstrap, progress=bool(progress))
        for path in tqdm(files, desc="ingest", unit="file", disable=_disable(progress))
    ]
    with build_lock(root):
        return commit(root, night, rows, [], bootstrap=bootstrap)
