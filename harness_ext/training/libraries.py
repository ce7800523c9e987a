"""The ``train`` extra's libraries, imported only when a training runs, with one error when missing."""

from __future__ import annotations

import importlib
import importlib.metadata
from types import ModuleType

__all__ = ["INSTALL_LINE", "TrainingUnavailable", "library_versions", "training_libraries"]

#: What to run when the extra is missing (the pins are setup.cfg's ``train`` extra), from a clone: no
#: index has the package yet.
INSTALL_LINE = (
    "bash scripts/setup.sh train (from a clone of logic-consistency; in another environment: "
    "pip install -e '.[train]' from the clone)"
)
#: The distributions whose versions every adapter manifest records.
RECORDED = ("torch", "transformers", "peft", "trl", "accelerate", "lm_eval")


class TrainingUnavailable(RuntimeError):
    """The ``train`` extra is not installed (the message is the install line)."""


def training_libraries() -> tuple[ModuleType, ModuleType, ModuleType]:
    """``(peft, transformers, trl)``, imported now; accelerate is checked too (the Trainer needs it).

    Raises:
        TrainingUnavailable: One of them is missing, naming it and :data:`INSTALL_LINE`.
    """
    modules = []
    for name in ("peft", "transformers", "trl", "accelerate"):
        try:
            modules.append(importlib.import_module(name))
        except ImportError as error:
            raise TrainingUnavailable(
                f"training needs the 'train' extra ({name} is missing: {error}); install it with: {INSTALL_LINE}"
            ) from None
    return modules[0], modules[1], modules[2]


def library_versions() -> dict[str, str | None]:
    """The installed version of each recorded distribution (``None``: not installed)."""
    versions: dict[str, str | None] = {}
    for name in RECORDED:
        try:
            versions[name] = importlib.metadata.version(name.replace("_", "-"))
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions
