"""The lm-eval task class behind every pairwise logical-consistency task (Liu et al.).

A task is YAML only: lm-eval's ``dataset_path`` / ``dataset_kwargs`` with ``fields:`` mapping the
data's columns (or a loader, ``custom_dataset: !function``) giving rows with ``instance_id``,
``context``, ``items`` and ``human_scores``, the prompt variants (``normal``;
``negated``, omitted to skip s_neg; ``prompt_style: cot``) and the run options under ``metadata:``
(validated before any data loads). One document is one instance; the class asks one request per
ordered pair and prompt variant (both presentation orders) and turns the answers back into the
preference matrices that ``metrics.pairwise_consistency`` scores. With ``loglikelihood``,
P(A) = softmax of the option letters' log-likelihoods (equal ones are a tie: won by neither option,
left out like a missing judgement, counted in ``n_ties``); with ``generate_until`` the answer is parsed,
and an unparseable one is counted in ``unparseable``, never guessed. Beyond s_tran/s_comm/s_neg/H,
every task reports position bias and rank aggregation from the same matrix at no extra call; a
metric undefined for an instance is left out of its values, never counted as 0 or 1.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import datasets
import numpy as np
from lm_eval.api.instance import Instance
from lm_eval.api.metrics import mean

from logic_consistency.harness_ext.chat.choice_reading import MISSING_METRIC, count_missing
from logic_consistency.harness_ext.task.base import (
    PromptedTask,
    loader_name,
    loader_parameter_names,
    render_prompt,
    total,
)
from logic_consistency.harness_ext.task.undefined import reported
from logic_consistency.metrics import UndefinedMetricError, count_ties, pairwise_consistency
from logic_consistency.metrics.position_bias import p_first_mean, position_bias
from logic_consistency.metrics.ranking import comparisons_from_prefs, rank_scores, ranking_spearman
from logic_consistency.tasks.answers import first_option_probability, parse_choice
from logic_consistency.tasks.data import cap_row, check_human_scores
from logic_consistency.tasks.data.fields import PAIRWISE, check_field_map, map_fields
from logic_consistency.tasks.pairwise.cost import matrix_notes
from logic_consistency.tasks.pairwise.options import METADATA_KEYS, PROMPT_KEYS, VARIANTS, PairwiseOptions
from logic_consistency.tasks.pairwise.pairs_search import PAIRS_METRICS, replay_pairs

eval_logger = logging.getLogger(__name__)

#: Rank aggregation from the full matrix of ``normal`` judgements (both orders), no extra calls:
#: Spearman rho of win-loss rate and Bradley-Terry scores against the human scores.
RANKING_METRICS = ["rank_spearman_win_loss", "rank_spearman_bt"]
#: The metrics that need ``human_scores`` (left out of the results of data without them).
HUMAN_METRICS = frozenset({"human_agreement", *RANKING_METRICS, *PAIRS_METRICS})
#: Judgements whose two option letters got equal log-likelihoods, P(A) = 0.5 exactly: a tie, won by
#: neither option and left out of the metrics like a missing judgement (``metrics/_ties.py``).
#: Summed over instances; reported by the log-likelihood tasks (a parsed generation cannot tie).
TIES_METRIC = "n_ties"


class PairwiseConsistencyTask(PromptedTask):
    """Pairwise-judge consistency task: s_tran(K), s_comm, s_neg and human agreement per instance."""

    #: ``fields``: the data's columns mapped onto the row schema (:mod:`logic_consistency.tasks.data.fields`).
    EXTRA_KEYS = (*PROMPT_KEYS, "fields")
    RECORD_KEY = "prompt_config"

    options: PairwiseOptions

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        config = {"doc_to_text": "{{instance_id}}", **(config or {})}
        super().__init__(config=config, **kwargs)
        self._generate = self.OUTPUT_TYPE == "generate_until"
        if self.OUTPUT_TYPE not in ("loglikelihood", "generate_until"):
            raise ValueError(
                f"task {self.config.task!r}: output_type must be loglikelihood or generate_until, "
                f"got {self.OUTPUT_TYPE!r}"
            )
        self.note_missing_human_scores()
        self.declare_metrics(
            {
                name: (total, False)
                if name == "unparseable"
                # 0.5 is ideal for position bias: neither higher nor lower is better.
                else (mean, None if name in ("position_bias", "p_first_mean") else name != "pairs_comparisons_ratio")
                for name in self.metric_names()
            }
            # n_choices_missing: choice-reading backends (lc-chat) only; n_ties: every log-likelihood backend
            | ({} if self._generate else {MISSING_METRIC: (total, False), TIES_METRIC: (total, False)})
        )

    def validate_options(self, config: dict[str, Any]) -> None:
        """Validate prompts, run options and loader options before any data loads (errors name task and key)."""
        task = str(config.get("task"))
        metadata = config.get("metadata") or {}
        self._loader_options = self.check_loader_options(config, task_options=METADATA_KEYS)
        self.field_map = check_field_map(self.extra_config.get("fields"), PAIRWISE, where=f"task {task!r}")
        self.options = PairwiseOptions.from_config(
            self.extra_config, metadata, task=task, loader_options=self._loader_options
        )
        if self.extra_config.get("template_id") is not None and "paraphrases" in self.extra_config:
            # record the prompts actually used, not all paraphrases
            self.extra_config["prompts"] = self.extra_config.pop("paraphrases")[self.extra_config["template_id"] - 1]

    # ------------------------------------------------------------------ data
    def download(self, dataset_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """Load the dataset with the run's ``max_items`` cap, whatever the loader.

        A ``custom_dataset`` loader is called with its own ``dataset_kwargs``, the ``metadata`` keys
        that name its other parameters (dataset options such as CaTeRS ``order``, settable with
        ``--metadata``), and the run's ``seed`` and ``max_items`` when its signature names them;
        lm-eval would pass every ``metadata`` key, the run options and the prompts included. A loader
        that names ``max_items`` caps its own rows (:func:`logic_consistency.tasks.data.cap_row`,
        which rebuilds a ``context`` that lists the items), so the task's documents are the ones the
        loader gives when called directly. Any other loader, or a hub dataset, is capped here by the
        same function: a seeded subset per instance of every per-item list column (``items``,
        ``item_ids``, ``human_scores`` and any other list as long as ``items``).
        """
        source, capped = self._load_rows(dataset_kwargs, **kwargs)
        self.select_instances()
        for name, split in self.dataset.items():  # bad human scores are refused before any model call
            check_human_scores(split, source=f"{source} split {name!r}")
        # named once the task knows its metrics (after lm-eval's __init__, which loads the data)
        self._without_human_scores = (
            source,
            [n for n, split in self.dataset.items() if "human_scores" not in split.column_names],
        )
        if not capped and self.options.max_items is not None:
            self._cap_items(self.options.max_items)

    def _load_rows(self, dataset_kwargs: dict[str, Any] | None, **kwargs: Any) -> tuple[str, bool]:
        """Load the rows in the pairwise schema (a loader's own, else through ``fields:``); return the data
        source named for messages and whether the loader capped its rows to ``max_items``."""
        loader = self.config.custom_dataset
        capped = False
        if callable(loader):
            own, capped = self._loader_arguments(loader)
            self.dataset = self.call_loader(loader, own)
            source = f"task {self.config.task!r}: loader {loader_name(loader)}"
        else:
            super().download(dataset_kwargs, **kwargs)
            files = (self.config.dataset_kwargs or {}).get("data_files")
            source = f"task {self.config.task!r}: dataset {self.config.dataset_path}" + (f" {files}" if files else "")
        if self.field_map or not callable(loader):  # a loader's rows are in the schema already
            self.dataset = map_fields(self.dataset, self.field_map, PAIRWISE, where=source)
        return source, capped

    def _loader_arguments(self, loader: Callable[..., Any]) -> tuple[dict[str, Any], bool]:
        """A ``custom_dataset`` loader's keyword arguments (see :meth:`download`), and whether it caps its rows."""
        metadata = self.config.metadata or {}
        own = {key: metadata[key] for key in self._loader_options if key in metadata}
        own.update(self.config.dataset_kwargs or {})
        named = loader_parameter_names(loader)
        for key, value in (("seed", self.options.seed), ("max_items", self.options.max_items)):
            if key in named:
                own.setdefault(key, value)
        return own, "max_items" in named

    def _cap_items(self, max_items: int) -> None:
        """Cap every instance's items to a seeded subset of ``max_items`` (:func:`cap_row`)."""
        cap = {"max_items": max_items, "seed": self.options.seed}
        self.dataset = datasets.DatasetDict(
            {name: split.map(cap_row, fn_kwargs=cap) for name, split in self.dataset.items()}
        )

    def human_metrics(self) -> list[str]:
        """The metrics of :meth:`metric_names` that compare the model with ``human_scores``."""
        return [name for name in self.metric_names() if name in HUMAN_METRICS]

    def note_missing_human_scores(self) -> None:
        """Data without a ``human_scores`` field: one line naming the metrics it leaves out of the results,
        or, when every metric of the task needs the human scores, a ``ValueError`` before any model call."""
        source, without = getattr(self, "_without_human_scores", ("", []))
        metrics = self.human_metrics()
        if not without or not metrics:
            return
        problem = f"{source}: no 'human_scores' field (split {', '.join(map(repr, without))})"
        if set(metrics) >= set(self.metric_names()):
            raise ValueError(
                f"{problem}: every metric of this task compares with the human scores ({', '.join(metrics)})"
            )
        eval_logger.warning(
            "%s: %s cannot be computed without human scores and are left out of the results",
            problem,
            ", ".join(metrics),
        )

    def metric_names(self) -> list[str]:
        """Names of the per-document metrics this task reports."""
        names = [f"s_tran_{k}" for k in self.options.ks] + ["s_comm"]
        if "negated" in self.options.templates:
            names.append("s_neg")
        names += ["human_agreement", "position_bias"]
        if not self._generate:
            names.append("p_first_mean")
        names += RANKING_METRICS
        if self.options.pairs_runs:
            names += PAIRS_METRICS
        names.append("unparseable")
        return names

    # ------------------------------------------------------------------ prompts
    def render(self, variant: str, doc: dict[str, Any], i: int, j: int) -> str:
        """Render one prompt variant with item ``i`` as option A and item ``j`` as option B."""
        values = {
            **doc,
            "item_a": doc["items"][i],
            "item_b": doc["items"][j],
            "answer_instruction": self.options.answer_instruction,
        }
        return render_prompt(
            self.options.templates[variant], values, where=f"task {self.config.task!r}: prompts.{variant}"
        )

    def plan(self, doc: dict[str, Any]) -> list[tuple[str, int, int]]:
        """The (variant, i, j) judgements asked for one document, in request order."""
        n = len(doc["items"])
        pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
        return [(v, i, j) for v in VARIANTS if v in self.options.templates for (i, j) in pairs]

    def construct_requests(self, doc: dict[str, Any], ctx: Any, **kwargs: Any) -> list[Instance]:
        """One request per (variant, ordered pair); two (one per letter) with log-likelihoods."""
        kwargs.pop("apply_chat_template", None)
        kwargs.pop("chat_template", None)
        kwargs["metadata"] = self.request_metadata(kwargs)
        delimiter = self.continuation_delimiter()
        requests: list[Instance] = []
        for variant, i, j in self.plan(doc):
            context = self.format_prompt(self.render(variant, doc, i, j))
            arguments: list[tuple[str, Any]]
            if self._generate:
                arguments = [(context, dict(self.config.generation_kwargs or {}))]
            else:
                arguments = [(context, f"{delimiter}{choice}") for choice in self.options.choices]
            for argument in arguments:
                requests.append(
                    Instance(
                        request_type=self.OUTPUT_TYPE,
                        doc=doc,
                        arguments=argument,
                        idx=len(requests),
                        **kwargs,
                    )
                )
        return requests

    def cost_plan_notes(self, docs: Sequence[dict[str, Any]]) -> list[tuple[str, Any]]:
        """Lines of ``logic-consistency plan`` (:mod:`logic_consistency.tasks.pairwise.cost`)."""
        return matrix_notes(docs, pairs_runs=self.options.pairs_runs)

    # ------------------------------------------------------------------ scoring
    def preference_matrices(
        self, doc: dict[str, Any], results: Sequence[Any]
    ) -> tuple[np.ndarray, np.ndarray | None, int]:
        """Turn the answers back into ``prefs``, ``neg_prefs`` (NaN = missing) and the unparseable count."""
        n = len(doc["items"])
        matrices = {v: np.full((n, n), np.nan) for v in self.options.templates}
        plan = self.plan(doc)
        unparseable = 0
        if self._generate:
            if len(results) != len(plan):
                raise ValueError(f"expected {len(plan)} answers for {doc['instance_id']}, got {len(results)}")
            for (variant, i, j), answer in zip(plan, results, strict=True):
                picked = parse_choice(answer, self.options.choices)
                if picked is None:
                    unparseable += 1
                else:
                    matrices[variant][i, j] = 1.0 if picked == self.options.choices[0] else 0.0
        else:
            if len(results) != 2 * len(plan):
                raise ValueError(
                    f"expected {2 * len(plan)} log-likelihoods for {doc['instance_id']}, got {len(results)}"
                )
            for k, (variant, i, j) in enumerate(plan):
                logprob_a, logprob_b = results[2 * k][0], results[2 * k + 1][0]
                matrices[variant][i, j] = first_option_probability(logprob_a, logprob_b)
        return matrices["normal"], matrices.get("negated"), unparseable

    def bias_and_ranking(self, doc: dict[str, Any], prefs: np.ndarray) -> dict[str, float | None]:
        """Position bias, rank aggregation and PairS of one instance from its ``normal`` matrix.

        PairS: :func:`~logic_consistency.tasks.pairwise.pairs_search.replay_pairs`. A metric that cannot
        be computed for the instance (every judgement missing; PairS needs a pair the model left
        unparseable; no human scores or all tied) is None.
        """

        def guarded(compute: Any) -> Any:
            try:
                return compute()
            except UndefinedMetricError:
                return None

        out: dict[str, float | None] = {
            "position_bias": guarded(lambda: position_bias(prefs, nan_policy="omit")),
            "p_first_mean": guarded(lambda: p_first_mean(prefs, nan_policy="omit")),
        }
        human = doc.get("human_scores")
        n = prefs.shape[0]
        if human is None or np.ptp(np.asarray(human, dtype=float)) == 0:
            return out
        winners, losers = comparisons_from_prefs(prefs, nan_policy="omit")
        if winners.size:
            for name, method in (("rank_spearman_win_loss", "win_loss"), ("rank_spearman_bt", "bradley_terry")):
                out[name] = guarded(
                    lambda method=method: ranking_spearman(
                        rank_scores(winners, losers, n, method=method), human, nan_policy="omit"
                    )
                )
        if self.options.pairs_runs and not np.isnan(prefs[~np.eye(n, dtype=bool)]).any():
            out.update(
                replay_pairs(
                    prefs, human, runs=self.options.pairs_runs, seed=self.options.seed, search=self.options.pairs_search
                )
            )
        return out

    def defined_scores(
        self, doc: dict[str, Any], scores: Mapping[str, Any], names: Iterable[str]
    ) -> dict[str, float | None]:
        """The ``scores`` of ``names`` as floats; an undefined one is ``None``, with a warning (it is left
        out of the average, or of the document where lm-eval's aggregation would meet it:
        :func:`~logic_consistency.harness_ext.task.undefined.reported`)."""
        out: dict[str, float | None] = {}
        for name in names:
            if (value := scores.get(name)) is None:
                eval_logger.warning(
                    "[%s] %s is undefined for instance %s; left out of the average",
                    self.config.task,
                    name,
                    doc.get("instance_id"),
                )
            out[name] = None if value is None else float(value)
        return reported(out)

    def process_results(self, doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
        """Score one instance; an undefined metric is ``None`` (never reported as 0 or 1) and left out of its average."""
        if self.predict_only():
            return {"bypass": None}
        prefs, neg_prefs, unparseable = self.preference_matrices(doc, results)
        # s_tran(K) needs at least K items; a smaller instance leaves it undefined (None below).
        ks = tuple(k for k in self.options.ks if k <= len(doc["items"]))
        scores = pairwise_consistency(
            prefs,
            neg_prefs,
            doc.get("human_scores"),
            ks=ks,
            calibrated=self.options.calibrated,
            samples=self.options.transitivity_samples,
            seed=self.options.seed,
            # "omit": missing (unparseable) judgements are left out, and a metric undefined for
            # this instance (e.g. all human scores tied) comes back as None instead of raising.
            nan_policy="omit",
        )
        scores.update(self.bias_and_ranking(doc, prefs))
        # "unparseable" is the last metric name: the keys keep metric_names() order.
        out: dict[str, Any] = self.defined_scores(doc, scores, [n for n in self.metric_names() if n != "unparseable"])
        out["unparseable"] = unparseable
        if (missing := count_missing(results)) is not None:
            out[MISSING_METRIC] = missing
        if not self._generate:
            out[TIES_METRIC] = sum(count_ties(m) for m in (prefs, neg_prefs) if m is not None)
        return out
