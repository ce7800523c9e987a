"""What both ``evaluate`` modules tell ``evaluate`` about themselves (imported by the module scripts only)."""

from __future__ import annotations

from typing import Any

import datasets
import evaluate


def metric_info(description: str | None, citation: str, inputs: str, features: dict[str, Any]) -> evaluate.MetricInfo:
    """The ``MetricInfo`` of a module: its docstring, citation, inputs text and input features."""
    return evaluate.MetricInfo(
        description=description,
        citation=citation,
        inputs_description=inputs,
        features=datasets.Features(features),
    )
