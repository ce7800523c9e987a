"""Reference PairS rankings from the authors' own code, for tests/metrics/test_pairs.py.

Runs ``PairsGreedy`` and ``PairsBeam`` of github.com/cambridgeltl/PairS (``pairs/pairs_ranking.py``)
on the fixed probability tables of ``tests/metrics/test_pairs.py`` (``reference_cases``) with a
comparator that answers from the table, and prints the orders (worst first, item indices) and the
authors' comparison counts (``params['api_call']``) as the Python literal the test file holds.
The authors' code is not part of this repository: pass the folder of a checkout of it. Only its
``pairs/utils.py`` and ``pairs/pairs_ranking.py`` are loaded; the package's ``__init__`` (which
imports torch, transformers and openai for its model back ends) is replaced by a stub.

Usage:
    git clone https://github.com/cambridgeltl/PairS /tmp/PairS && git -C /tmp/PairS checkout 55ad950
    .venv/bin/python scripts/pairs_reference.py /tmp/PairS
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import pprint
import sys
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def load_module(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_authors_code(checkout: Path) -> types.ModuleType:
    """The authors' ``pairs.pairs_ranking`` module, with a stub ``pairs`` package around it."""
    package = types.ModuleType("pairs")
    package.__path__ = [str(checkout / "pairs")]
    sys.modules["pairs"] = package
    utils = load_module("pairs.utils", checkout / "pairs" / "utils.py")
    package.CompareResultObject = utils.CompareResultObject  # type: ignore[attr-defined]
    package.get_general_prompt_template = lambda with_input=False: "{{ output_1 }} {{ output_2 }}"  # type: ignore[attr-defined]
    package.LocalModel = package.OpenAIChatModel = object  # type: ignore[attr-defined]
    return load_module("pairs.pairs_ranking", checkout / "pairs" / "pairs_ranking.py")


class TableModel:
    """The authors' model interface (``compare``), answering P(A) from a probability table."""

    def __init__(self, table: Any, result_class: type) -> None:
        self.table, self.result_class = table, result_class

    def compare(self, prompts: list[str]) -> list[Any]:
        out = []
        for prompt in prompts:
            a, b = map(int, prompt.split())
            p = float(self.table[a, b])
            out.append(self.result_class(raw_prob_A=p, raw_prob_B=1 - p, raw_prob_C=0))
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="folder of a checkout of cambridgeltl/PairS")
    args = parser.parse_args()
    ranking = load_authors_code(args.checkout)
    tests = load_module("reference_tables", ROOT / "tests" / "metrics" / "test_pairs.py")
    expected: dict[tuple[Any, ...], tuple[list[int], int]] = {}
    for key, table, initial_order in tests.reference_cases():
        _, _, calibrated, method, beam_size, prob_gap = key
        params = {
            "model": TableModel(table, ranking.CompareResultObject),
            "calibrate": calibrated,
            "api_call": 0,
            "with_input": False,
            "beam_size": beam_size,
            "prob_gap": prob_gap,
        }
        # the authors sort the list they are given: item k of it is initial_order[k]
        output = [str(item) for item in initial_order]
        sort = ranking.PairsGreedy if method == "greedy" else ranking.PairsBeam
        with contextlib.redirect_stderr(io.StringIO()):  # their tqdm bar
            positions = sort("", output, params)
        expected[key] = ([int(initial_order[k]) for k in positions], params["api_call"])
    print("EXPECTED = " + pprint.pformat(expected, width=120, compact=True))


if __name__ == "__main__":
    main()
