"""Every training value the two papers state, beside the declared default it must equal.

The table is written here from the papers' text (quotes and sections), independently of each recipe's
``stated`` (its ``TrainingRecipe``, declared in its family); the tests check the table against the
declarations, and ``stated`` against the table, so a changed default, a dropped or mistyped citation
each fail.
"""

from __future__ import annotations

import pytest

from logic_consistency.tasks.gv.improve_training import long_task_settings
from logic_consistency.tasks.improve_recipes import recipes

# (recipe, key, stated value, section): Liu et al. = the pairwise paper (000_...), Li et al. = GV (002_...)
PAPERS = [
    ("repair", "lr", 5e-5, "Liu et al. App. F"),
    ("repair", "epochs", 2, "Liu et al. App. F"),
    ("repair", "weight_decay", 0.01, "Liu et al. App. F"),
    ("repair", "lora_r", 16, "Liu et al. App. F"),
    ("repair", "lora_alpha", 64, "Liu et al. App. F"),
    ("repair", "batch_size", 4, "Liu et al. App. F"),
    ("repair", "grad_accum", 2, "Liu et al. App. F"),
    ("gv", "lr", 2e-4, "Li et al. §5 Models, App. F"),
    ("gv", "epochs", 3, "Li et al. App. F"),  # arithmetic; 6 for the other tasks (below)
    ("gv", "scheduler", "cosine", "Li et al. App. F"),
    ("gv", "warmup_ratio", 0.03, "Li et al. App. F"),
    ("gv", "effective_batch", 64, "Li et al. §5 Models, App. F"),
    ("gv", "grad_accum", 8, "Li et al. App. F"),
    ("gv", "lora_r", 32, "Li et al. §5 Models, App. F"),
    ("gv", "lora_alpha", 32, "Li et al. App. F"),
]


def _default(recipe: str, key: str) -> object:
    settings = recipes()[recipe].training.settings({}).as_dict()
    if key == "effective_batch":  # one device: per-device batch x accumulation
        return settings["batch_size"] * settings["grad_accum"]
    return settings[key]


@pytest.mark.parametrize(("recipe", "key", "value", "section"), PAPERS, ids=[f"{r}-{k}" for r, k, _, _ in PAPERS])
def test_each_stated_value_is_the_declared_default(recipe: str, key: str, value: object, section: str) -> None:
    assert _default(recipe, key) == value, f"{recipe} {key}: {section} states {value}"


def test_the_declarations_cite_the_same_values_and_sections() -> None:
    stated = [(name, s) for name, recipe in recipes().items() for s in recipe.training.stated]
    cited = [(name, s.key, s.value, s.section) for name, s in stated]
    assert sorted(cited, key=lambda row: row[:2]) == sorted(PAPERS, key=lambda row: row[:2])
    assert all(s.quote for _, s in stated)


def test_the_other_gv_tasks_train_six_epochs() -> None:
    # Li et al. App. F: "we use epoch size of 6 for all other tasks"
    assert long_task_settings(recipes()["gv"].training.settings({}), {}).epochs == 6


def test_every_stated_key_is_a_declared_option() -> None:
    for recipe, key, _, _ in PAPERS:
        names = {arg.name for arg in recipes()[recipe].training.declaration.declared}
        assert key in names or key == "effective_batch", f"{recipe}: {key} is not a --train-args key"
