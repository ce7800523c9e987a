"""The options of a pairwise task: its prompt keys and its run options, validated in one pass.

A pairwise task's YAML sets the prompt keys (:data:`PROMPT_KEYS`: the templates, the answer
instruction of each prompt style, the option letters) at the top level and the run options
(:data:`METADATA_KEYS`) under ``metadata``; :meth:`PairwiseOptions.from_config` checks both before
any data loads, one group of options per step, and every error names the task and the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jinja2

from logic_consistency.harness_ext.base import TEMPLATES
from logic_consistency.options import (
    DEFAULT_SEED,
    LIMITS,
    PAIRWISE_OPTIONS,
    check_bool,
    check_int,
    check_seed,
    reject_near_misses,
    reject_unknown,
)
from logic_consistency.tasks.pairwise.pairs_search import PAIRS_SEARCH_KEYS, PairsSearch

#: The prompt variants, in request order (``negated`` is optional).
VARIANTS = ("normal", "negated")
#: The run options a pairwise task reads from ``metadata`` (``samples``: the self-agreement variant).
METADATA_KEYS = (*PAIRWISE_OPTIONS, *PAIRS_SEARCH_KEYS)
#: Top-level YAML keys read by the task class (not lm-eval TaskConfig fields).
PROMPT_KEYS = ("prompts", "answer_instructions", "prompt_style", "choices", "paraphrases", "template_id")


def _error(task: str, message: str) -> ValueError:
    return ValueError(f"task {task!r}: {message}")


def _chosen_prompts(prompt_config: dict[str, Any], task: str) -> Any:
    """``prompts``, or the paraphrase ``template_id`` picks (not yet checked)."""
    template_id = prompt_config.get("template_id")
    if template_id is None:
        return prompt_config.get("prompts")
    # Paraphrase robustness: `paraphrases` is a list of {normal, negated} templates and
    # `template_id` (1-based) picks one of them instead of `prompts`.
    paraphrases = prompt_config.get("paraphrases")
    if not isinstance(paraphrases, list) or not paraphrases:
        raise _error(task, "template_id needs a non-empty 'paraphrases' list of {normal, negated} templates")
    if not isinstance(template_id, int) or isinstance(template_id, bool) or not 1 <= template_id <= len(paraphrases):
        raise _error(task, f"template_id must be an integer in 1..{len(paraphrases)}, got {template_id!r}")
    return paraphrases[template_id - 1]


def _templates(prompt_config: dict[str, Any], task: str) -> dict[str, jinja2.Template]:
    """The compiled template of every prompt variant the task asks."""
    prompts = _chosen_prompts(prompt_config, task)
    if not isinstance(prompts, dict) or not isinstance(prompts.get("normal"), str):
        raise _error(task, "prompts must be a mapping with at least a 'normal' template")
    reject_unknown(prompts, VARIANTS, where=f"task {task!r}: prompts", what="variant")
    templates = {}
    for name, source in prompts.items():
        if source is None:
            continue
        try:
            templates[name] = TEMPLATES.from_string(source)
        except jinja2.TemplateSyntaxError as error:
            raise _error(task, f"prompts.{name} is not a valid Jinja2 template: {error}") from error
    return templates


def _answer_instruction(prompt_config: dict[str, Any], task: str) -> str:
    """The answer instruction of the task's ``prompt_style``."""
    style = prompt_config.get("prompt_style", "direct")
    instructions = prompt_config.get("answer_instructions") or {}
    if style not in instructions or not isinstance(instructions[style], str):
        raise _error(task, f"answer_instructions.{style} (for prompt_style={style!r}) must be a string")
    return str(instructions[style])


def _choices(prompt_config: dict[str, Any], task: str) -> tuple[str, str]:
    """The two option letters."""
    choices = tuple(prompt_config.get("choices", ("A", "B")))
    if len(choices) != 2 or not all(isinstance(c, str) and c for c in choices):
        raise _error(task, f"choices must be two non-empty strings, got {choices!r}")
    return (choices[0], choices[1])


def _ks(metadata: dict[str, Any], task: str) -> tuple[int, ...]:
    """The transitivity subset sizes ``ks``; ``max_items`` must leave room for the largest."""
    ks_value = metadata.get("ks", (3, 5))
    if not isinstance(ks_value, (list, tuple)):
        raise _error(task, f"metadata.ks must be a list of integers >= 3, e.g. [3, 5], got {ks_value!r}")
    ks = tuple(ks_value)
    if not ks or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 3 for k in ks):
        raise _error(task, f"metadata.ks must be a list of integers >= 3, got {list(ks)!r}")
    max_items = metadata.get("max_items")
    if max_items is not None and (not isinstance(max_items, int) or max_items < max(ks)):
        raise _error(
            task,
            f"metadata.max_items={max_items!r} must be an integer >= the largest K in ks ({max(ks)}); "
            'lower ks too, e.g. --metadata \'{"max_items": 4, "ks": [3, 4]}\'',
        )
    return ks


def _transitivity_samples(metadata: dict[str, Any], task: str) -> int | None:
    """``None`` (exact s_tran) or the number of sampled K-subsets."""
    samples = metadata.get("transitivity_samples")
    if samples is not None and (not isinstance(samples, int) or isinstance(samples, bool) or samples < 1):
        raise _error(task, f"metadata.transitivity_samples must be null (exact) or a positive integer, got {samples!r}")
    return check_int(
        samples,
        name="metadata.transitivity_samples",
        maximum=LIMITS["transitivity_samples"],
        allow_none=True,
        where=f"task {task!r}",
    )


def _pairs_runs(metadata: dict[str, Any], task: str) -> int:
    """How many runs of the PairS replay (0 = none)."""
    pairs_runs = metadata.get("pairs_runs", 100)
    if not isinstance(pairs_runs, int) or isinstance(pairs_runs, bool) or pairs_runs < 0:
        raise _error(task, f"metadata.pairs_runs must be a non-negative integer (0 = no PairS), got {pairs_runs!r}")
    check_int(pairs_runs, name="metadata.pairs_runs", maximum=LIMITS["pairs_runs"], where=f"task {task!r}")
    return pairs_runs


@dataclass(frozen=True)
class PairwiseOptions:
    """Validated pairwise-task options read from a task's ``metadata``."""

    templates: dict[str, jinja2.Template]
    answer_instruction: str
    choices: tuple[str, str]
    ks: tuple[int, ...]
    calibrated: bool
    transitivity_samples: int | None
    seed: int
    pairs_runs: int = 100
    pairs_search: PairsSearch = PairsSearch()

    @classmethod
    def from_config(
        cls,
        prompt_config: dict[str, Any],
        metadata: dict[str, Any],
        *,
        task: str,
        loader_options: Sequence[str] = (),
    ) -> PairwiseOptions:
        """Build options from the prompt keys and the run options, naming task and key in errors.

        Args:
            prompt_config: The YAML keys ``prompts``, ``answer_instructions``, ``prompt_style``
                and ``choices``.
            metadata: The task's ``metadata`` (run options, merged with ``--metadata``).
            task: Task name, for error messages.
            loader_options: The dataset options of the task's loader (its parameters; CaTeRS
                ``order``), which ``metadata`` may also set.
        """
        where = f"task {task!r}"
        # One rule for every family (options.reject_near_misses): an unknown key passes, since lm-eval
        # 0.4.13 merges --model_args into every task's metadata and --metadata reaches every task;
        # a near miss of an option name (``max_itemz``) is a typo and an error.
        reject_near_misses(metadata, (*METADATA_KEYS, *loader_options), where=f"{where}: metadata")
        # Keyword arguments are evaluated left to right: of several bad options, the first below is
        # the one reported.
        return cls(
            templates=_templates(prompt_config, task),
            answer_instruction=_answer_instruction(prompt_config, task),
            choices=_choices(prompt_config, task),
            ks=_ks(metadata, task),
            transitivity_samples=_transitivity_samples(metadata, task),
            seed=check_seed(metadata.get("seed", DEFAULT_SEED), name="metadata.seed", where=where),
            calibrated=check_bool(metadata.get("calibrated", False), name="metadata.calibrated", where=where),
            pairs_runs=_pairs_runs(metadata, task),
            pairs_search=PairsSearch.from_metadata(metadata, where=where),
        )
