"""The MMLU-subset board of the invariance family (issue 55): every MMLU subject wrapped under ``cyclic``.

``tasks DIR``: one wrapped task per subject of the local MMLU copy (``invariance_board_mmlu_<subject>``).
``run``: writes them and runs ``lm_eval`` (zero-shot, ``--limit`` questions per subject, ``--log_samples``).
``extract OUT_DIR``: the run's per-question records (picks, gold, option orders) and lm-eval's per-subject
results into the kept JSON ``tests/fixtures/invariance_board/<model>.json``. ``render [--write]``: the tables
of ``docs/invariance.md`` from the kept JSON files (``tests/tasks/invariance/test_board_page.py`` holds the
page equal to it). Per-question metrics: mean ± lm-eval's ``mean_stderr`` over every question; corpus
statistics: ``metrics/invariance_bias.py``'s 95% bootstrap interval over questions (seeded).

    LOGIC_CONSISTENCY_DATA=../shared/data/raw .venv/bin/python scripts/invariance_board.py run --limit 2 \
        --model smollm2-135m-instruct --out runs/invariance-board
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

PREFIX = "invariance_board_mmlu_"

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "invariance_board"
PAGE = ROOT / "docs" / "invariance.md"
BEGIN, END = (
    "<!-- invariance-board: begin (scripts/invariance_board.py render --write) -->",
    "<!-- invariance-board: end -->",
)
#: Per-question metrics of the table: name -> function of (picks, gold) (``metrics/invariance.py``).
PER_QUESTION = ("acc_original", "acc_mean", "acc_circular", "content_consistency", "pairwise_agreement")
#: Bootstrap resamples and seed of the corpus statistics' intervals.
RESAMPLES, SEED = 2000, 0


def _samples(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Per wrapped task, its documents' records (``picks``, ``gold``, ``perms``) in document order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(folder.rglob(f"samples_{PREFIX}*.jsonl")):
        task = path.name[len("samples_") :].rsplit("_", 1)[0]
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
        out[task] = [
            {"doc_id": row["doc_id"], **{key: row["rstd"][key] for key in ("picks", "gold", "perms")}}
            for row in sorted(rows, key=lambda row: row["doc_id"])
        ]
    return out


def extract(folder: Path, *, model: str, cpu: str, wall: str) -> Path:
    """The kept results JSON of the run in ``folder``: its per-question records and lm-eval's own results."""
    from logic_consistency.outputs import atomic_write

    (results_path,) = sorted(folder.rglob("results_*.json"))[-1:]
    results = json.loads(results_path.read_text(encoding="utf-8"))
    tasks = _samples(folder)
    kept = {
        "model": model,
        "backend": "lc-embedded",
        "cpu": cpu,
        "wall": wall,
        "date": results.get("date"),
        "lm_eval_version": results.get("lm_eval_version"),
        "limit": results["config"].get("limit"),
        "num_fewshot": sorted({str(results["n-shot"].get(task)) for task in tasks}),
        "transform": "cyclic",
        "subjects": {
            task[len(PREFIX) :]: {
                "lm_eval": {
                    name: results["results"][task].get(f"{name},none")
                    for name in (*PER_QUESTION, "rstd_balanced", "pick_rate_kl")
                },
                "excluded_questions": results["configs"][task]["metadata"]
                .get("task_config", {})
                .get("excluded_questions", {}),
                "questions": records,
            }
            for task, records in sorted(tasks.items())
        },
    }
    path = FIXTURES / f"{model}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, [(json.dumps(kept, separators=(",", ":")) + "\n").encode("utf-8")])
    return path


def arrays(kept: dict[str, Any]) -> dict[str, Any]:
    """Every question of a kept run, stacked: picks, gold, perms (``metrics/invariance.py``'s layout)."""
    import numpy as np

    questions = [q for subject in kept["subjects"].values() for q in subject["questions"]]
    return {
        "picks": np.asarray([q["picks"] for q in questions]),
        "gold": np.asarray([q["gold"] for q in questions]),
        "perms": np.asarray([q["perms"] for q in questions]),
    }


def per_question(picks: Any, gold: Any) -> dict[str, Any]:
    """Each table metric's per-question values (``metrics/invariance.py``)."""
    from logic_consistency.metrics import invariance as inv

    return {
        "acc_original": inv.original_accuracy(picks, gold),
        "acc_mean": inv.mean_accuracy(picks, gold),
        "acc_circular": inv.circular_accuracy(picks, gold),
        "content_consistency": inv.content_consistency(picks),
        "pairwise_agreement": inv.pairwise_agreement(picks),
    }


def _mean_cell(values: Any) -> str:
    from lm_eval.api.metrics import mean_stderr

    kept = [float(v) for v in values if v == v]  # NaN (undefined for a question) left out, as lm-eval does
    return f"{sum(kept) / len(kept):.3f} ± {mean_stderr(kept):.3f}"


def _estimate_cell(estimate: Any, digits: int) -> str:
    return f"{estimate.value:.{digits}f} [{estimate.low:.{digits}f}, {estimate.high:.{digits}f}]"


def _rows(kept: dict[str, Any]) -> tuple[str, str]:
    from logic_consistency.metrics import invariance_bias as bias

    a = arrays(kept)
    ci = {"n_resamples": RESAMPLES, "seed": SEED}
    values = per_question(a["picks"], a["gold"])
    first = " | ".join(_mean_cell(values[name]) for name in PER_QUESTION)
    rstd = bias.rstd(a["picks"], a["gold"], a["perms"], balanced=True, **ci)
    rates = bias.pick_rates(a["picks"], a["perms"], **ci)
    kl = bias.pick_rate_kl(a["picks"], a["perms"], **ci)
    second = " | ".join([_estimate_cell(rstd, 1), *(_estimate_cell(rate, 3) for rate in rates), _estimate_cell(kl, 3)])
    name = f"{kept['model']} ({len(a['gold'])})"
    return f"| {name} | {first} |", f"| {name} | {second} |"


def render() -> str:
    """The board's tables and their provenance, from every kept results JSON (one row per model)."""
    runs = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(FIXTURES.glob("*.json"))]
    rows = [_rows(kept) for kept in runs]
    lines = [BEGIN, "", "| model (questions) | " + " | ".join(f"`{name}`" for name in PER_QUESTION) + " |"]
    lines += ["|---" * (len(PER_QUESTION) + 1) + "|", *(first for first, _ in rows), ""]
    lines += ["| model (questions) | `rstd_balanced` | pick A | pick B | pick C | pick D | `pick_rate_kl` |"]
    lines += ["|---" * 7 + "|", *(second for _, second in rows), ""]
    for kept in runs:
        excluded = sum(sum(s["excluded_questions"].values()) for s in kept["subjects"].values())
        lines.append(
            f"- {kept['model']}: {len(kept['subjects'])} subjects, the first {kept['limit']:.0f} posed questions of "
            f"each (test split; {excluded} questions of the whole split have an option referring to others and "
            "are excluded), zero-shot, "
            f"`{kept['transform']}`, `{kept['backend']}`, lm-eval {kept['lm_eval_version']}; {kept['wall']} wall "
            f"on {kept['cpu']}."
        )
    return "\n".join([*lines, "", END]) + "\n"


def write_page() -> None:
    """Replaces the page's block between the markers with :func:`render`'s."""
    from logic_consistency.outputs import atomic_write

    text = PAGE.read_text(encoding="utf-8")
    start, stop = text.index(BEGIN), text.index(END) + len(END) + 1
    atomic_write(PAGE, [(text[:start] + render() + text[stop:]).encode("utf-8")])


def subjects(data: Path) -> list[str]:
    """The MMLU subjects of the local copy's test split, sorted."""
    seen: set[str] = set()
    with (data / "mmlu" / "mmlu_test.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            seen.add(json.loads(line)["subject"])
    return sorted(seen)


def write_tasks(folder: Path, data: Path) -> list[str]:
    """One wrapped task YAML per subject in ``folder``; the task names."""
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for subject in subjects(data):
        name = PREFIX + subject
        text = (
            f"task: {name}\nclass: !function logic_consistency.tasks.invariance.task.InvarianceTask\n"
            f"base_task: mmlu_{subject}\nmetadata:\n  transform: cyclic\n  version: 1.0\n"
        )
        (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
        names.append(name)
    return names


def run(args: argparse.Namespace, data: Path) -> int:
    """Writes the tasks and runs them with lm_eval; its exit status."""
    out = Path(args.out)
    names = write_tasks(out / "tasks", data)
    command = [
        sys.executable, "-m", "lm_eval", "--model", "lc-embedded",
        "--model_args", f"model={args.model}", "--batch_size", str(args.batch_size),
        "--tasks", ",".join(names), "--include_path", str(out / "tasks"), "--limit", str(args.limit),
        "--log_samples", "--output_path", str(out / "results"), "--seed", "1234",
    ]  # fmt: skip
    print("+", shlex.join(command), flush=True)
    started = time.perf_counter()
    from logic_consistency.harness_ext.jobs.processes import start_child, stop_group

    child = start_child(command, stdout=None, stderr=None)  # the suite's one starter: it dies with this script
    try:
        status = child.wait()
    finally:
        stop_group(child)
    print(f"lm_eval exited {status} after {time.perf_counter() - started:.0f} s wall", flush=True)
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    tasks = sub.add_parser("tasks", help="write the wrapped tasks")
    tasks.add_argument("folder")
    runner = sub.add_parser("run", help="write the tasks and run them with lm_eval")
    runner.add_argument("--model", default="smollm2-135m-instruct", help="embedded model name")
    runner.add_argument("--limit", type=int, default=4, help="questions per subject")
    runner.add_argument("--batch-size", type=int, default=8)
    runner.add_argument("--out", required=True, help="folder of the tasks, results and samples")
    extractor = sub.add_parser("extract", help="the run's per-question records into the kept results JSON")
    extractor.add_argument("results", help="the run's output folder (lm_eval --output_path)")
    extractor.add_argument("--model", required=True, help="the embedded model's name")
    extractor.add_argument("--cpu", required=True, help="the CPU the run used (lscpu's model name)")
    extractor.add_argument("--wall", required=True, help="the run's wall time, as printed by run")
    renderer = sub.add_parser("render", help="print the board's tables from the kept results JSON")
    renderer.add_argument("--write", action="store_true", help="put them in docs/invariance.md")
    args = parser.parse_args(argv)
    data = Path(os.environ.get("LOGIC_CONSISTENCY_DATA", "../shared/data/raw"))
    if args.command == "tasks":
        print("\n".join(write_tasks(Path(args.folder), data)))
        return 0
    if args.command == "run":
        return run(args, data)
    if args.command == "extract":
        print(f"wrote {extract(Path(args.results), model=args.model, cpu=args.cpu, wall=args.wall)}")
    elif args.write:
        write_page()
    else:
        print(render(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
