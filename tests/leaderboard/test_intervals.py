"""The stratified group interval (``leaderboard/board/intervals.py``)."""

from __future__ import annotations

import numpy as np

from logic_consistency.leaderboard.board.intervals import BootstrapSettings, group_interval

SETTINGS = BootstrapSettings(n_resamples=2000, seed=3)


def test_a_task_with_one_instance_is_a_fixed_stratum() -> None:
    many = np.array([0.2, 0.4, 0.9, 0.5])
    single = np.array([0.7])
    official = float((many.mean() + single.mean()) / 2)  # lm-eval's unweighted group mean
    low, high = group_interval(official, [(many, 4), (single, 1)], SETTINGS)  # type: ignore[misc]
    assert low < official < high
    # Only the first task varies: the group interval is half as wide as that task's own.
    own_low, own_high = group_interval(float(many.mean()), [(many, 4)], SETTINGS)  # type: ignore[misc]
    assert abs((high - low) - (own_high - own_low) / 2) < 0.02
