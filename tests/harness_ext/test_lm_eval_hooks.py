"""Every reach into lm-eval beyond its public API is listed (``lm_eval_hooks.LM_EVAL_HOOKS``) and pinned.

An lm-eval upgrade that changes a wrapped or overridden function fails here, in the suite's tests,
not inside a user's run.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

from logic_consistency.harness_ext import autoload
from logic_consistency.harness_ext.autoload import PINNED_LM_EVAL_VERSION
from logic_consistency.harness_ext.backends.registry import built_in
from logic_consistency.harness_ext.lm_eval_hooks import LM_EVAL_HOOKS, LmEvalHook

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
    "lm_eval._cli.run:Run._execute": "(args: argparse.Namespace) -> None",
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
    "lm_eval.api.task:load_from_cache": "(file_name: str, cache: bool = False)",
    "lm_eval.caching.cache:_cache_file_path": "(file_name: str) -> str",
    "lm_eval._cli.utils:split_top_level": "(args: 'str') -> 'list[str]'",
    "lm_eval.api.task:Task.doc_iterator": (
        "(self, *, rank: 'int' = 0, limit: 'int | None' = None, world_size: 'int' = 1, samples: "
        "'list[int] | None' = None) -> 'Iterator[tuple[int, Any]]'"
    ),
    "lm_eval.api.task:ConfigurableTask.download": "(self, dataset_kwargs: 'dict[str, Any] | None' = None, **kwargs) -> 'None'",
    "lm_eval.api.task:Task.build_all_requests": (
        "(self, *, limit: 'int | None' = None, samples: 'list[int] | None' = None, rank: 'int' = 0, world_size: "
        "'int' = 1, cache_requests: 'bool' = False, rewrite_requests_cache: 'bool' = False, system_instruction: "
        "'str | None' = None, apply_chat_template: 'bool' = False, fewshot_as_multiturn: 'bool' = False, "
        "chat_template: 'Callable | None' = None, tokenizer_name: 'str' = '') -> 'None'"
    ),
    "lm_eval.models.huggingface:HFLM._loglikelihood_tokens": (
        "(self, requests: 'list[tuple[tuple[str, str], list[int], list[int]]]', disable_tqdm: 'bool' = False, "
        "override_bs: 'int | None' = None) -> 'list[tuple[float, bool]]'"
    ),
    "lm_eval.tasks._yaml_loader:load_yaml": (
        "(path: 'str | Path', *, resolve_func: 'bool' = True, recursive: 'bool' = True, _seen: 'set[Path] | None' = "
        "None) -> 'dict[str, Any]'"
    ),
    "lm_eval.evaluator_utils:_compute_task_aggregations": (
        "(task: 'Task', raw_metrics: 'dict[tuple[str, str], list]', bootstrap_iters: 'int | None' = 100000) -> "
        "'tuple[dict[str, Any], int]'"
    ),
    "lm_eval.api.group:Group.aggregate": "(self, task_metrics: 'dict[str, _TaskMetrics]') -> '_TaskMetrics'",
    "lm_eval.evaluator_utils:_process_results": (
        "(eval_results_acc: 'dict[str, ResultAcc]', groups: 'dict[str, Group] | None' = None, bootstrap_iters: "
        "'int | None' = 100000) -> 'EvalAcc'"
    ),
    "lm_eval.evaluator_utils:stderr_for_metric": (
        "(metric: Callable[[Sequence[~T]], float], bootstrap_iters: int) -> Optional[Callable[[Sequence[~T]], float]]"
    ),
    "lm_eval.evaluator_utils:EvalAcc._to_eval_results": "(self, *, samples: 'dict[str, list] | None' = None) -> 'EvalResults'",
    "lm_eval._cli.run:Run.create": "(subparsers: argparse._SubParsersAction)",
    "lm_eval.api.model:hash_args": "(attr: str, args: collections.abc.Iterable[typing.Any]) -> str",
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
    assert {hook.kind for hook in LM_EVAL_HOOKS} <= {"wraps", "overrides", "calls", "reads"}
    for hook in LM_EVAL_HOOKS:
        assert hook.why and hook.retire_when and hook.by, hook
    # every patch applied at import is listed: one callback per patched module
    wrapped_modules = {hook.upstream.partition(":")[0] for hook in LM_EVAL_HOOKS if hook.kind == "wraps"}
    assert set(autoload._CALLBACKS) - {"lm_eval.models"} == wrapped_modules  # lm_eval.models: public registry


@pytest.mark.parametrize("hook", [h for h in LM_EVAL_HOOKS if h.kind != "reads"], ids=lambda h: h.upstream)
def test_upstream_signature_is_the_pinned_one(hook: LmEvalHook) -> None:
    assert str(inspect.signature(_upstream(hook.upstream))) == PINNED_SIGNATURES[hook.upstream], (
        f"lm-eval changed {hook.upstream}, which the suite {hook.kind} ({hook.by}): re-check that hook"
    )


def test_overridden_private_methods_are_still_overridden() -> None:
    """Each override is declared by the backend whose class makes it (``Backend.hooks``), and the class
    really overrides it (a rename on either side fails here)."""
    overrides = [(backend, hook) for backend in built_in() for hook in backend.hooks if hook.kind == "overrides"]
    assert sorted(hook for _, hook in overrides) == sorted(h for h in LM_EVAL_HOOKS if h.kind == "overrides")
    for backend, hook in overrides:
        module, _, name = backend.target.partition(":")
        assert hook.by == f"{module.removeprefix('logic_consistency.harness_ext.')}.{name}", hook
        assert hook.upstream.rpartition(".")[2] in vars(getattr(importlib.import_module(module), name)), hook


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


# --- every reach is in the table -------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
_SKIPPED = {"tests", "scripts", "build", "dist", "docs"}
_PRIVATE_MODULE = re.compile(r"\blm_eval(?:\.\w+)*\.(_\w+)")


def _is_private(name: str) -> bool:
    return name.startswith("_") and name.strip("_") != "" and not (name.startswith("__") and name.endswith("__"))


def _package_trees() -> dict[str, ast.Module]:
    trees = {}
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in _SKIPPED or any(part.startswith(".") for part in relative.parts):
            continue
        trees[relative.as_posix()] = ast.parse(path.read_text(encoding="utf-8"))
    return trees


def _defined_private_names(tree: ast.AST) -> set[str]:
    """Private names a body of code defines: functions, classes, and attributes or names it assigns."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            names.add(node.id if isinstance(node, ast.Name) else node.attr)
    return {name for name in names if _is_private(name)}


def _lm_eval_private_names() -> set[str]:
    import lm_eval

    names: set[str] = set()
    for path in Path(lm_eval.__file__).parent.rglob("*.py"):
        names |= _defined_private_names(ast.parse(path.read_text(encoding="utf-8")))
    return names


def _names_from_lm_eval(tree: ast.Module) -> set[str]:
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lm_eval")
        for alias in node.names
    }


def _lm_eval_subclasses(tree: ast.Module) -> list[ast.ClassDef]:
    """Classes deriving directly from a class imported from lm-eval."""
    bases = _names_from_lm_eval(tree)
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and any(ast.unparse(base) in bases for base in node.bases)
    ]


def _own_private_names(tree: ast.Module) -> set[str]:
    """Private names a module defines outside its subclasses of lm-eval classes: the suite's own."""
    inside = {id(n) for cls in _lm_eval_subclasses(tree) for n in ast.walk(cls)}
    outside = ast.Module(body=[], type_ignores=[])
    outside.body = [n for n in ast.walk(tree) if id(n) not in inside and isinstance(n, ast.stmt)]
    return {name for stmt in outside.body for name in _defined_private_names(ast.Module(body=[stmt], type_ignores=[]))}


def _reaches(tree: ast.Module, lm_eval_private: set[str], suite_own: set[str]) -> set[str]:
    """The private lm-eval names one module uses: private modules (imports, and module names in strings
    such as a logger's), private names imported from lm-eval, every private lm-eval name a subclass of an
    lm-eval class defines, sets or reads (an override, or lm-eval's own state), and elsewhere the private
    attributes only lm-eval defines."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lm_eval"):
            found |= {match.group(0) for match in _PRIVATE_MODULE.finditer(node.module or "")}
            found |= {alias.name for alias in node.names if _is_private(alias.name)}
        elif isinstance(node, ast.Import):
            found |= {match.group(0) for alias in node.names for match in _PRIVATE_MODULE.finditer(alias.name)}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found |= {match.group(0) for match in _PRIVATE_MODULE.finditer(node.value)}
        elif isinstance(node, ast.Attribute) and _is_private(node.attr):
            if node.attr in lm_eval_private and node.attr not in suite_own:
                found.add(node.attr)
    for cls in _lm_eval_subclasses(tree):
        found |= _defined_private_names(cls) & lm_eval_private
        found |= {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and n.attr in lm_eval_private}
    return found


def test_every_private_lm_eval_name_the_package_uses_is_in_the_hooks_table() -> None:
    """A new reach into lm-eval's internals fails here until it is listed in ``lm_eval_hooks.LM_EVAL_HOOKS``
    (and so pinned above): a private module, a private function or attribute, an overridden private method."""
    trees = _package_trees()
    lm_eval_private = _lm_eval_private_names()
    suite_own = set().union(*(_own_private_names(tree) for tree in trees.values()))
    listed = " ".join(hook.upstream.replace(":", ".") for hook in LM_EVAL_HOOKS)
    unlisted = {
        f"{relative}: {name}"
        for relative, tree in trees.items()
        for name in _reaches(tree, lm_eval_private, suite_own)
        if not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", listed)
    }
    assert not unlisted, (
        f"private lm-eval names used but not listed in harness_ext/lm_eval_hooks.py: {sorted(unlisted)}"
    )


def test_the_reach_finder_sees_each_kind_of_reach() -> None:
    """The finder itself, on a module that reaches in each way it knows."""
    source = (
        "import logging\n"
        "from lm_eval.evaluator_utils import _process_results\n"
        "from lm_eval.api.model import LM\n"
        "from lm_eval.tasks._yaml_loader import load_yaml\n"
        "log = logging.getLogger('lm_eval.tasks._index')\n"
        "x = _process_results(1, 2, 3)._to_eval_results()\n"
        "class Mine(LM):\n"
        "    def _model_call(self): ...\n"
    )
    found = _reaches(ast.parse(source), {"_to_eval_results", "_model_call", "_process_results"}, set())
    assert found == {
        "_process_results",
        "_to_eval_results",
        "_model_call",
        "lm_eval.tasks._yaml_loader",
        "lm_eval.tasks._index",
    }
