"""The GV task YAML: names, shared settings, metadata, and the two variants kept in step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lm_eval.tasks._yaml_loader import load_yaml

from logic_consistency.options import OptionError
from logic_consistency.tasks.gv import (
    arithmetic,
    common,
    harmful,
    plan_arithmetic,
    prompt_prioritization,
    style_transfer,
    triviaqa,
)

GV_DIR = Path(__file__).resolve().parents[3] / "tasks" / "gv"
MODULES = {
    "arithmetic": arithmetic,
    "plan_arithmetic": plan_arithmetic,
    "triviaqa": triviaqa,
    "style_transfer": style_transfer,
    "prompt_prioritization": prompt_prioritization,
    "harmful": harmful,
}
SPECS = {"arithmetic": "TRUE_FALSE", "plan_arithmetic": "TRUE_FALSE", "harmful": "YES_NO_HARMFUL"}


def config(name: str) -> dict[str, Any]:
    return load_yaml(GV_DIR / name, resolve_func=True)


@pytest.mark.parametrize("name", list(MODULES))
def test_variants_share_everything_but_the_validator(name: str) -> None:
    main, generate = config(f"{name}.yaml"), config(f"{name}_generate.yaml")
    assert main["task"] == f"logic_consistency_gv_{name}"
    assert generate["task"] == f"logic_consistency_gv_{name}_generate"
    assert main["stages"][0] == generate["stages"][0]  # the generator stage is copied, not merged
    assert {k: v for k, v in main.items() if k not in ("task", "stages")} == {
        k: v for k, v in generate.items() if k not in ("task", "stages")
    }
    validator, generated = main["stages"][1], generate["stages"][1]
    assert (validator["name"], validator["output_type"]) == ("validator", "loglikelihood")
    assert (generated["name"], generated["output_type"]) == ("validator", "generate_until")
    assert generated["generation_kwargs"]["max_gen_toks"] <= 16
    assert 16 <= main["stages"][0]["generation_kwargs"]["max_gen_toks"] <= 64
    module = MODULES[name]
    assert validator["parse"] is module.parse_validator_loglikelihood
    assert generated["parse"] is module.parse_validator_generated
    # the YAML's option order is the order the parser maps to verdicts
    spec = getattr(common, SPECS.get(name, "A_OR_B"))
    assert tuple(validator["choices"]) == spec.choices


@pytest.mark.parametrize("name", list(MODULES))
def test_metadata_and_metrics(name: str) -> None:
    main = config(f"{name}.yaml")
    assert main["metadata"]["version"] == 1.0 and main["metadata"]["seed"] == 1234
    assert "n_docs" in main["metadata"]
    metrics = [m["metric"] for m in main["metrics"]]
    assert metrics[0] == "gv_consistency" and metrics[-2:] == ["unparseable_generator", "unparseable_validator"]
    has_truth = name in ("arithmetic", "plan_arithmetic", "triviaqa")
    assert ("generator_accuracy" in metrics) is has_truth and ("validator_accuracy" in metrics) is has_truth
    assert main["custom_dataset"] is MODULES[name].load


def test_synthetic_defaults() -> None:
    assert config("arithmetic.yaml")["metadata"]["n_docs"] == 200
    assert config("plan_arithmetic.yaml")["metadata"]["n_docs"] == 200


@pytest.mark.parametrize("suffix", ["", "_generate"])
def test_groups_list_every_task(suffix: str) -> None:
    group = config(f"logic_consistency_gv{suffix}.yaml")
    assert group["group"] == f"logic_consistency_gv{suffix}"
    assert group["task"] == [f"logic_consistency_gv_{name}{suffix}" for name in MODULES]
    assert group["aggregate_metric_list"] == [
        {"metric": "gv_consistency", "aggregation": "mean", "weight_by_size": False},
        {"metric": "gv_consistency_strict", "aggregation": "mean", "weight_by_size": False},
    ]
    assert group["metadata"]["version"] == 1.1  # 1.1: a metric not every task reports is left out (CHANGELOG)


def test_shared_files_are_not_indexed() -> None:
    """lm-eval indexes only *.yaml: the shared settings live in extension-less files."""
    shared = sorted(p.name for p in GV_DIR.iterdir() if p.name.endswith("_yaml"))
    templates = ["_qa_yaml", "_qa_true_false_yaml"]  # a GV task from a dataset by YAML (tasks/gv/yaml_task.py)
    expected = ["_gv_yaml", "_metrics_yaml", "_options_yaml", *templates, *(f"_{name}_yaml" for name in MODULES)]
    assert shared == sorted(expected)


@pytest.mark.parametrize(("name", "typo", "closest"), [*((name, "n_doc", "n_docs") for name in MODULES),
                                                     ("style_transfer", "style_splt", "style_split"),
                                                     ("arithmetic", "operation", "operations"),
                                                     ("plan_arithmetic", "negations", "negation")])  # fmt: skip
def test_a_dataset_kwargs_typo_is_an_error_naming_the_task_and_the_closest_parameter(
    name: str, typo: str, closest: str
) -> None:
    """The loaders name their options (no ``**kwargs``), so a mistyped ``dataset_kwargs`` key is refused."""
    task_config = {**config(f"{name}.yaml"), "dataset_kwargs": {typo: 5}}
    task_class = task_config.pop("class")
    with pytest.raises(OptionError, match=rf"task 'logic_consistency_gv_{name}'.*'{typo}'.*did you mean.*'{closest}'"):
        task_class(config=task_config)
