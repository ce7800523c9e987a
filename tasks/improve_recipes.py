"""The ``improve`` recipes of the task families, found, not listed: a family's ``improve`` module that
defines ``RECIPE`` (a :class:`~logic_consistency.harness_ext.training.driver.StudyRecipe`), or ``RECIPES``
(several), declares them, so that a third recipe needs no edit here, in the study driver or in the
command line. Each recipe carries its own training (its options' ``training``: its paper's values and
trainer)."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from pathlib import Path

from logic_consistency.harness_ext.training.recipe_api import StudyRecipe

__all__ = ["recipes"]


def recipes() -> dict[str, StudyRecipe]:
    """Every family's recipe, by name, in the order of the families' folders."""
    found: dict[str, StudyRecipe] = {}
    for family in pkgutil.iter_modules([str(Path(__file__).parent)]):
        name = f"{__package__}.{family.name}.improve"
        if not family.ispkg or importlib.util.find_spec(name) is None:
            continue
        module = importlib.import_module(name)
        declared = [getattr(module, "RECIPE", None), *getattr(module, "RECIPES", ())]
        for recipe in declared:
            if isinstance(recipe, StudyRecipe):
                if recipe.name in found:
                    raise ValueError(f"{name}: recipe {recipe.name!r} is already registered")
                found[recipe.name] = recipe
    return found
