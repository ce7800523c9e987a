"""Benchmark: the fixed cost of one ``lm_eval`` run as the suite starts it, with lm-eval's whole task index
against the suite's folder alone (``LOGIC_CONSISTENCY_SUITE_TASKS_ONLY=1``, what a study's runs declare).

Every step is a fresh child process, as a study row, a board unit or a test starts ``lm_eval``; the steps
of one repeat run one after another, the repeats interleave the two settings, and each figure is the
median over ``--repeats`` of the child's CPU-seconds (``RUSAGE_CHILDREN``: fair under load) and wall:

``python`` (the interpreter, the ``.pth`` hook); ``imports`` (lm-eval's command line, evaluator, task manager,
the ``lc-hf`` class); ``index`` (one ``TaskManager()``: lm-eval's ~13,000 built-in files and the suite's
folder; the suite's alone; with ``--test-cache`` the built-ins read from the tests' JSON copy,
``tests/site/sitecustomize.py``); ``model`` (the ``lc-hf`` load of the embedded SmolLM2, float32);
``run`` (a whole ``lm_eval --model lc-hf`` run of one CaTeRS story, both settings: results and samples compared).

    LOGIC_CONSISTENCY_DATA=../shared/data/raw .venv/bin/python scripts/bench_lm_eval_start.py
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _bench import cpu_description, load_average, offline_and_quiet  # this folder's helpers (run as files)

ROOT = Path(__file__).resolve().parents[1]
SUITE_ONLY = "LOGIC_CONSISTENCY_SUITE_TASKS_ONLY"
TEST_INDEX = "LC_TEST_LM_EVAL_INDEX"  # tests/site/sitecustomize.py
IMPORTS = (
    "import lm_eval.__main__, lm_eval.evaluator, lm_eval.tasks\nimport logic_consistency.harness_ext.prefix.scorer\n"
)
INDEX = IMPORTS + "from lm_eval.tasks import TaskManager\nTaskManager()\n"
MODEL = IMPORTS + (
    "import sys\nfrom lm_eval.api.registry import get_model\n"
    "get_model('lc-hf').create_from_arg_string(sys.argv[1], {'batch_size': 4, 'device': 'cpu'})\n"
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help="embedded model name")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each step (the median is printed)")
    parser.add_argument("--max-items", type=int, default=5, help="events of the CaTeRS story of the whole run")
    parser.add_argument("--test-cache", action="store_true", help="also the built-in index read from the tests' copy")
    parser.add_argument("--no-run", action="store_true", help="leave out the whole lm_eval runs")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.max_items < 5:
        parser.error("--repeats must be >= 1 and --max-items >= 5 (CaTeRS' largest k)")
    return args


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run ``command`` to its end (the suite's one way to start a child); its (CPU-seconds, wall seconds)."""
    from logic_consistency.harness_ext.jobs.processes import run_captured

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, started = usage.ru_utime + usage.ru_stime, time.perf_counter()
    done = run_captured(command, env=env)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"bench_lm_eval_start: {command[:4]}... failed:\n{done.stderr[-3000:]}")
    return usage.ru_utime + usage.ru_stime - before, wall


def steps(args: argparse.Namespace, base: Path, folder: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Each step's command and environment (the same environment but the declared settings)."""
    env = {k: v for k, v in os.environ.items() if k not in (SUITE_ONLY, TEST_INDEX)}
    suite = {**env, SUITE_ONLY: "1"}
    python = [sys.executable, "-c"]
    table = {
        "python": ([*python, "pass"], env),
        "imports": ([*python, IMPORTS], env),
        "index: lm-eval's and the suite's": ([*python, INDEX], env),
        "index: the suite's alone": ([*python, INDEX], suite),
    }
    if args.test_cache:
        site = os.pathsep.join(p for p in (str(ROOT / "tests" / "site"), env.get("PYTHONPATH")) if p)
        cached = {**env, TEST_INDEX: str(folder / "index.json"), "PYTHONPATH": site}
        table["index: lm-eval's from the tests' copy"] = ([*python, INDEX], cached)
    table["model: lc-hf load"] = ([*python, MODEL, f"pretrained={base},dtype=float32"], env)
    if not args.no_run:
        for label, environment in (("lm-eval's and the suite's", env), ("the suite's alone", suite)):
            out = folder / ("suite" if environment is suite else "all")
            table[f"run: {label}"] = (run_command(args, base, out), environment)
    return table


def run_command(args: argparse.Namespace, base: Path, out: Path) -> list[str]:
    """A study row's ``lm_eval`` command, one CaTeRS story (``LmEvalRun.command``'s form)."""
    lm_eval = str(Path(sys.executable).with_name("lm_eval"))
    metadata = json.dumps({"instance_split": "test", "max_items": args.max_items})
    return [
        lm_eval, "--model", "lc-hf", "--model_args", f"pretrained={base},dtype=float32",
        "--tasks", "logic_consistency_caters", "--metadata", metadata, "--batch_size", "4", "--limit", "1",
        "--apply_chat_template", "--output_path", str(out), "--log_samples",
    ]  # fmt: skip


def same_outputs(folder: Path) -> str:
    """Whether the two whole runs' results (``scripts/diff_results.py``) and samples files are identical."""
    from diff_results import differences

    def files(side: str, pattern: str) -> list[Path]:
        return sorted((folder / side).rglob(pattern))

    (before,), (after,) = files("all", "results_*.json"), files("suite", "results_*.json")
    load = [{s: json.loads(p.read_text())[s] for s in ("results", "n-samples")} for p in (before, after)]
    compared, different = differences(load[0], load[1])
    samples = [[p.read_bytes() for p in files(side, "samples_*.jsonl")] for side in ("all", "suite")]
    same_samples = samples[0] == samples[1] and bool(samples[0])
    return f"results: {compared} values compared, {len(different)} differ; samples files identical: {same_samples}"


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    offline_and_quiet()
    from logic_consistency.harness_ext.models.embedded import resolve

    base = resolve(args.model)
    print(f"CPU: {cpu_description()}; {load_average()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench_lm_eval_start_") as name:
        folder = Path(name)
        table = steps(args, base, folder)
        if args.test_cache:  # the first process of a test run writes the copy; the others read it
            timed(*table["index: lm-eval's from the tests' copy"])
        figures: dict[str, list[tuple[float, float]]] = {label: [] for label in table}
        for repeat in range(args.repeats):
            for label, (command, env) in table.items():
                if label.startswith("run:"):  # each run writes its own results (compared at the end)
                    shutil.rmtree(folder / ("suite" if env.get(SUITE_ONLY) else "all"), ignore_errors=True)
                figures[label].append(timed(command, env))
                print(f"  {label}: {figures[label][-1][0]:.2f} CPU-s, {figures[label][-1][1]:.2f} s", flush=True)
            print(f"repeat {repeat + 1}/{args.repeats} done; {load_average()}", flush=True)
        report(figures)
        if not args.no_run:
            print(same_outputs(folder))
    print(f"CPU: {cpu_description()}; {load_average()}")


def report(figures: dict[str, list[tuple[float, float]]]) -> None:
    median = {label: (statistics.median(c for c, _ in runs), statistics.median(w for _, w in runs))
              for label, runs in figures.items()}  # fmt: skip
    print(
        f"\n{'step (a fresh process each)':42s} {'CPU-s':>7s} {'wall s':>7s}   (medians of {len(next(iter(figures.values())))})"
    )
    for label, (cpu, wall) in median.items():
        print(f"{label:42s} {cpu:7.2f} {wall:7.2f}")
    imports = median["imports"]
    print("\nmarginal costs (CPU-s, wall s):")
    print(
        f"  imports (above the interpreter)          {imports[0] - median['python'][0]:7.2f} {imports[1] - median['python'][1]:7.2f}"
    )
    for label in [key for key in median if key.startswith(("index:", "model:"))]:
        cpu, wall = median[label]
        print(f"  {label:40s} {cpu - imports[0]:7.2f} {wall - imports[1]:7.2f}")
    runs = [key for key in median if key.startswith("run:")]
    if len(runs) == 2:
        (cpu_all, wall_all), (cpu_suite, wall_suite) = median[runs[0]], median[runs[1]]
        print(f"\none lm_eval run saves {cpu_all - cpu_suite:.2f} CPU-s, {wall_all - wall_suite:.2f} s wall "
              f"with the suite's index alone ({cpu_all / cpu_suite:.2f}x CPU, {wall_all / wall_suite:.2f}x wall)")  # fmt: skip


if __name__ == "__main__":
    main()
