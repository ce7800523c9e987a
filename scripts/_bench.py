"""What the benchmark scripts that capture a run's requests share before they start."""

from __future__ import annotations

import logging
import os


def offline_and_quiet() -> None:
    """Read the hub offline when a local data folder is set, and keep only lm-eval's and the suite's errors.

    Capturing requests runs the tasks on placeholder answers: their per-task warnings are noise here.
    """
    if os.environ.get("LOGIC_CONSISTENCY_DATA"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    for name in ("lm_eval", "logic_consistency"):
        logging.getLogger(name).setLevel(logging.ERROR)
