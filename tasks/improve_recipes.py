"""The ``improve`` recipes of the task families, found, not listed: a family's ``improve`` module that
defines ``RECIPE`` (a :class:`~logic_consistency.harness_ext.training.driver.StudyRecipe`) is one, so
that a third recipe needs no edit here, in the study driver or in the command line."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from pathlib import Path

from logic_consistency.harness_ext.training.driver import StudyRecipe

__all__ = ["recipes"]


def recipes() -> dict[str, StudyRecipe]:
    """Every family's recipe, by name, in the order of the families' folders."""
    found: dict[str, StudyRecipe] = {}
    for family in pkgutil.iter_modules([str(Path(__file__).parent)]):
        name = f"{__package__}.{family.name}.improve"
        if not family.ispkg or importlib.util.find_spec(name) is None:
            continue
        recipe = getattr(importlib.import_module(name), "RECIPE", None)
        if isinstance(recipe, StudyRecipe):
            if recipe.name in found:
                raise ValueError(f"{name}: recipe {recipe.name!r} is already registered")
            found[recipe.name] = recipe
    return found
