"""Test runs only: every Python process of a pytest run reads lm-eval's own task index from one file.

Why: each ``lm_eval`` (and ``TaskManager()``) parses the ~13,000 YAML files of lm-eval's built-in
tasks before it does anything (about 7 s on 2 cores), and a test run starts hundreds of them. The
built-in tasks cannot change during a run, so the first process to index them writes the result to
the file named by ``LC_TEST_LM_EVAL_INDEX`` (JSON, written whole or not at all), and every later one
reads it back. The suite's own folder and every ``--include_path`` are still indexed live, and the
entries are merged as lm-eval merges them (a later folder overrides, with lm-eval's warning).

tests/conftest.py sets the variable for the run and puts this folder on ``PYTHONPATH``, so child
processes (``lm_eval``, ``logic-consistency``, Ray workers) load this module at start-up; it only
registers an import hook, and reads nothing until lm-eval's ``tasks._index`` module is imported.
A built-in index that JSON cannot hold exactly is not cached (each process indexes it, as without
this module). ``tests/test_lm_eval_index_cache.py`` checks that the cached index equals a live one.
"""

from __future__ import annotations

import importlib.abc
import json
import os
import sys
from pathlib import Path
from typing import Any

ENV = "LC_TEST_LM_EVAL_INDEX"
_MODULE = "lm_eval.tasks._index"


def _encode(index: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": e.name,
            "kind": e.kind.name,
            "yaml_path": None if e.yaml_path is None else str(e.yaml_path),
            "cfg": e.cfg,
            "tags": sorted(e.tags),
        }
        for e in index.values()
    ]


def _decode(module: Any, records: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        r["name"]: module.Entry(
            name=r["name"],
            kind=module.Kind[r["kind"]],
            yaml_path=None if r["yaml_path"] is None else Path(r["yaml_path"]),
            cfg=r["cfg"],
            tags=set(r["tags"]),
        )
        for r in records
    }


def _built_in_index(module: Any, build: Any, root: Path, cache: Path) -> dict[str, Any]:
    try:
        return _decode(module, json.loads(cache.read_bytes()))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    index = build([root])
    records = _encode(index)
    try:
        text = json.dumps(records)
        exact = json.loads(text) == records
    except (TypeError, ValueError):
        exact = False
    if exact:
        staging = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        staging.write_text(text, encoding="utf-8")
        os.replace(staging, cache)
    return index


def patch(module: Any) -> None:
    """Wrap ``TaskIndex.build`` of lm-eval's ``tasks._index`` module (idempotent)."""
    task_index = module.TaskIndex
    if getattr(task_index.build, "_lc_test_cache", False):
        return
    build = task_index.build
    cache = Path(os.environ[ENV])
    built_in = (Path(module.__file__).resolve().parent).resolve()

    def cached_build(paths: Any, *, resolve_includes: bool = True) -> dict[str, Any]:
        roots = [Path(p) for p in paths]
        if not resolve_includes or built_in not in {r.resolve() for r in roots}:
            return build(roots, resolve_includes=resolve_includes)
        index: dict[str, Any] = {}
        for root in roots:  # lm-eval's own merge: a later folder overrides an earlier one
            part = _built_in_index(module, build, root, cache) if root.resolve() == built_in else build([root])
            for name, entry in part.items():
                if name in index:
                    module.log.warning(
                        "Task '%s' from %s overrides existing task from %s",
                        name,
                        entry.yaml_path,
                        index[name].yaml_path,
                    )
                index[name] = entry
        return index

    cached_build._lc_test_cache = True  # type: ignore[attr-defined]
    cached_build._lc_live_build = build  # type: ignore[attr-defined] - for the test of the cache
    task_index.build = staticmethod(cached_build)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Patches lm-eval's ``tasks._index`` right after it is imported (importing nothing itself)."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != _MODULE:
            return None
        for finder in sys.meta_path:
            if type(finder).__name__ == "_AfterImport" or not hasattr(finder, "find_spec"):
                continue  # this hook, also as loaded a second time under another module name
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                real = spec.loader.exec_module

                def exec_module(mod: Any, real: Any = real) -> None:
                    real(mod)
                    patch(mod)

                spec.loader.exec_module = exec_module  # type: ignore[method-assign]
                return spec
        return None


def install() -> None:
    """Patch lm-eval now if it is imported, else when it is (only where ``LC_TEST_LM_EVAL_INDEX`` is set)."""
    if not os.environ.get(ENV):
        return
    if _MODULE in sys.modules:
        patch(sys.modules[_MODULE])
    elif not any(type(finder).__name__ == "_AfterImport" for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())


install()
