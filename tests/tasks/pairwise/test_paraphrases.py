"""The suite's 10 paraphrased prompts per pairwise dataset, one task per template."""

from __future__ import annotations

from pathlib import Path

import pytest
from lm_eval.tasks import TaskManager, get_task_dict

from logic_consistency.harness_ext.autoload import tasks_dir

FIXTURE_DATA = Path(__file__).resolve().parents[2] / "fixtures" / "data"


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("LOGIC_CONSISTENCY_DATA", str(FIXTURE_DATA))
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
    names = [f"logic_consistency_{d}" for d in ("summeval", "noveleval", "caters")]
    names += [f"{n}_para{t:02d}" for n in names for t in range(1, 11)]
    loaded = get_task_dict(names, manager)
    mp.undo()
    return loaded


@pytest.mark.parametrize("dataset", ["summeval", "noveleval", "caters"])
def test_ten_distinct_paraphrases_and_the_first_is_the_default(tasks, dataset):
    default = tasks[f"logic_consistency_{dataset}"].extra_config["prompts"]
    prompts = [tasks[f"logic_consistency_{dataset}_para{t:02d}"].extra_config["prompts"] for t in range(1, 11)]
    assert prompts[0] == default
    for variant in ("normal", "negated"):
        assert len({p[variant] for p in prompts}) == 10
    for p in prompts:
        # same fields in every paraphrase, and the negated question differs from the normal one
        # CaTeRS lists the kept events (items), the other datasets show their context
        listing = "{{ items" if dataset == "caters" else "{{ context }}"
        for field in (listing, "{{ item_a }}", "{{ item_b }}", "{{ answer_instruction }}"):
            assert field in p["normal"] and field in p["negated"]
        assert p["normal"] != p["negated"]
    # the recorded config names the template and holds only the prompts used
    record = tasks[f"logic_consistency_{dataset}_para07"].config.metadata["prompt_config"]
    assert record["template_id"] == 7 and "paraphrases" not in record


def test_bad_template_id_is_an_error(tmp_path):
    from logic_consistency.tasks.pairwise.options import PairwiseOptions

    config = {
        "paraphrases": [{"normal": "x {{ item_a }}"}],
        "template_id": 2,
        "answer_instructions": {"direct": "A or B"},
    }
    with pytest.raises(ValueError, match="template_id must be an integer in 1..1"):
        PairwiseOptions.from_config(config, {}, task="t")
    with pytest.raises(ValueError, match="paraphrases"):
        PairwiseOptions.from_config({**config, "paraphrases": None}, {}, task="t")
