"""An option no task of the run reads is refused, naming the tasks that do (issue 39, item 5): GV's
``generator_shots`` on a CaTeRS-only run is refused before any request, naming the family, its folder and
group, and the run's tasks; the same option on a run with a GV task, an option read across families
(a loader's, ``instance_split``) and a run of no suite task pass. Task objects are stand-ins holding what
lm-eval's do (``config.task``, ``config.metadata`` with ``config_source``); the end-to-end case runs
``lm_eval`` on the dummy model (slow)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.harness_ext.task.current_run import publish_lm
from logic_consistency.harness_ext.task.option_scope import refuse_unread_options
from logic_consistency.options import OptionError

ROOT = Path(__file__).resolve().parents[2]


def task(name: str, yaml: str | None, **metadata: Any) -> Any:
    source = {} if yaml is None else {"config_source": yaml}
    return SimpleNamespace(config=SimpleNamespace(task=name, metadata={**source, **metadata}))


CATERS = str(ROOT / "tasks" / "pairwise" / "caters" / "caters.yaml")
GV = "tasks/gv/arithmetic.yaml"  # relative to the package, as the results record it


def test_another_familys_option_is_refused_naming_the_tasks_that_read_it() -> None:
    with pytest.raises(OptionError) as refused:
        refuse_unread_options([task("logic_consistency_caters", CATERS, generator_shots=2, ks=[3])])
    assert str(refused.value) == (
        "metadata 'generator_shots': no task of this run reads it (['logic_consistency_caters']); it is an option "
        "of the tasks of tasks/gv (group logic_consistency_gv): leave it out, or run those tasks"
    )


def test_an_option_some_task_of_the_run_reads_passes() -> None:
    refuse_unread_options(
        [task("logic_consistency_caters", CATERS, generator_shots=2), task("logic_consistency_gv_arithmetic", GV)]
    )
    # options read across families (a loader's, the study split) are not scoped to one family
    refuse_unread_options([task("logic_consistency_gv_arithmetic", GV, max_items=3, seed=1, instance_split="test")])
    refuse_unread_options([task("hellaswag", "/elsewhere/hellaswag.yaml", generator_shots=2)])  # no suite task


class PairwiseStandIn:
    """A task whose class file is the pairwise family's (as a user's YAML naming the family's class)."""

    def __init__(self, metadata: dict[str, Any]) -> None:
        self.config = SimpleNamespace(task="toy_pairwise", metadata=metadata)


def test_a_users_yaml_with_a_familys_class_is_of_that_family(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "logic_consistency.harness_ext.task.option_scope.inspect.getfile",
        lambda cls: str(ROOT / "tasks" / "pairwise" / "task.py"),
    )
    refuse_unread_options([PairwiseStandIn({"config_source": "/home/me/toy_pairwise.yaml", "ks": [3]})])
    with pytest.raises(OptionError, match="'n_docs'.*\\['toy_pairwise'\\].*tasks of tasks/gv"):
        refuse_unread_options([PairwiseStandIn({"config_source": "/home/me/toy_pairwise.yaml", "n_docs": 3})])


def test_the_evaluate_wrapper_refuses_before_any_request() -> None:
    ran: list[Any] = []
    evaluate = publish_lm(lambda *args, **kwargs: ran.append(args))
    tasks = {"tasks": {"logic_consistency_caters": task("logic_consistency_caters", CATERS, negation=True)}}
    with pytest.raises(OptionError, match="metadata 'negation': no task of this run reads it"):
        evaluate(None, tasks)
    assert ran == []


@pytest.mark.slow
def test_lm_eval_refuses_it_in_one_line(tmp_path: Path) -> None:
    lm_eval = Path(sys.executable).with_name("lm_eval")
    data = os.environ.get("LOGIC_CONSISTENCY_DATA") or str(ROOT / "tests" / "fixtures" / "data")
    command = [str(lm_eval), "--model", "dummy", "--tasks", "logic_consistency_caters", "--limit", "1",
               "--metadata", '{"generator_shots": 2}', "--output_path", str(tmp_path)]  # fmt: skip
    done = children.run(command, capture_output=True, text=True, env={**os.environ, "LOGIC_CONSISTENCY_DATA": data})
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == (
        "lm_eval: error: metadata 'generator_shots': no task of this run reads it (['logic_consistency_caters']); "
        "it is an option of the tasks of tasks/gv (group logic_consistency_gv): leave it out, or run those tasks"
    )
    assert not list(tmp_path.rglob("results_*.json"))
