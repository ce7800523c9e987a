"""``logic-consistency``: the console entry point (the top of the layers; it may import every one).

Commands:

* ``logic-consistency tasks-dir``: print the folder to pass as ``lm_eval --include_path`` (needed
  only when the autoload hook is off, ``LOGIC_CONSISTENCY_AUTOLOAD=0``);
* ``logic-consistency models``: list the embedded default models;
* ``logic-consistency model-path NAME``: convert an embedded model on first use and print the folder
  to pass as ``--model hf --model_args pretrained=...`` (or to vLLM);
* ``logic-consistency export-gv SAMPLES... --out DIR``: generator/validator pairs for consistency
  fine-tuning from GV ``--log_samples`` files (``tasks/gv/export.py``);
* ``logic-consistency causal-confusion SAMPLES... --out DIR``: the causal paper's Figure 4
  confusion matrix (JSON + PNG) from δ-CAUSAL ``--log_samples`` files (``tasks/causal/report.py``);
* ``logic-consistency repair INPUT --out DIR``: REPAIR-ed (consistent, augmented) fine-tuning data
  from pairwise preferences (``tasks/pairwise/repair.py``);
* ``logic-consistency correlate RESULTS... [--out DIR]``: per-model correlations of the consistency
  metrics with H across paraphrased prompts (Figure 5), with self-agreement (Figure 4), and their
  spread over the prompts (``tasks/pairwise/report.py``);
* ``logic-consistency plan --tasks ...``: requests, prompt tokens and API calls (and dollars) of a
  run, counted without loading a model (``harness_ext/plan_report.py``);
* ``logic-consistency check-task FILE.yaml``: load a task YAML as lm-eval does and print lm-eval's
  real error with file, key and line (``harness_ext/check_task.py``);
* ``logic-consistency leaderboard build|render|validate``: the leaderboard (``leaderboard/``).

No command writes over one of its own inputs, over an existing file of another kind (an HTML
page over JSON, say) or over a device, pipe or socket: every output is checked first by
``outputs.check_outputs``, which also finds out whether it can be written at all. Exit status: 0, 2
for bad arguments or input, 3 when an output cannot be written (read-only, permissions, immutable,
disk full; one line naming the path), and ``leaderboard build`` 1 when a model failed.

Subcommands owned by other modules register themselves through an ``add_cli(subparsers)`` function,
imported only when the parser is built.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: Exit status when an output cannot be written (read-only, permissions, immutable, disk full); bad
#: arguments or input are 2, and ``leaderboard build`` uses 1 for "a model failed".
OUTPUT_ERROR_STATUS = 3

#: Modules whose ``add_cli(subparsers)`` registers further subcommands.
SUBCOMMAND_MODULES = (
    "logic_consistency.tasks.gv.export",
    "logic_consistency.tasks.causal.report",
    "logic_consistency.tasks.pairwise.repair",
    "logic_consistency.tasks.pairwise.report",
    "logic_consistency.leaderboard.cli",
    "logic_consistency.harness_ext.plan_report",
    "logic_consistency.harness_ext.check_task",
)


def _tasks_dir(_: argparse.Namespace) -> int:
    from logic_consistency.harness_ext.autoload import tasks_dir

    print(tasks_dir())
    return 0


def _models(_: argparse.Namespace) -> int:
    from logic_consistency.harness_ext.models import DEFAULT_MODEL, EMBEDDED_MODELS

    for name, model in EMBEDDED_MODELS.items():
        marker = " (default)" if name == DEFAULT_MODEL else ""
        print(f"{name}{marker}: {model.description}; package {model.distribution}")
    return 0


def _model_path(args: argparse.Namespace) -> int:
    from logic_consistency.harness_ext.models import resolve

    print(resolve(args.name))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser (exposed for tests and documentation)."""
    parser = argparse.ArgumentParser(prog="logic-consistency", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("tasks-dir", help="print the suite's task folder").set_defaults(run=_tasks_dir)
    commands.add_parser("models", help="list the embedded models").set_defaults(run=_models)
    model_path = commands.add_parser("model-path", help="print (and build) an embedded model's folder")
    model_path.add_argument("name", help="embedded model name, e.g. smollm2-135m-instruct")
    model_path.set_defaults(run=_model_path)
    for module in SUBCOMMAND_MODULES:
        importlib.import_module(module).add_cli(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``logic-consistency`` console script."""
    from logic_consistency.outputs import OutputError

    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except OutputError as error:  # an output the file system refuses: status 3, one line naming it
        print(f"logic-consistency: error: {error}", file=sys.stderr)
        return OUTPUT_ERROR_STATUS
    except (ValueError, ModuleNotFoundError, FileNotFoundError, PermissionError, IsADirectoryError) as error:
        print(f"logic-consistency: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
