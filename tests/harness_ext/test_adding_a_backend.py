"""Adding a backend: it declares itself in its own module, and nothing that collects backends names one.

* The count: every module that registers, lists, checks, publishes or pins backends (the autoload hook,
  the hooks table, the allowlist, ``logic-consistency options``, a model list's check, the validator)
  holds no backend's name or target: each comes from the backend's declaration, which sits in the room
  of its class (:func:`test_each_backend_declares_itself_in_its_own_room`). So a new backend touches its
  module, its line in ``backends/registry.py`` ``BUILT_IN`` and docs/backends.md (docs/architecture.md,
  "Routes for adding things").
* A backend from outside the suite, declared in this test (:data:`ECHO_MODULE`: a tiny lm-eval ``LM``
  that answers deterministically, with its own ``--model_args``), is installed the way a user installs
  one (a distribution whose metadata names it under ``logic-consistency.backends``) and, with no edit
  to ``harness_ext/``, is listed, checked (a mistyped argument is refused, naming the closest) and run
  by ``lm_eval`` through the suite's entry, its declared public argument recorded in the results.
"""

from __future__ import annotations

import ast
import glob
import json
import math
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

from logic_consistency.harness_ext.backends import registry
from logic_consistency.harness_ext.backends.registry import (
    BUILT_IN,
    BackendError,
    backends,
    built_in,
    check_model_args,
    first_typo,
)
from logic_consistency.options import OptionError

ROOT = Path(__file__).resolve().parents[2]
#: The console entry point (the suite reports a bad option in one line there; ``python -m lm_eval`` bypasses it).
LM_EVAL = str(Path(sys.executable).parent / "lm_eval")
PACKAGE = "logic_consistency.harness_ext."
#: The modules that collect backends: none of them may name one (its name or its class).
COLLECTORS = (
    "harness_ext/autoload.py",
    "harness_ext/lm_eval_hooks.py",
    "harness_ext/models/args.py",
    "harness_ext/models/backend.py",
    "harness_ext/publish/allowlist.py",
    "harness_ext/publish/run.py",
    "cli/options.py",
    "leaderboard/run/modellist.py",
)


def _room(module: str) -> str:
    """``logic_consistency.harness_ext.chat.judge`` -> ``chat``."""
    return module.removeprefix(PACKAGE).split(".")[0]


def _string_constants(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def test_each_backend_declares_itself_in_its_own_room() -> None:
    """Name, class, arguments and hooks of each of the suite's backends come from one declaration, in the
    room of its class; the collecting modules name no backend; the registry names each once, in ``BUILT_IN``."""
    assert [backend.name for backend in built_in()] == ["lc-chat", "lc-hf", "lc-embedded"]
    for line, backend in zip(BUILT_IN, built_in(), strict=True):
        declared_in = line.partition(":")[0]
        assert _room(declared_in) == _room(backend.module), (line, backend.target)
        assert backend.args.where == f"{backend.name} --model_args"
        for hook in backend.hooks:
            assert hook.by.startswith(f"{_room(backend.module)}."), hook
    named = {backend.name for backend in built_in()} | {backend.target for backend in built_in()}
    for relative in COLLECTORS:
        assert not named & _string_constants(ROOT / relative), f"{relative} names a backend: declare it instead"
    registry_strings = _string_constants(ROOT / "harness_ext" / "backends" / "registry.py")
    assert not named & registry_strings and set(BUILT_IN) <= registry_strings
    page = (ROOT / "docs" / "backends.md").read_text(encoding="utf-8")
    assert all(f"`{backend.name}`" in page for backend in built_in())


def test_reading_the_declarations_loads_no_backend() -> None:
    """The suite's declarations are read without lm-eval or torch (``logic-consistency options``, a model list)."""
    probe = (
        "import sys, json\n"
        "from logic_consistency.harness_ext.backends.registry import built_in\n"
        "built_in()\n"
        "print(json.dumps(sorted(n for n in ('lm_eval', 'torch', 'transformers') if n in sys.modules)))\n"
    )
    done = children.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(done.stdout) == []


#: A backend outside the suite: its class and its declaration in one module (what a user writes).
ECHO_MODULE = '''
"""lc-echo: answers every request from a hash of it (deterministic), a backend from outside the suite."""
import hashlib

from lm_eval.api.model import LM

from logic_consistency.harness_ext.models.args import Declaration
from logic_consistency.harness_ext.models.backend import Backend
from logic_consistency.options import Declared

BACKEND = Backend(
    name="lc-echo",
    target="echo_backend:EchoLM",
    args=Declaration(
        where="lc-echo --model_args",
        declared=(
            Declared("answer_length", int, 1, "characters of each generated answer", 1, 64),
            Declared("salt", str, "", "mixed into every score (a different deterministic model)"),
        ),
    ),
    public=frozenset({"answer_length"}),
)


class EchoLM(LM):
    def __init__(self, answer_length=1, salt="", batch_size=None, max_batch_size=None, device=None):
        super().__init__()
        self.answer_length, self.salt = answer_length, salt

    def _score(self, *parts):
        digest = hashlib.sha256("\\x1f".join((self.salt, *parts)).encode()).digest()
        return -10.0 * int.from_bytes(digest[:4], "big") / 2**32

    def loglikelihood(self, requests):
        return [(self._score(*request.args), False) for request in requests]

    def loglikelihood_rolling(self, requests):
        return [self._score(request.args[0]) for request in requests]

    def generate_until(self, requests):
        return ["A" * self.answer_length for _ in requests]
'''


def install_plugin(folder: Path, *, name: str = "lc-echo", value: str = "echo_backend:BACKEND") -> Path:
    """Install the echo backend as pip would: its module and a distribution naming it in its entry points."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "echo_backend.py").write_text(ECHO_MODULE, encoding="utf-8")
    info = folder / "echo_backend-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-backend\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{registry.ENTRY_POINT_GROUP}]\n{name} = {value}\n", encoding="utf-8")
    return folder


@pytest.fixture
def plugged_in(tmp_path: Path) -> Iterator[Path]:
    """The echo backend installed on ``sys.path`` of this process, the registry read afresh around it."""
    folder = install_plugin(tmp_path / "site")
    sys.path.insert(0, str(folder))
    registry.backends.cache_clear()
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("echo_backend", None)
        registry.backends.cache_clear()


def test_an_installed_backend_is_listed_checked_and_published(plugged_in: Path) -> None:
    from logic_consistency.cli.options import declarations
    from logic_consistency.harness_ext.publish.allowlist import public_model_args

    assert backends()["lc-echo"].target == "echo_backend:EchoLM"
    assert ("lc-echo --model_args", "answer_length") in {(where, arg.name) for where, arg in declarations()}
    with pytest.raises(
        OptionError, match=r"lc-echo --model_args: unknown argument 'answer_lenght'; did you mean 'answer_length'"
    ):
        check_model_args("lc-echo", "answer_lenght=3")
    with pytest.raises(OptionError, match="answer_length must be at most 64"):
        check_model_args("lc-echo", {"answer_length": 65})
    check_model_args("lc-echo", "answer_length=3,salt=x")
    assert first_typo("lc-echo", "salt=x,answer_lenght=3") == ("answer_lenght", "answer_length")  # a model list's check
    assert public_model_args("lc-echo", "answer_length=3,salt=x").value == "answer_length=3"


def test_a_plugin_entry_point_that_misnames_its_backend_is_named(tmp_path: Path) -> None:
    folder = install_plugin(tmp_path / "site", name="lc-echoo")
    sys.path.insert(0, str(folder))
    registry.backends.cache_clear()
    try:
        with pytest.raises(
            BackendError, match=r"entry point lc-echoo = echo_backend:BACKEND .*'lc-echoo', its Backend 'lc-echo'"
        ):
            backends()
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("echo_backend", None)
        registry.backends.cache_clear()


def _pairwise_yaml(folder: Path) -> Path:
    """A small pairwise task on the test fixtures (as in tests/tasks/pairwise/test_yaml_only_dataset.py)."""
    from logic_consistency.harness_ext.autoload import tasks_dir

    data = ROOT / "tests" / "fixtures" / "data" / "tiny_pairwise" / "instances.jsonl"
    folder.mkdir(parents=True)
    (folder / "tiny_echo.yaml").write_text(
        textwrap.dedent(f"""\
        include: {tasks_dir() / "pairwise" / "_pairwise_yaml"}
        task: logic_consistency_tiny_echo
        dataset_path: json
        dataset_kwargs:
          data_files: {{test: {data}}}
        fields: {{instance_id: id, context: question, items: candidates, human_scores: scores}}
        prompts:
          normal: "{{{{ context }}}}\\nA: {{{{ item_a }}}}\\nB: {{{{ item_b }}}}\\nWhich is larger? {{{{ answer_instruction }}}}"
          negated: "{{{{ context }}}}\\nA: {{{{ item_a }}}}\\nB: {{{{ item_b }}}}\\nWhich is smaller? {{{{ answer_instruction }}}}"
        """),
        encoding="utf-8",
    )
    return folder


@pytest.mark.slow
def test_lm_eval_runs_an_installed_backend_and_refuses_its_mistyped_argument(tmp_path: Path) -> None:
    site = install_plugin(tmp_path / "site")
    tasks = _pairwise_yaml(tmp_path / "tasks")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH")) if p)
    env.pop("LOGIC_CONSISTENCY_DATA", None)

    def lm_eval(model_args: str, out: Path) -> Any:
        command = [LM_EVAL, "--model", "lc-echo", "--model_args", model_args,
                   "--tasks", "logic_consistency_tiny_echo", "--include_path", str(tasks), "--output_path", str(out)]  # fmt: skip
        return children.run(command, env=env, capture_output=True, text=True, timeout=600)

    refused = lm_eval("answer_lenght=3", tmp_path / "refused")
    assert refused.returncode == 2, refused.stderr[-3000:]
    assert "lc-echo --model_args: unknown argument 'answer_lenght'; did you mean 'answer_length'?" in refused.stderr
    assert not (tmp_path / "refused").exists()

    done = lm_eval("answer_length=3,salt=one", tmp_path / "results")
    assert done.returncode == 0, done.stderr[-3000:]
    (results_file,) = glob.glob(str(tmp_path / "results" / "**" / "results_*.json"), recursive=True)
    document = json.loads(Path(results_file).read_text(encoding="utf-8"))
    assert document["config"]["model"] == "lc-echo"
    assert document["config"]["model_args"] == {"answer_length": 3}  # its declared public argument only (no salt)
    results = document["results"]["logic_consistency_tiny_echo"]
    for metric in ("s_tran_3,none", "s_comm,none", "s_neg,none", "human_agreement,none"):
        assert 0.0 <= results[metric] <= 1.0 and not math.isnan(results[metric]), metric
