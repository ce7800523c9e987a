"""Every reach into lm-eval beyond its public API is listed (``autoload.LM_EVAL_HOOKS``) and pinned.

An lm-eval upgrade that changes a wrapped or overridden function fails here, in the suite's tests,
not inside a user's run.
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from typing import Any

import pytest

from logic_consistency.harness_ext import autoload
from logic_consistency.harness_ext.autoload import LM_EVAL_HOOKS, PINNED_LM_EVAL_VERSION

#: ``str(inspect.signature(...))`` of each upstream function in lm-eval 0.4.13.
PINNED_SIGNATURES = {
    "lm_eval.tasks.manager:TaskManager.__init__": (
        "(self, verbosity: 'str | None' = None, include_path: 'str | Path | list[str | Path] | None' = None, "
        "include_defaults: 'bool' = True, metadata: 'dict[str, dict[str, Any] | str] | None' = None) -> 'None'"
    ),
    "lm_eval.evaluator:evaluate": (
        "(lm: 'LM', task_dict: 'TaskDict | _NestedDict', limit: 'int | None' = None, samples: "
        "'dict[str, list[int]] | None' = None, cache_requests: 'bool' = False, rewrite_requests_cache: 'bool' = "
        "False, bootstrap_iters: 'int | None' = 100000, write_out: 'bool' = False, log_samples: 'bool' = True, "
        "system_instruction: 'str | None' = None, apply_chat_template: 'bool | str' = False, fewshot_as_multiturn: "
        "'bool' = False, verbosity: 'str' = 'INFO', confirm_run_unsafe_code: 'bool' = False) -> 'EvalResults | None'"
    ),
    "lm_eval.evaluator:simple_evaluate": (
        "(model: 'str | LM', model_args: 'str | dict[str, str | int | float] | None' = None, tasks: "
        "'list[str | dict[str, Any] | Task] | None' = None, num_fewshot: 'int | None' = None, batch_size: "
        "'int | str | None' = None, max_batch_size: 'int | None' = None, device: 'str | None' = None, use_cache: "
        "'str | None' = None, cache_requests: 'bool' = False, rewrite_requests_cache: 'bool' = False, "
        "delete_requests_cache: 'bool' = False, limit: 'int | float | None' = None, samples: "
        "'dict[str, list[int]] | None' = None, bootstrap_iters: 'int' = 100000, check_integrity: 'bool' = False, "
        "write_out: 'bool' = False, log_samples: 'bool' = True, evaluation_tracker: 'EvaluationTracker | None' = "
        "None, system_instruction: 'str | None' = None, apply_chat_template: 'bool | str' = False, "
        "fewshot_as_multiturn: 'bool' = True, gen_kwargs: 'str | dict[str, str | float | int] | None' = None, "
        "task_manager: 'TaskManager | None' = None, verbosity=None, predict_only: 'bool' = False, random_seed: "
        "'int' = 0, numpy_random_seed: 'int' = 1234, torch_random_seed: 'int' = 1234, fewshot_random_seed: 'int' = "
        "1234, confirm_run_unsafe_code: 'bool' = False, metadata: 'dict[str, Any] | None' = None) -> "
        "'EvalResults | None'"
    ),
    "lm_eval.api.model:CachingLM.__init__": "(self, lm: lm_eval.api.model.LM, cache_db: str) -> None",
    "lm_eval.__main__:cli_evaluate": "() -> None",
    "lm_eval.api.task:Task.doc_iterator": (
        "(self, *, rank: 'int' = 0, limit: 'int | None' = None, world_size: 'int' = 1, samples: "
        "'list[int] | None' = None) -> 'Iterator[tuple[int, Any]]'"
    ),
    "lm_eval.models.huggingface:HFLM._loglikelihood_tokens": (
        "(self, requests: 'list[tuple[tuple[str, str], list[int], list[int]]]', disable_tqdm: 'bool' = False, "
        "override_bs: 'int | None' = None) -> 'list[tuple[float, bool]]'"
    ),
    "lm_eval.models.openai_completions:LocalChatCompletion._create_payload": (
        "(self, messages: list[dict], generate=False, gen_kwargs: dict | None = None, seed=1234, eos=None, "
        "**kwargs) -> dict"
    ),
}


def _upstream(target: str) -> Any:
    """The original (unwrapped) upstream object named ``module:qualified.name``."""
    module_name, _, qualified = target.partition(":")
    value: Any = importlib.import_module(module_name)
    for part in qualified.split("."):
        value = getattr(value, part)
    while hasattr(value, "__wrapped__"):  # our own wrappers carry functools.wraps' __wrapped__
        value = value.__wrapped__
    return value


def test_every_hook_is_listed_once_with_its_reasons() -> None:
    targets = [hook.upstream for hook in LM_EVAL_HOOKS]
    assert len(targets) == len(set(targets))
    assert {hook.kind for hook in LM_EVAL_HOOKS} <= {"wraps", "overrides", "reads"}
    for hook in LM_EVAL_HOOKS:
        assert hook.why and hook.retire_when and hook.by, hook
    # every patch applied at import is listed: one callback per patched module
    wrapped_modules = {hook.upstream.partition(":")[0] for hook in LM_EVAL_HOOKS if hook.kind == "wraps"}
    assert set(autoload._CALLBACKS) - {"lm_eval.models"} == wrapped_modules  # lm_eval.models: public registry


@pytest.mark.parametrize("hook", [h for h in LM_EVAL_HOOKS if h.kind != "reads"], ids=lambda h: h.upstream)
def test_upstream_signature_is_the_pinned_one(hook: autoload.LmEvalHook) -> None:
    assert str(inspect.signature(_upstream(hook.upstream))) == PINNED_SIGNATURES[hook.upstream], (
        f"lm-eval changed {hook.upstream}, which the suite {hook.kind} ({hook.by}): re-check that hook"
    )


def test_overridden_private_methods_are_still_overridden() -> None:
    """The table names what the subclasses really override (a rename on either side fails here)."""
    from logic_consistency.harness_ext.chat_judge import ChatJudgeLM
    from logic_consistency.harness_ext.prefix_scorer import PrefixSharingHFLM

    classes = {"prefix_scorer.PrefixSharingHFLM": PrefixSharingHFLM, "chat_judge.ChatJudgeLM": ChatJudgeLM}
    for hook in (h for h in LM_EVAL_HOOKS if h.kind == "overrides"):
        method = hook.upstream.rpartition(".")[2]
        assert method in vars(classes[hook.by]), hook


def test_the_private_index_read_is_still_there() -> None:
    from lm_eval.tasks.manager import TaskManager

    assert isinstance(getattr(TaskManager(include_defaults=False), "_index", None), dict)


def test_another_lm_eval_version_warns_once_before_any_patch(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "version", lambda name: "9.9.9")
    monkeypatch.setattr(autoload, "_VERSION_CHECKED", [])
    calls: list[str] = []
    checked = autoload._after_version_check(lambda module: calls.append("patched"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checked(None)  # type: ignore[arg-type]
        checked(None)  # type: ignore[arg-type]
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and "9.9.9" in messages[0] and PINNED_LM_EVAL_VERSION in messages[0], messages
    assert calls == ["patched", "patched"]
