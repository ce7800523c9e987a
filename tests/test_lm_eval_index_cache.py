"""The test runs' shared index of lm-eval's built-in tasks (tests/site/sitecustomize.py) is exact: what a
process reads back from the file equals what lm-eval's own ``TaskIndex.build`` makes of the folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lm_eval.tasks import _index

pytestmark = pytest.mark.slow  # indexes lm-eval's ~13,000 task files live (several seconds)


def _plain(index: dict[str, _index.Entry]) -> dict[str, tuple[object, ...]]:
    return {name: (e.name, e.kind, e.yaml_path, e.cfg, e.tags) for name, e in index.items()}


def test_the_cached_built_in_index_equals_a_live_one_and_is_kept_in_its_file(tmp_path: Path) -> None:
    build = _index.TaskIndex.build
    assert getattr(build, "_lc_test_cache", False), "tests/conftest.py did not install the index cache"
    built_in = Path(_index.__file__).resolve().parent
    live = build._lc_live_build([built_in])
    assert len(live) > 1000  # lm-eval's built-in tasks, groups and tags
    build([built_in])  # writes the file if no process of this run has yet
    cache = Path(os.environ["LC_TEST_LM_EVAL_INDEX"])
    assert cache.is_file()
    assert _plain(build([built_in])) == _plain(live)  # read back from the file
    # another folder after the built-in one is indexed live and overrides as in lm-eval
    (tmp_path / "t.yaml").write_text("task: hellaswag\ndataset_path: x\n", encoding="utf-8")
    merged = build([built_in, tmp_path])
    assert merged["hellaswag"].yaml_path == tmp_path / "t.yaml"
    assert _plain({k: v for k, v in merged.items() if k != "hellaswag"}) == _plain(
        {k: v for k, v in live.items() if k != "hellaswag"}
    )
