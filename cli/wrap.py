"""``logic-consistency wrap BENCHMARK --transforms T[,T...] --out DIR``: wrap an lm-eval benchmark's leaves.

A thin layer over :func:`logic_consistency.tasks.invariance.wrap.wrap_benchmark`: one line per leaf
(options field, answer field, options, questions and exclusions, requests) before any file is written,
then the files. Run the result with ``lm_eval --tasks <group> --include_path DIR``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from logic_consistency.tasks.invariance import wrap

from .subcommand import add_subcommand, run_alone

__all__ = ["add_cli", "main"]


def _run(args: argparse.Namespace) -> int:
    transforms = [name.strip() for name in args.transforms.split(",") if name.strip()]
    result = wrap.wrap_benchmark(
        args.benchmark,
        transforms,
        Path(args.out),
        referring=args.referring_options,
        max_variants=args.max_variants,
        seed=args.seed,
    )
    for path in result.files:
        print(f"wrote {path}")
    print(f"run: lm_eval --tasks {result.group} --include_path {args.out}")
    return 0


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``wrap`` subcommand."""
    parser = add_subcommand(subparsers, "wrap", wrap.__doc__, _run)
    parser.add_argument("benchmark", help="an lm-eval task, group or tag (e.g. mmlu, mmlu_stem, mmlu_anatomy)")
    parser.add_argument("--transforms", default="cyclic", help="comma-separated: cyclic, permutations, swap_gold, "
                        "reverse, random, ids (default: cyclic)")  # fmt: skip
    parser.add_argument("--out", required=True, help="folder for the task YAML (pass it as lm_eval --include_path)")
    parser.add_argument("--referring-options", default="exclude", help="exclude (default) or pin")
    parser.add_argument("--max-variants", type=int, default=24, help="variants per question of random (default 24)")
    parser.add_argument("--seed", type=int, default=1234, help="seed of random (default 1234)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the subcommand on its own (usage lines name it ``wrap``)."""
    return run_alone(add_cli, "wrap", argv)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
