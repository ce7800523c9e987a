"""Fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from logic_consistency import credentials
from logic_consistency.leaderboard.board.identity import row_id, settings_id
from logic_consistency.leaderboard.board.merge import make_document

_SHA = "0" * 64


def hand_row(model: str = "tiny", *, score: float = 0.75, tau: float = 0.5) -> dict[str, Any]:
    """A small, valid leaderboard row written by hand (no lm_eval run): one pairwise and one causal task."""
    settings = {
        "suite_version": "0.1.0",
        "lm_eval_version": "0.4.13",
        "limit": 2.0,
        "gen_kwargs": None,
        "seeds": {"random_seed": 0},
        "tasks": {
            task: {
                "config_hash": _SHA,
                "version": 1,
                "num_fewshot": 0,
                "n_original": 4,
                "n_effective": 2,
                "options": {"max_items": 5},
            }
            for task in ("logic_consistency_summeval", "logic_consistency_causal")
        },
    }
    sid = settings_id(settings)

    def metric(value: float) -> dict[str, Any]:
        return {"score": value, "ci95": [value, value], "n": 2, "higher_is_better": True, "lm_eval_stderr": None}

    def entry(metrics: dict[str, Any]) -> dict[str, Any]:
        return {
            "kind": "task",
            "alias": "x",
            "version": 1,
            "subtasks": [],
            "n_instances": 2,
            "n_original": 4,
            "unparseable": 0,
            "metrics": metrics,
            "counts": {"unparseable_judgement": {"total": 0, "n": 2}},
        }

    return {
        "row_id": row_id(model, "unpinned", "n/a", "0" * 16, sid),
        "model": {
            "name": model,
            "backend": "dummy",
            "model_args": "",
            "revision": "unpinned",
            "revision_source": "unpinned",
            "precision": "n/a",
        },
        "prompt_set": {"id": "0" * 16, "tasks": {}},
        "settings_id": sid,
        "settings": settings,
        "night": "2026-01-01",
        "measured_at": "2026-01-01T00:00:00Z",
        "tasks": {
            "logic_consistency_summeval": entry({"s_comm": metric(score), "s_tran_3": metric(score)}),
            "logic_consistency_causal": entry({"tau_all": metric(tau), "cgp": metric(score)}),
        },
        "confusion": {},
        "provenance": {
            "suite_version": "0.1.0",
            "lm_eval_version": "0.4.13",
            "transformers_version": None,
            "git_hash": None,
            "task_config_hashes": {},
            "task_hashes": {},
            "chat_template_applied": False,
            "chat_template_sha": None,
            "system_instruction_sha": None,
            "fewshot_as_multiturn": False,
            "limit": 2.0,
            "items_per_instance": 5,
            "seed": 0,
            "run_options": {},
            "date": "2026-01-01T00:00:00Z",
            "run_time_seconds": 1.0,
            "results_file": "results.json",
            "batch_size": 1,
            "device": None,
        },
    }


@pytest.fixture
def hand_board() -> dict[str, Any]:
    """A valid leaderboard document with one hand-written row (see :func:`hand_row`)."""
    return make_document("leaderboard", [hand_row()], [], night="2026-01-01")


@pytest.fixture(autouse=True)
def _credentials_registered_by_one_test_stay_in_it() -> Iterator[None]:
    """A backend or model list registers the credentials it sends for the rest of its process
    (``credentials.register_secret``); one test's key must not redact another test's output."""
    saved = dict(credentials._REGISTERED)
    yield
    credentials._REGISTERED.clear()
    credentials._REGISTERED.update(saved)
