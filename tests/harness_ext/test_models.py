"""The ``lc-embedded`` model's argument handling (no model is loaded here)."""

from __future__ import annotations

from typing import Any

import pytest

from logic_consistency.harness_ext import models


class _Captured(models.EmbeddedHFLM):
    """Records the constructor's keyword arguments instead of loading a model."""

    def __init__(self, **kwargs: Any) -> None:  # noqa: D107 - test double
        self.kwargs = kwargs


def test_model_args_win_over_command_line_flags() -> None:
    built = _Captured.create_from_arg_string(
        "model=gemma-3-270m,batch_size=8", {"batch_size": 1, "max_batch_size": None, "device": "cpu"}
    )
    assert built.kwargs == {"model": "gemma-3-270m", "batch_size": 8, "device": "cpu"}


def test_command_line_flags_fill_what_model_args_leave_out() -> None:
    built = _Captured.create_from_arg_obj({"model": "smollm2-135m-instruct"}, {"batch_size": 4, "device": None})
    assert built.kwargs == {"model": "smollm2-135m-instruct", "batch_size": 4}


def test_unknown_model_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="not an embedded model"):
        models.resolve("gpt-5")
