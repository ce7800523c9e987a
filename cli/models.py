"""``logic-consistency models`` and ``model-path NAME``: the embedded models.

``models`` lists them (the default marked); ``model-path`` converts one on first use and prints its
folder, for ``--model hf`` or vLLM. Both read :mod:`logic_consistency.harness_ext.models.embedded` (torch and
transformers: this module is imported only when one of them runs).
"""

from __future__ import annotations

import argparse
from typing import Any

from logic_consistency.harness_ext.models.embedded import DEFAULT_MODEL, EMBEDDED_MODELS, resolve

from .subcommand import add_subcommand

__all__ = ["add_cli"]


def _models(_: argparse.Namespace) -> int:
    for name, model in EMBEDDED_MODELS.items():
        marker = " (default)" if name == DEFAULT_MODEL else ""
        print(f"{name}{marker}: {model.description}; package {model.distribution}")
    return 0


def _model_path(args: argparse.Namespace) -> int:
    print(resolve(args.name))
    return 0


def add_cli(subparsers: Any) -> None:
    """Register ``models`` and ``model-path``."""
    add_subcommand(subparsers, "models", None, _models)
    model_path = add_subcommand(subparsers, "model-path", None, _model_path)
    model_path.add_argument("name", help="embedded model name, e.g. smollm2-135m-instruct")
