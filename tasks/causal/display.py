"""How the leaderboard shows the causal family's metrics and reports (see :mod:`logic_consistency.tasks.reports`)."""

from __future__ import annotations

from logic_consistency.tasks.reports import MetricDisplay, register_metrics

from . import report  # noqa: F401  (registers the label-by-rank confusion matrix report)

register_metrics(
    MetricDisplay(
        "tau_all",
        label="τ all",
        range=(-1, 1),
        radar=True,
        order=70,
        description="Kendall tau between generated and ranked order, all intermediates",
    ),
    MetricDisplay(
        "tau_defeaters", label="τ def", range=(-1, 1), order=71, description="Kendall tau within the defeaters"
    ),
    MetricDisplay(
        "tau_supporters", label="τ sup", range=(-1, 1), order=72, description="Kendall tau within the supporters"
    ),
    MetricDisplay(
        "cgp", label="CGP", radar=True, order=80, description="cross-group position: defeaters ranked before supporters"
    ),
    MetricDisplay(
        "igc",
        label="IGC",
        range=(-1, 1),
        radar=True,
        order=90,
        description="intra-group clustering (silhouette definition)",
    ),
    MetricDisplay("igc_density", label="IGC dens", order=91, description="intra-group clustering (density variant)"),
    MetricDisplay(
        "unparseable_generation",
        label="unparseable gen",
        higher_is_better=False,
        count=True,
        order=220,
        description="generations whose ten intermediates could not be parsed",
    ),
    MetricDisplay(
        "unparseable_ranking",
        label="unparseable rank",
        higher_is_better=False,
        count=True,
        order=221,
        description="rankings that could not be parsed",
    ),
)
