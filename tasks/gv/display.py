"""How the leaderboard shows the generator-validator family's metrics (see :mod:`logic_consistency.tasks.reports`)."""

from __future__ import annotations

from logic_consistency.tasks.reports import COUNT, LOWER_RATE, RADAR_RATE, RATE, metric_table, register_metrics

# fmt: off
register_metrics(*metric_table(
    # name, label, order, kind, description
    ("gv_consistency", "GV", 50, RADAR_RATE, "generator-validator consistency: the validator accepts the generator's own answer"),
    ("gv_consistency_strict", "GV strict", 51, RATE, "generator-validator consistency over every document, an unparseable answer counting as inconsistent"),
    ("gv_left_out", "GV left out", 52, LOWER_RATE, "share of documents left out of GV consistency (a generator or validator answer could not be parsed)"),
    ("generator_accuracy", "gen acc", 60, RATE, "generator accuracy (where ground truth exists)"),
    ("validator_accuracy", "val acc", 61, RATE, "validator accuracy (where ground truth exists)"),
    ("unparseable_generator", "unparseable gen", 210, COUNT, "generator answers that could not be parsed"),
    ("unparseable_validator", "unparseable val", 211, COUNT, "validator answers that could not be parsed"),
))
# fmt: on
