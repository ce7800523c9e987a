"""Benchmark: a study's row evaluations scored by ``lc-hf`` (the default) against stock ``hf``, side by side.

Each case runs a study's own ``lm_eval`` runs (``LmEvalRun``, ``run_lm_eval``; only ``--eval-backend``
differs) on the embedded SmolLM2-135M-Instruct, chat template, float32 (the study's CPU dtype):

* ``repair``: the test-split evaluation of one REPAIR row on CaTeRS (``improve repair``'s zero-shot row:
  ``--repair-limit`` stories, ``--max-items`` events each, ``0``: every event, as a study scores them);
* ``gv``: one GV round on arithmetic: its data generation (the round's model answering the train
  documents) and its test-split evaluation (``improve gv``'s round 0, ``logic_consistency_gv_arithmetic``).

Per case hf, then lc-hf, in one process: wall, ``lm_eval`` CPU-s, the metrics' largest difference, the CPU,
the load, the bytecode cache (kept: an untimed child compiles first); closing ``ratio <case>: ...``.

    LOGIC_CONSISTENCY_DATA=../shared/data/raw .venv/bin/python scripts/bench_study.py
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from _bench import (  # this folder's helpers (run as files)
    bytecode_description,
    cpu_description,
    load_average,
    offline_and_quiet,
)

CASES = ("repair", "gv")
BACKENDS = ("hf", "lc-hf")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help="embedded model name")
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--repair-limit", type=int, default=2, help="CaTeRS test stories of the REPAIR row")
    parser.add_argument(
        "--max-items", type=int, default=0, help="events per CaTeRS story (0: all, as a study's row scores them)"
    )
    parser.add_argument("--gv-limit", type=int, default=6, help="arithmetic documents per split of the GV round")
    parser.add_argument("--batch-size", default="4", help="lm_eval --batch_size (the study's)")
    args = parser.parse_args(argv)
    for name in ("repair_limit", "gv_limit"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.max_items < 0:
        parser.error("--max-items must be >= 0 (0: every event)")
    return args


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _runs(case: str, args: argparse.Namespace, base: Path, out: Path, backend: str) -> list[Any]:
    """The study's ``lm_eval`` runs of one case with one backend."""
    from logic_consistency.harness_ext.training.study_eval import LmEvalRun

    common = {"base": base, "apply_chat_template": True, "batch_size": args.batch_size, "backend": backend}
    if case == "repair":
        return [
            LmEvalRun(
                tasks="logic_consistency_caters",
                metadata={"instance_split": "test", **({"max_items": args.max_items} if args.max_items else {})},
                limit=args.repair_limit,
                out=out / "test_eval",
                **common,
            )  # fmt: skip
        ]
    task = "logic_consistency_gv_arithmetic"
    return [
        LmEvalRun(
            tasks=task, metadata={"instance_split": split}, limit=args.gv_limit, out=out / f"{split}_eval", **common
        )
        for split in ("train", "test")
    ]


def _metrics(samples: list[Path]) -> list[dict[str, Any]]:
    """Each document's numeric metrics, in file and line order (to compare the two backends' rows)."""
    from logic_consistency.common import read_samples

    rows = []
    for path in sorted(samples, key=lambda p: p.name.split("_20")[0]):
        for _, sample in read_samples(path):
            rows.append({k: v for k, v in sample.items() if isinstance(v, int | float) and not isinstance(v, bool)})
    return rows


def _agreement(stock: list[dict[str, Any]], shared: list[dict[str, Any]]) -> str:
    """``max |delta| D over N values`` of the two backends' per-document metrics, or why they cannot be compared."""
    if [sorted(row) for row in stock] != [sorted(row) for row in shared]:
        return "DIFFERENT documents or metrics"
    deltas = [
        abs(float(a[key]) - float(b[key]))
        for a, b in zip(stock, shared, strict=True)
        for key in a
        if not (math.isnan(float(a[key])) and math.isnan(float(b[key])))
    ]
    return f"max |delta| {max(deltas, default=0.0):.1e} over {len(deltas)} values"


def _compile_imports() -> None:
    """One untimed child that imports what every ``lm_eval`` run imports, writing their bytecode once."""
    import sys

    from logic_consistency.harness_ext.jobs.processes import run_captured

    modules = "lm_eval.__main__, lm_eval.evaluator, transformers.models.llama.modeling_llama, peft"
    done = run_captured([sys.executable, "-c", f"import {modules}, logic_consistency.harness_ext.prefix.scorer"])
    if done.returncode != 0:
        raise SystemExit(f"compiling the imports failed: {done.stderr[-2000:]}")


def run_case(case: str, args: argparse.Namespace, base: Path, folder: Path) -> str:
    from logic_consistency.harness_ext.training.study_eval import run_lm_eval

    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    rows: dict[str, list[dict[str, Any]]] = {}
    for backend in BACKENDS:
        samples: list[Path] = []
        cpu_before, started = _child_cpu(), time.perf_counter()
        for run in _runs(case, args, base, folder / case / backend, backend):
            samples += run_lm_eval(run, label=f"{case} ({backend})")
        wall[backend], cpu[backend] = time.perf_counter() - started, _child_cpu() - cpu_before
        rows[backend] = _metrics(samples)
        print(
            f"{case}: {backend:6s} {wall[backend]:8.1f} s wall, {cpu[backend]:8.1f} CPU-s; {load_average()}", flush=True
        )
    same = _agreement(rows["hf"], rows["lc-hf"])
    wall_ratio, cpu_ratio = wall["hf"] / wall["lc-hf"], cpu["hf"] / cpu["lc-hf"]
    print(f"{case}: per-document metrics of the two backends: {same} ({len(rows['hf'])} documents)")
    return f"ratio {case}: {wall_ratio:.2f}x wall, {cpu_ratio:.2f}x CPU (hf / lc-hf; metrics {same})"


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    offline_and_quiet()
    from logic_consistency.harness_ext.models.embedded import resolve

    print(f"CPU: {cpu_description()}; {load_average()}; {bytecode_description()}")
    base = resolve(args.model)
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        _compile_imports()
    with tempfile.TemporaryDirectory(prefix="bench_study_") as folder:
        closing = [run_case(case, args, base, Path(folder)) for case in args.cases]
    print(f"CPU: {cpu_description()}; {load_average()}")
    print("\n".join(closing))


if __name__ == "__main__":
    main()
