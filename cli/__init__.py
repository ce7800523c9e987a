"""``logic-consistency``: the console entry point (the top of the layers; it may import every one).

One module per command, each a thin ``argparse`` layer (``add_cli(subparsers)``) over a function of
its family or layer that returns a value or a dataclass: ``tasks_dir``, ``models`` (``models``,
``model-path``), ``export_gv``, ``causal_confusion``, ``repair``, ``correlate``, ``leaderboard``
(``build``, ``ingest``, ``render``, ``validate``), ``plan``, ``check_task`` and ``options``;
``subcommand`` has the command list and the registration helpers, and :mod:`.app` the parser
(:func:`build_parser`, which imports only the module of the command being run) and :func:`main`.
Nothing else in the suite imports this package.
"""

from __future__ import annotations

from .app import OUTPUT_ERROR_STATUS, build_parser, main

__all__ = ["OUTPUT_ERROR_STATUS", "build_parser", "main"]
