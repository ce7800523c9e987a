"""The variant task YAML is generated from tasks/_variants_yaml, and what is committed is current."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import yaml

ROOT = Path(__file__).resolve().parents[2]


class _FunctionLoader(yaml.SafeLoader):
    """Reads task YAML: ``!function x`` becomes the string ``"x"``."""


_FunctionLoader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "generate_task_configs", ROOT / "scripts" / "generate_task_configs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_variant_files_are_what_the_script_writes() -> None:
    assert _generator().stale_files() == [], "run: python scripts/generate_task_configs.py"


def test_the_generated_families_cover_every_paraphrase_and_conjunction_task() -> None:
    files = _generator().generated_files()
    names = {path.name for path in files}
    for dataset in ("summeval", "noveleval", "caters"):
        assert {f"{dataset}_para{n:02d}.yaml" for n in range(1, 11)} <= names
        assert f"_{dataset}_paraphrases_yaml" in names and f"logic_consistency_{dataset}_paraphrases.yaml" in names
    conjunctions = ("so", "because", "since", "as", "therefore", "thus", "hence")
    assert {f"logic_consistency_causal_ctp_{c}.yaml" for c in conjunctions} <= names
    gv_files = [path for path in files if path.parent.name == "gv"]
    assert len(files) == 3 * 12 + len(conjunctions) + len(gv_files)


def test_every_gv_task_file_is_generated_with_both_stages() -> None:
    """Each GV task's stages are written by the script; only the groups (no stages) and App. H's validator
    sets (one validator stage over the GV task's own validator prompt, tasks/gv/validator_sets.py) are by hand."""
    files = _generator().generated_files()
    gv_folder = ROOT / "tasks" / "gv"
    task_files = {
        Path("tasks/gv") / path.name
        for path in gv_folder.glob("*.yaml")
        if "stages:" in path.read_text() and not path.name.endswith("_app_h.yaml")
    }
    assert {path for path in files if path.parent.name == "gv"} == task_files and len(task_files) == 16
    for path in task_files:
        stages = yaml.load(files[path], Loader=_FunctionLoader)["stages"]
        assert [stage["name"] for stage in stages] == ["generator", "validator"]
        module = path.name.removesuffix(".yaml").removesuffix("_generate").removesuffix("_cot")
        module = module.removesuffix("_true_false")
        assert all(stage["prompts"].startswith(f"logic_consistency.tasks.gv.{module}.") for stage in stages)


def test_a_negated_template_is_its_normal_template_with_the_negated_question() -> None:
    files = _generator().generated_files()
    listing = yaml.safe_load(files[Path("tasks/pairwise/summeval/_summeval_paraphrases_yaml")])
    for template in listing["paraphrases"]:
        normal, negated = template["normal"].split("\n"), template["negated"].split("\n")
        assert normal[:-1] == negated[:-1] and normal[-1] != negated[-1]
        assert negated[-1].startswith("Question:") and negated[-1].endswith("{{ answer_instruction }}")


def test_the_check_names_an_edited_a_missing_and_a_left_over_file(tmp_path: Path) -> None:
    generator = _generator()
    shutil.copytree(ROOT / "tasks", tmp_path / "tasks")
    edited = tmp_path / "tasks" / "pairwise" / "caters" / "caters_para07.yaml"
    edited.write_text(edited.read_text(encoding="utf-8") + "num_fewshot: 1\n", encoding="utf-8")
    (tmp_path / "tasks" / "causal" / "logic_consistency_causal_ctp_thus.yaml").unlink()
    left_over = tmp_path / "tasks" / "pairwise" / "caters" / "caters_para11.yaml"
    left_over.write_text(generator.MARK + "\ntask: x\n", encoding="utf-8")
    problems = generator.stale_files(tmp_path)
    assert problems == [
        "tasks/causal/logic_consistency_causal_ctp_thus.yaml: missing",
        "tasks/pairwise/caters/caters_para07.yaml: differs from the script's output",
        "tasks/pairwise/caters/caters_para11.yaml: generated earlier but no longer by the source (delete it)",
    ]
