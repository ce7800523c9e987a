"""The PairS merge of the pairwise tasks: its options, and PairS replayed on a full matrix.

Options (``metadata``, read by every pairwise task for the replay and by the ``*_pairs`` tasks):

* ``pairs_method``: ``greedy`` (default: the authors' default and the paper's) or ``beam`` (the
  authors' ``PairsBeam``, :mod:`logic_consistency.metrics.pairs`);
* ``pairs_beam_size``: paths kept per beam step, an integer >= 1 (default 1; the authors'
  scripts use 100 to 5000);
* ``pairs_prob_gap``: the beam's uncertainty tolerance, a number in [0, 0.5] (default 0.1, the
  authors' example): a decision against a judgement further than this from 0.5 is pruned.

The two beam options are refused with ``pairs_method: greedy``, where they would be ignored.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from logic_consistency.metrics.pairs import judge_from_prefs, pairs_rank
from logic_consistency.metrics.pairs_sort import PairsSearch
from logic_consistency.options import OptionError, read_option

#: The ``metadata`` keys read here.
PAIRS_SEARCH_KEYS = ("pairs_method", "pairs_beam_size", "pairs_prob_gap")
#: PairS (merge sort with the judge as comparator) replayed on a pairwise task's matrix: exact for
#: a deterministic judge (log-likelihoods or greedy decoding), since every comparison PairS asks is
#: one of the matrix's prompts. Mean over ``pairs_runs`` seeded random initial orders.
PAIRS_METRICS = ["pairs_spearman", "pairs_spearman_calibrated", "pairs_comparisons_ratio"]


def read_pairs_search(metadata: dict[str, Any], *, where: str) -> PairsSearch:
    """Read and check ``pairs_method``, ``pairs_beam_size`` and ``pairs_prob_gap`` (declared in ``_options_yaml``;
    ``tests/tasks/test_task_options.py`` checks the declarations against :class:`PairsSearch`); errors name
    ``where`` and the key."""
    method = read_option(metadata, "pairs_method", where=where)
    if method == "greedy" and (beam_keys := [key for key in PAIRS_SEARCH_KEYS[1:] if key in metadata]):
        raise OptionError(
            f"{where}: metadata.{beam_keys[0]} applies to pairs_method 'beam' only, and pairs_method is 'greedy'"
        )
    beam_size, prob_gap = (read_option(metadata, key, where=where) for key in PAIRS_SEARCH_KEYS[1:])
    return PairsSearch(method=method, beam_size=beam_size, prob_gap=prob_gap)


def replay_pairs(prefs: np.ndarray, human: Any, *, runs: int, seed: int, search: PairsSearch) -> dict[str, float]:
    """PairS raw and calibrated on a complete matrix of ``normal`` judgements (no model call).

    ``pairs_comparisons_ratio`` is the mean number of raw PairS comparisons per run divided by
    n (n - 1), the number of ordered pairs the full matrix asks.
    """
    n = prefs.shape[0]
    memo: dict[tuple[int, int], float] = {}
    judge = judge_from_prefs(prefs)
    out: dict[str, float] = {}
    for name, calibrated in (("pairs_spearman", False), ("pairs_spearman_calibrated", True)):
        result = pairs_rank(
            n,
            judge,
            human,
            calibrated=calibrated,
            runs=runs,
            seed=seed,
            memo=memo,
            search=search,
        )
        out[name] = result.spearman
        if not calibrated:
            out["pairs_comparisons_ratio"] = result.comparisons / result.all_pairs
    return out
