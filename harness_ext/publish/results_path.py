"""The results path an ``lm_eval`` run will write, checked before the run starts.

lm-eval writes ``OUTPUT_PATH/<model>/results_<timestamp>.json`` (or, for an ``--output_path`` that
ends in ``.json``, ``<stem>_<timestamp>.json`` beside it) and, with ``--log_samples``, a
``samples_<task>_<timestamp>.jsonl`` per task, only once every model call is done; a path the file
system cannot hold then only logs a warning and the run ends with exit status 0 and no results file.
:func:`check_results_path` refuses such an ``--output_path`` first, naming it and the limit.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from logic_consistency.options import OptionError

__all__ = ["check_results_path"]

#: A timestamp as lm-eval writes it into the file names (``datetime.isoformat`` with ``-`` for ``:``).
_STAMP = "2026-01-01T00-00-00.000000"
#: POSIX's smallest limits, used when the file system does not say.
_NAME_MAX, _PATH_MAX = 255, 4096


def _limits(path: Path) -> tuple[int, int]:
    """``(NAME_MAX, PATH_MAX)`` of the file system of the deepest folder of ``path`` that exists."""
    existing = path
    while not os.path.exists(existing) and existing != existing.parent:  # False for a name too long, too
        existing = existing.parent
    try:
        return os.pathconf(existing, "PC_NAME_MAX"), os.pathconf(existing, "PC_PATH_MAX")
    except (OSError, ValueError):  # no pathconf here (or this file system gives no answer)
        return _NAME_MAX, _PATH_MAX


def _files(output: Path, tasks: Iterable[str], log_samples: bool) -> list[Path]:
    if output.suffix == ".json":  # lm-eval: <stem>_<stamp>.json and samples beside it
        folder, results = output.parent, output.with_name(f"{output.stem}_{_STAMP}.json")
    else:  # the model's folder is at least one character long
        folder = output / "m"
        results = folder / f"results_{_STAMP}.json"
    samples = [folder / f"samples_{task}_{_STAMP}.jsonl" for task in tasks] if log_samples else []
    return [results, *samples]


def _shown(path: str) -> str:
    return repr(path) if len(path) <= 80 else f"{path[:40]!r}...{path[-20:]!r} ({len(path)} characters)"


def check_results_path(
    output_path: str | os.PathLike[str] | None, *, tasks: Iterable[str] = (), log_samples: bool = False
) -> None:
    """Refuse an ``--output_path`` whose results (or samples) files the file system cannot hold.

    Raises:
        OptionError: Naming ``--output_path`` (shortened), the name or path that is too long and the limit.
    """
    if not output_path:
        return
    given = os.fspath(output_path)
    output = Path(given).absolute()
    name_max, path_max = _limits(output)
    for file in _files(output, tasks, log_samples):
        for part in file.parts:
            if len(os.fsencode(part)) > name_max:
                raise OptionError(
                    f"--output_path {_shown(given)}: lm-eval would write {_shown(str(file))}, whose name "
                    f"{_shown(part)} is longer than the {name_max} bytes the file system allows; choose a shorter path"
                )
        if len(os.fsencode(str(file))) >= path_max:
            raise OptionError(
                f"--output_path {_shown(given)}: lm-eval would write {_shown(str(file))}, a path longer than the "
                f"{path_max - 1} bytes the file system allows; choose a shorter path"
            )
