"""Bad-input cases of a user's own setup: a task YAML checked with ``logic-consistency check-task``
(each lm-eval error named with file, key and line), a custom loader's human scores (refused when
the data load, before any model call), and an unwritable HOME or cache folder (one line naming the
path and the environment variable to set)."""

from __future__ import annotations

import functools
import os
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import datasets
from bad_inputs_support import CaseTable, cli, loader

from logic_consistency.harness_ext.autoload import tasks_dir
from logic_consistency.harness_ext.task.check_task import TaskFileError
from logic_consistency.outputs import OutputError

CASES = CaseTable()

LOADER = """
import datasets

def load(**_):
    rows = [{"instance_id": "q1", "context": "numbers", "items": ["item-1", "item-2", "item-3"],
             "human_scores": SCORES}]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})
"""

PAIRWISE = f"""\
include: {tasks_dir() / "pairwise" / "_pairwise_yaml"}
task: user_pairwise_task
custom_dataset: !function utils.load
prompts:
  normal: "{{{{ context }}}} A: {{{{ item_a }}}} B: {{{{ item_b }}}} Which is larger? {{{{ answer_instruction }}}}"
"""

PLAIN = """\
task: user_plain_task
custom_dataset: !function utils.load
output_type: loglikelihood
test_split: test
doc_to_text: "{{ context }}"
doc_to_target: " yes"
metric_list:
  - metric: acc
"""


def _task_folder(tmp: Path, yaml_text: str, scores: str = "[1.0, 2.0, 3.0]", **extra: str) -> Path:
    """A user's task folder: ``task.yaml``, a ``utils.py`` loader and ``extra`` files."""
    folder = tmp / "mytasks"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "utils.py").write_text(LOADER.replace("SCORES", scores), encoding="utf-8")
    for name, text in extra.items():
        (folder / name.replace("__", ".")).write_text(text, encoding="utf-8")
    (folder / "task.yaml").write_text(textwrap.dedent(yaml_text), encoding="utf-8")
    return folder / "task.yaml"


def _check(yaml_text: str, scores: str = "[1.0, 2.0, 3.0]", **extra: str) -> Callable[[Path], Any]:
    return lambda tmp: cli("check-task", str(_task_folder(tmp, yaml_text, scores, **extra)))


# ------------------------------------------------------------------------------------ task YAML files
for _name, _yaml, _expect in [
    (
        "malformed YAML (unclosed quote)",
        PLAIN.replace('"{{ context }}"', '"{{ context }}'),
        ("task.yaml line", "column"),
    ),
    (
        "malformed YAML (bad indent)",
        PLAIN.replace("  - metric: acc", "  - metric: acc\n bad: 1"),
        ("task.yaml line 9",),
    ),
    ("a list, not a mapping", "- task: x\n", ("task.yaml", "mapping of keys", "list")),
    ("no task: key", PLAIN.replace("task: user_plain_task\n", ""), ("task.yaml", "no 'task:' key", "Tasks not found")),
    ("a group file", "group: g\ntask: [a, b]\n", ("task.yaml", "key 'group'", "not a task file")),
    ("missing include", "include: _missing_yaml\n" + PLAIN, ("task.yaml line 1", "key 'include'", "_missing_yaml")),
    ("include cycle", "include: task.yaml\n" + PLAIN, ("task.yaml", "key 'include'", "cycle")),
    (
        "unknown metric",
        PLAIN.replace("metric: acc", "metric: acc_nrom"),
        ("task.yaml line 8", "metric_list[0].metric", "acc_norm"),
    ),
    ("unknown aggregation", PLAIN + "    aggregation: meen\n", ("task.yaml line 8", "aggregation", "'mean'")),
    (
        "unknown !function module",
        PLAIN.replace("utils.load", "helpers.load"),
        ("task.yaml line 2", "custom_dataset", "helpers"),
    ),
    (
        "unknown !function name",
        PLAIN.replace("utils.load", "utils.lode"),
        ("task.yaml line 2", "custom_dataset", "lode"),
    ),
    ("unknown TaskConfig key", PLAIN + "doc_to_txt: x\n", ("task.yaml line 9", "doc_to_txt", "'doc_to_text'")),
    ("suite option typo", PAIRWISE + "metadata: {max_item: 2}\n", ("task.yaml", "user_pairwise_task", "'max_items'")),
]:
    CASES.add(f"check-task {_name}", _check(_yaml), *_expect, error=TaskFileError)

CASES.add(
    "check-task an included file is malformed",
    _check("include: _base_yaml\n" + PLAIN, _base_yaml="output_type: [loglikelihood\n"),
    "_base_yaml line 2",
    "malformed YAML",
    error=TaskFileError,
)


def _evaluate(yaml_text: str) -> Callable[[Path], Any]:
    """``lm_eval --model dummy --tasks user_pairwise_task --include_path FOLDER``, in-process."""

    def run(tmp: Path) -> Any:
        from lm_eval import evaluator
        from lm_eval.tasks import TaskManager

        manager = TaskManager(include_path=str(_task_folder(tmp, yaml_text).parent), include_defaults=False)
        return evaluator.simple_evaluate(model="dummy", tasks=["user_pairwise_task"], task_manager=manager, limit=1)

    return run


CASES.add(  # issue 42: jinja2's UndefinedError named neither the task nor the template
    "lm_eval with an undefined template variable",
    _evaluate(PAIRWISE.replace("{{ context }}", "{{ contxt }}")),
    "task 'user_pairwise_task': prompts.normal: 'contxt' is undefined",
    "the template can use answer_instruction, context,",
    error=ValueError,
)


@CASES.case(
    "a stage template with an undefined variable", "task 't': stages[0].prompts.prompt", "'qestion'", "question"
)
def _(tmp: Path) -> Any:
    from logic_consistency.harness_ext.task.multistage import Stage

    return Stage.from_yaml({"name": "generate", "prompts": {"prompt": "{{ qestion }}"}}, task="t", index=0).render(
        {"question": "2 + 2?"}
    )


# ------------------------------------------------------------------------------------ a loader's human scores
for _name, _scores, _expect in [
    ("NaN", "[1.0, float('nan'), 3.0]", "'human_scores[1]' value nan is not a finite number"),
    ("inf", "[1.0, 2.0, float('inf')]", "'human_scores[2]' value inf is not a finite number"),
    ("a string", "['1', '2', 'high']", "'human_scores[0]' must be a number"),
    ("missing", "None", "'human_scores' must be a list of numbers, got None"),
    ("one short", "[1.0, 2.0]", "has 2 values, expected 3 (one per item)"),
]:
    CASES.add(
        f"custom loader human scores {_name}",
        _check(PAIRWISE, _scores),
        "user_pairwise_task",
        "loader",
        "utils.load",
        "row 1 (instance_id 'q1')",
        _expect,
        error=TaskFileError,
    )


# ------------------------------------------------------------------------------------ HOME and cache folders
def _with_env(run: Callable[[], Any], **env: str | None) -> Callable[[Path], Any]:
    """Call ``run`` with ``env`` set (``None``: unset), then restore the environment."""

    def case(_: Path) -> Any:
        saved = {name: os.environ.get(name) for name in env}
        try:
            for name, value in env.items():
                os.environ.pop(name, None) if value is None else os.environ.__setitem__(name, value)
            return run()
        finally:
            for name, value in saved.items():
                os.environ.pop(name, None) if value is None else os.environ.__setitem__(name, value)

    return case


_MODEL_PATH = functools.partial(cli, "model-path", "smollm2-135m-instruct")
CASES.add(
    "HOME not writable: embedded model cache",
    _with_env(_MODEL_PATH, HOME="/proc", XDG_CACHE_HOME=None, LOGIC_CONSISTENCY_CACHE=None),
    "/proc/.cache/logic_consistency/models",
    "set LOGIC_CONSISTENCY_CACHE to a writable folder",
    error=OutputError,
)
CASES.add(
    "LOGIC_CONSISTENCY_CACHE not writable",
    _with_env(_MODEL_PATH, LOGIC_CONSISTENCY_CACHE="/proc/lc_cache"),
    "/proc/lc_cache/models",
    "LOGIC_CONSISTENCY_CACHE",
    error=OutputError,
)


def _hf_cache_at(folder: str, dataset: str) -> Callable[[Path], Any]:
    """Load ``dataset`` from its online source with the ``datasets`` cache at ``folder`` (``HOME=/proc`` gives
    ``/proc/.cache/huggingface/datasets``; ``datasets`` reads HOME when imported, so the path is set here)."""

    def case(tmp: Path) -> Any:
        saved, data = datasets.config.HF_DATASETS_CACHE, os.environ.pop("LOGIC_CONSISTENCY_DATA", None)
        datasets.config.HF_DATASETS_CACHE = Path(folder)
        try:
            return loader(dataset)()
        finally:
            datasets.config.HF_DATASETS_CACHE = saved
            if data is not None:
                os.environ["LOGIC_CONSISTENCY_DATA"] = data

    return case


for _dataset in ("noveleval", "summeval"):  # a file download and a hub dataset
    CASES.add(
        f"HOME not writable: Hugging Face datasets cache ({_dataset})",
        _hf_cache_at("/proc/.cache/huggingface/datasets", _dataset),
        "/proc/.cache/huggingface/datasets",
        "set HF_HOME (or HF_DATASETS_CACHE) to a writable folder",
        "LOGIC_CONSISTENCY_DATA",
        error=OutputError,
    )
CASES.add(
    "check-task !function without a module",
    _check(PLAIN.replace("utils.load", "load")),
    "task.yaml line 2",
    "custom_dataset",
    "no module path",
    error=TaskFileError,
)
