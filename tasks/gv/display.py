"""How the leaderboard shows the generator-validator family's metrics (see :mod:`logic_consistency.tasks.reports`)."""

from __future__ import annotations

from logic_consistency.tasks.reports import MetricDisplay, register_metrics

register_metrics(
    MetricDisplay(
        "gv_consistency",
        label="GV",
        radar=True,
        order=50,
        description="generator-validator consistency: the validator accepts the generator's own answer",
    ),
    MetricDisplay(
        "gv_consistency_strict",
        label="GV strict",
        order=51,
        description="generator-validator consistency over every document, an unparseable answer counting as inconsistent",
    ),
    MetricDisplay(
        "gv_left_out",
        label="GV left out",
        higher_is_better=False,
        order=52,
        description="share of documents left out of GV consistency (a generator or validator answer could not be parsed)",
    ),
    MetricDisplay(
        "generator_accuracy", label="gen acc", order=60, description="generator accuracy (where ground truth exists)"
    ),
    MetricDisplay(
        "validator_accuracy", label="val acc", order=61, description="validator accuracy (where ground truth exists)"
    ),
    MetricDisplay(
        "unparseable_generator",
        label="unparseable gen",
        higher_is_better=False,
        count=True,
        order=210,
        description="generator answers that could not be parsed",
    ),
    MetricDisplay(
        "unparseable_validator",
        label="unparseable val",
        higher_is_better=False,
        count=True,
        order=211,
        description="validator answers that could not be parsed",
    ),
)
