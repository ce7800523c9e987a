"""Measure: the climbs of an ``improve`` walk from its driver (``run_study``), as ``sys.setprofile`` sees them.

A climb is control passing from a lower layer's code into a higher layer's (``harness_ext`` into
``tasks``: a call, a property, a generator's resumption, a lazy iterable's next item;
``tests/climbs.py`` defines it). The walk is a study and its rerun (every row kept) on the local
executor, on a tiny random model, with the real task loading, training data, identity checks and
report; only the adapter training and the ``lm_eval`` children are replaced by fakes that write what
they would (a manifest, a samples file), so no model runs. Prints each entry point (caller site ->
callee) with its number of events; the study's own entries and those of loading a task (lm-eval
building a task class of the suite, its loader) are printed apart.

    LOGIC_CONSISTENCY_DATA=../shared/data/raw .venv/bin/python scripts/walk_climbs.py --recipe repair
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the tracer and the tiny model are the tests' helpers

from climbs import Climbs, counting_climbs  # noqa: E402
from study_fakes import finished_adapter  # noqa: E402
from tiny_model import tiny_base  # noqa: E402

#: Callees of loading a task through lm-eval (its task classes, loaders and hooks), not the study's.
TASK_LOADING = ("harness_ext/task/", "harness_ext/autoload")


def _lm_eval(run: Any, *, label: str) -> list[Path]:
    """``lm_eval``'s stand-in: one sample per run (pairwise metrics; an unparseable GV generator answer)."""
    run.out.mkdir(parents=True, exist_ok=True)
    (run.out / "done").write_text("done\n", encoding="utf-8")
    sample = {"doc_id": 0, "human_agreement": 1.0, "s_comm": 0.5,
              "doc": {"question": "What is 1 + 1?", "stages": {"generator": {}}}}  # fmt: skip
    path = run.out / f"samples_{run.tasks.split(',')[0]}_x.jsonl"
    path.write_text(json.dumps(sample) + "\n", encoding="utf-8")
    return [path]


def _walk(recipe: str, folder: Path, limit: int) -> tuple[Climbs, list[str]]:
    from logic_consistency.harness_ext.training.driver import run_study
    from logic_consistency.harness_ext.training.study_executor import run_locally
    from logic_consistency.tasks.gv import improve as gv_improve
    from logic_consistency.tasks.pairwise import improve as repair_improve

    module: Any = repair_improve if recipe == "repair" else gv_improve
    module.train_adapter, module.run_lm_eval = finished_adapter, _lm_eval
    base = tiny_base(folder / "base")
    if recipe == "repair":
        metadata = {"max_items": 4, "ks": [3, 4]}
        options: Any = repair_improve.RepairStudyOptions(base=base, out=folder / "s", limit=limit, min_examples=1,
                                                         metadata=metadata)  # fmt: skip
    else:
        options = gv_improve.GVStudyOptions(base=base, out=folder / "s", limit=limit, rounds=2, selftrain_rounds=2)
    with counting_climbs() as climbs:
        rows = run_study(module.RECIPE, options, run_locally)
        again = run_study(module.RECIPE, options, run_locally)
    assert [r["row"] for r in again] == [r["row"] for r in rows]
    return climbs, [r["row"] for r in rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipe", choices=("repair", "gv"), default="repair")
    parser.add_argument("--limit", type=int, default=2, help="documents per split")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        climbs, rows = _walk(args.recipe, Path(folder), args.limit)
    loading = Climbs()
    study = Climbs()
    for (caller, callee), n in climbs.events.items():
        (loading if caller.startswith(TASK_LOADING) else study).events[(caller, callee)] += n
    print(f"improve {args.recipe}, a study and its rerun: rows {rows}")
    print(f"the study's climbs: {study.report()}")
    print(f"loading its tasks (lm-eval building the suite's task classes): {loading.report()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
