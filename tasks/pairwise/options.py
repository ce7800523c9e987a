"""The options of a pairwise task: its prompt keys and its run options, validated in one pass.

A pairwise task's YAML sets the prompt keys (:data:`PROMPT_KEYS`: the templates, the answer
instruction of each prompt style, the option letters) at the top level and the run options
(:data:`METADATA_KEYS`) under ``metadata``; :meth:`PairwiseOptions.from_config` checks both before
any data loads, one group of options per step, and every error names the task and the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from logic_consistency.harness_ext.task.base import TEMPLATES
from logic_consistency.metrics.pairs_sort import PairsSearch
from logic_consistency.options import (
    OPTIONS_FILE,
    load_option_file,
    read_option,
    reject_near_misses,
    reject_unknown,
)
from logic_consistency.tasks.data import check_max_items
from logic_consistency.tasks.pairwise.pairs_search import read_pairs_search

#: The prompt variants, in request order (``negated`` is optional).
VARIANTS = ("normal", "negated")
#: The run options a pairwise task reads from ``metadata``: those declared in this folder's
#: ``_options_yaml`` (``samples``: the self-agreement variant; ``pairs_*``: the PairS search) and the
#: loaders' ``max_items`` and ``seed``, which the task passes to a loader that names them (and caps
#: itself for one that does not: :meth:`PairwiseConsistencyTask.download`).
METADATA_KEYS = (*(arg.name for arg in load_option_file(Path(__file__).with_name(OPTIONS_FILE))), "max_items", "seed")
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


def _ks_and_cap(metadata: dict[str, Any], task: str) -> tuple[tuple[int, ...], int | None]:
    """The transitivity subset sizes ``ks``, and ``max_items``, which must leave room for the largest."""
    ks: tuple[int, ...] = read_option(metadata, "ks", where=f"task {task!r}")
    max_items = check_max_items(
        metadata.get("max_items"),
        minimum=max(ks),
        name="metadata.max_items",
        where=f"task {task!r}",
        why=f'the largest K in ks is {max(ks)}; lower ks too, e.g. --metadata \'{{"max_items": 4, "ks": [3, 4]}}\'',
    )
    return ks, max_items


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
    max_items: int | None = None

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
        # Of several bad options, the first checked below is the one reported.
        templates = _templates(prompt_config, task)
        answer_instruction = _answer_instruction(prompt_config, task)
        choices = _choices(prompt_config, task)
        ks, max_items = _ks_and_cap(metadata, task)
        return cls(
            templates=templates,
            answer_instruction=answer_instruction,
            choices=choices,
            ks=ks,
            transitivity_samples=read_option(metadata, "transitivity_samples", where=where),
            seed=read_option(metadata, "seed", where=where),
            calibrated=read_option(metadata, "calibrated", where=where),
            pairs_runs=read_option(metadata, "pairs_runs", where=where),
            pairs_search=read_pairs_search(metadata, where=where),
            max_items=max_items,
        )
