"""How the leaderboard shows the pairwise family's metrics (see :mod:`logic_consistency.tasks.reports`)."""

from __future__ import annotations

from logic_consistency.tasks.reports import (
    CORRELATION,
    COUNT,
    LOWER_RATE,
    RADAR_RATE,
    RATE,
    MetricDisplay,
    metric_table,
    register_metrics,
)

register_metrics(
    MetricDisplay(
        r"s_tran_(\d+)",
        label="s_tran({value})",
        description="transitivity over random {value}-item subsets",
        radar=True,
        order=10,
        series="K",
        series_title="s_tran(K)",
        series_axis="K (items per sampled subset)",
    ),
)

# fmt: off
register_metrics(*metric_table(
    # name, label, order, kind, description
    ("s_comm", "s_comm", 20, RADAR_RATE, "commutativity: same preference in both presentation orders"),
    ("s_neg", "s_neg", 30, RADAR_RATE, "negation invariance: the negated question gets the opposite answer"),
    ("human_agreement", "H", 40, RATE, "agreement with human preferences (accuracy, not self-consistency)"),
    ("position_bias", "pos bias", 41, LOWER_RATE, "position bias: share of judgements won by the first-shown option (0.5 unbiased, 1.0 always A)"),
    ("p_first_mean", "P(first)", 42, LOWER_RATE, "mean probability given to the first-shown option (0.5 unbiased)"),
    ("rank_spearman_win_loss", "ρ win-loss", 43, CORRELATION, "Spearman correlation with human scores of the win-loss ranking of the full pairwise matrix"),
    ("rank_spearman_bt", "ρ B-T", 44, CORRELATION, "Spearman correlation with human scores of the Bradley-Terry ranking of the full pairwise matrix"),
    ("pairs_spearman", "ρ PairS", 45, CORRELATION, "Spearman correlation with human scores of PairS merge-sort rankings (mean over runs)"),
    ("pairs_spearman_calibrated", "ρ PairS cal", 46, CORRELATION, "as ρ PairS, each comparison judged from both presentation orders"),
    ("pairs_comparisons_ratio", "PairS cost", 47, LOWER_RATE, "PairS comparisons per run divided by n(n-1), the full matrix"),
    ("pairs_calibrated_comparisons_ratio", "PairS cal cost", 47.1, LOWER_RATE, "calibrated PairS comparisons per run divided by n(n-1), each judged in both orders"),
    ("pairs_model_calls_ratio", "PairS calls", 47.2, LOWER_RATE, "distinct prompts PairS asked for an instance divided by n(n-1)"),
    ("self_agreement", "self-agree", 48, RATE, "self-agreement: mean share of the majority choice over k sampled chain-of-thought judgements"),
    ("unparseable", "unparseable", 200, COUNT, "generated judgements that could not be parsed"),
    ("unparseable_prompts", "unparseable prompts", 201, COUNT, "prompts whose sampled judgements could not be parsed"),
    ("n_single_sample", "single-sample", 203, COUNT, "self-agreement judgements with one parsed sample (left out of the mean)"),
    ("n_majority_ties", "majority ties", 202, COUNT, "self-agreement judgements whose samples tie (no majority; left missing)"),
))
# fmt: on
