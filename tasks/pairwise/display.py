"""How the leaderboard shows the pairwise family's metrics (see :mod:`logic_consistency.tasks.reports`)."""

from __future__ import annotations

from logic_consistency.tasks.reports import MetricDisplay, register_metrics

register_metrics(
    MetricDisplay(r"s_tran_(\d+)", label="s_tran({value})", description="transitivity over random {value}-item subsets",
                  radar=True, order=10, series="K", series_title="s_tran(K)",
                  series_axis="K (items per sampled subset)"),
    MetricDisplay("s_comm", label="s_comm", description="commutativity: same preference in both presentation orders",
                  radar=True, order=20),
    MetricDisplay("s_neg", label="s_neg", description="negation invariance: the negated question gets the opposite answer",
                  radar=True, order=30),
    MetricDisplay("human_agreement", label="H", description="agreement with human preferences (accuracy, not self-consistency)",
                  order=40),
    MetricDisplay("position_bias", label="pos bias",
                  description="position bias: share of judgements won by the first-shown option (0.5 unbiased, 1.0 always A)",
                  higher_is_better=False, order=41),
    MetricDisplay("p_first_mean", label="P(first)", description="mean probability given to the first-shown option (0.5 unbiased)",
                  higher_is_better=False, order=42),
    MetricDisplay("rank_spearman_win_loss", label="ρ win-loss", range=(-1, 1), order=43,
                  description="Spearman correlation with human scores of the win-loss ranking of the full pairwise matrix"),
    MetricDisplay("rank_spearman_bt", label="ρ B-T", range=(-1, 1), order=44,
                  description="Spearman correlation with human scores of the Bradley-Terry ranking of the full pairwise matrix"),
    MetricDisplay("pairs_spearman", label="ρ PairS", range=(-1, 1), order=45,
                  description="Spearman correlation with human scores of PairS merge-sort rankings (mean over runs)"),
    MetricDisplay("pairs_spearman_calibrated", label="ρ PairS cal", range=(-1, 1), order=46,
                  description="as ρ PairS, each comparison judged from both presentation orders"),
    MetricDisplay("pairs_comparisons_ratio", label="PairS cost", higher_is_better=False, order=47,
                  description="PairS comparisons per run divided by n(n-1), the full matrix"),
    MetricDisplay("self_agreement", label="self-agree", order=48,
                  description="self-agreement: mean share of the majority choice over k sampled chain-of-thought judgements"),
    MetricDisplay("unparseable", label="unparseable", description="generated judgements that could not be parsed",
                  higher_is_better=False, count=True, order=200),
    MetricDisplay("unparseable_prompts", label="unparseable prompts", higher_is_better=False, count=True, order=201,
                  description="prompts whose sampled judgements could not be parsed"),
    MetricDisplay("n_majority_ties", label="majority ties", higher_is_better=False, count=True, order=202,
                  description="self-agreement judgements whose samples tie (no majority; left missing)"),
)
