"""The layering rule of the README's "Repository layout" section, checked on every module's imports.

Folders are layers and imports run one way::

    common, credentials, outputs, options (neutral helpers) ; metrics (pure) <- harness_ext <- tasks <- leaderboard <- cli

* ``logic_consistency.common``, ``logic_consistency.credentials``, ``logic_consistency.secret_forms``,
  ``logic_consistency.outputs`` and ``logic_consistency.options`` (neutral helpers) and ``metrics`` import nothing of the suite (``metrics`` not even ``common``: it is a pure library of
  array functions), except that ``outputs`` (the one writer) uses ``credentials`` to redact secrets,
  and ``credentials`` uses ``secret_forms`` (what a secret is, its echoed forms).
* ``harness_ext`` (generic lm-eval machinery) imports the neutral helpers and ``metrics`` only: it
  knows no dataset and no task family.
* ``tasks`` imports the neutral helpers, ``metrics`` and ``harness_ext``.
* ``leaderboard`` reads results and samples files; it imports the neutral helpers, ``metrics``,
  ``harness_ext`` but its improve wing (``harness_ext.training``: the board stands apart from the studies)
  and, of ``tasks``, only the family-neutral report registry ``tasks.reports``.
* ``cli`` (the console entry point, one module per command) sits on top and may import every layer;
  nothing imports it, but a module's ``if __name__ == "__main__":`` block (its ``python -m`` entry,
  never run on import) may hand over to it.

Inside ``leaderboard``, three rooms run one way too: ``board`` (the document: schema, ingest, merge,
...) <- ``page`` (the web page, which draws and validates board documents) <- ``run`` (the nightly
build). A room imports its own and lower rooms only; ``leaderboard/commands.py`` (the commands'
functions) sits above the three, and every other module of ``leaderboard`` lies in a room.

Inside ``harness_ext``, every module lies in a room (a sub-package by concern) but the autoload hook
(where the ``.pth`` line imports it) and the table of lm-eval hooks, which sit above every room. The
rooms run one way too, lowest first: ``jobs`` (every child process and the Ray session, shared by
the board and the improve studies; it imports no other room) <- ``models`` (the embedded models, the
declared ``--model_args``, an adapter's weights) <- ``chat`` (``lc-chat``) <- ``prefix`` (``lc-hf``,
``lc-embedded``) <- ``backends`` (the registry of the backends' declarations) <- ``task`` (task classes, the run in progress, loading tasks) <- ``shards`` <-
``plan`` (the cost plan) <- ``publish`` (direct runs that publish by declaration) <- ``training``
(the improve wing). A room imports its own and lower rooms only, so no arrow runs back up and no
loop between rooms can return.

Inside ``tasks``, a family (a sub-package other than ``data``: ``pairwise``, ``gv``, ``causal``)
imports no other family; what families share lives in neutral ``tasks`` modules (``tasks.answers``,
``tasks.reports``, the loaders in ``tasks.data``), which import no family.

The test parses each module with :mod:`ast` (absolute and relative imports, also those inside
functions), so it also catches imports a test run would never execute. Imports in disguise count
too: a string constant that is a suite module name (``importlib.import_module("logic_consistency.x")``,
a table of module names, a ``"module:Class"`` target, the leading constant part of an f-string or
its ``{__package__}``), the module a subprocess runs with ``-m``, and every task YAML's
``!function`` targets (held to the rule of the folder the YAML sits in).
"""

from __future__ import annotations

import ast
import graphlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "logic_consistency"
LAYER_FOLDERS = ("metrics", "harness_ext", "tasks", "leaderboard", "cli")

#: The neutral helpers every layer but ``metrics`` may import.
NEUTRAL = ("common", "credentials", "secret_forms", "outputs", "options")
#: layer -> the suite modules (prefixes) it may import, besides itself.
ALLOWED: dict[str, tuple[str, ...]] = {
    "root": (),  # logic_consistency/__init__.py
    "common": (),
    "credentials": ("secret_forms",),  # what a secret is and its echoed forms
    "secret_forms": (),
    "outputs": ("credentials",),  # the one writer redacts key environment variables' values
    "options": (),
    "metrics": (),
    "harness_ext": (*NEUTRAL, "metrics", "root"),
    "tasks": (*NEUTRAL, "metrics", "harness_ext", "root"),
    "leaderboard": (*NEUTRAL, "metrics", "harness_ext", "tasks.reports", "root"),
    "cli": (*NEUTRAL, "metrics", "harness_ext", "tasks", "leaderboard", "root"),
}
#: layer -> the suite modules (prefixes) it may not import though :data:`ALLOWED` names their layer.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "leaderboard": ("harness_ext.training",),  # the board knows nothing of the improve wing (issue 56)
}


#: The rooms of ``leaderboard``, lowest first: a room imports only its own and lower rooms.
LEADERBOARD_ROOMS = ("board", "page", "run")
#: The modules of ``leaderboard`` outside its rooms, above all three (nothing in a room imports them).
LEADERBOARD_TOP = ("", "commands")


#: The rooms of ``harness_ext``, lowest first (see the module docstring): a room imports only its own
#: and lower rooms.
HARNESS_ROOMS = ("jobs", "models", "chat", "prefix", "backends", "task", "shards", "plan", "publish", "training")
#: The modules of ``harness_ext`` outside its rooms: the package, the autoload hook the ``.pth`` line
#: imports (``harness_ext/logic_consistency_autoload.pth``) and the table of lm-eval hooks.
HARNESS_TOP = ("", "autoload", "lm_eval_hooks")
#: Rooms of ``harness_ext`` that import no other room (what the board and the study both stand on).
HARNESS_SELF_CONTAINED = ("jobs",)


def _modules() -> list[tuple[str, Path]]:
    out = [
        (f"{PACKAGE}", ROOT / "__init__.py"),
        (f"{PACKAGE}.common", ROOT / "common.py"),
        (f"{PACKAGE}.credentials", ROOT / "credentials.py"),
        (f"{PACKAGE}.secret_forms", ROOT / "secret_forms.py"),
        (f"{PACKAGE}.outputs", ROOT / "outputs.py"),
        (f"{PACKAGE}.options", ROOT / "options.py"),
    ]
    for folder in LAYER_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out.append((".".join([PACKAGE, *parts]), path))
    return out


def _layer(module: str) -> str:
    """``logic_consistency.tasks.gv.common`` -> ``tasks``; the package itself -> ``root``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "root"


def _is_main_block(statement: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` at module level: the ``python -m`` entry, never run on import."""
    test = statement.test if isinstance(statement, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def _suite_imports(module: str, path: Path, *, with_strings: bool = True, main_block: bool = False) -> set[str]:
    """Every ``logic_consistency.*`` module ``path`` imports, relative imports resolved (``with_strings``:
    also the modules named in strings, :func:`_string_imports`); those of its ``__main__`` block apart
    (``main_block``: only those)."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    source = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    tree = ast.Module(body=[s for s in source.body if _is_main_block(s) == main_block], type_ignores=[])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # ``from logic_consistency import tasks`` imports the sub-package ``tasks``; a name that
            # is not a module (``from ..outputs import atomic_write``) lands in the same layer.
            found.update(f"{target}.{alias.name}" for alias in node.names if alias.name != "*")
            found.add(target)
    if with_strings:
        found.update(_string_imports(tree, package))
    return {name for name in found if name == PACKAGE or name.startswith(f"{PACKAGE}.")}


#: A dotted suite module name; the bare package name is left out (it is also the suite's logger name).
#: ``module:attribute`` (an entry-point style target, as lm-eval's model registry takes) names the module.
_MODULE_NAME = re.compile(rf"(?P<module>{PACKAGE}(?:\.\w+)+)(?::\w+(?:\.\w+)*)?")


def _fstring_module(node: ast.JoinedStr, package: str) -> str | None:
    """The constant leading part of an f-string module name: ``f"logic_consistency.tasks.data.{name}"``
    names ``logic_consistency.tasks.data``, ``f"{__package__}.{family}.{name}"`` the module's own package."""
    head = node.values[0]
    if isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value.startswith(f"{PACKAGE}."):
        return head.value.rstrip(".")
    if isinstance(head, ast.FormattedValue) and isinstance(head.value, ast.Name) and head.value.id == "__package__":
        rest = node.values[1] if len(node.values) > 1 else None
        if rest is None or (isinstance(rest, ast.Constant) and str(rest.value).startswith(".")):
            return package
    return None


def _string_imports(tree: ast.AST, package: str) -> set[str]:
    """Suite modules named in strings: whole-string module names (also ``module:Class``), f-string
    prefixes (also ``{__package__}``), ``-m`` targets."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = _MODULE_NAME.fullmatch(node.value)
            if match:  # "logic_consistency.tasks.causal.report", also after "-m", or "...models:EmbeddedHFLM"
                found.add(match["module"])
        elif isinstance(node, ast.JoinedStr) and node.values:
            module = _fstring_module(node, package)
            if module:
                found.add(module)
        elif isinstance(node, (ast.List, ast.Tuple)):
            items = node.elts
            for flag, target in zip(items, items[1:]):
                if isinstance(flag, ast.Constant) and flag.value == "-m" and isinstance(target, ast.Constant):
                    found.add(str(target.value))
    return found


#: lm-eval's YAML tag for a Python hook: ``!function logic_consistency.tasks.gv.arithmetic.load``.
_YAML_FUNCTION = re.compile(rf"!function\s+({PACKAGE}(?:\.\w+)+)")


#: ``tasks/_variants_yaml`` is not a task file: it is the source from which
#: ``scripts/generate_task_configs.py`` writes each family's variant YAML, so it names every family's
#: hooks; the generated files, in their family folders, are held to the rule.
_GENERATOR_SOURCES = {ROOT / "tasks" / "_variants_yaml"}


def _yaml_files() -> list[tuple[str, Path]]:
    """Every task YAML (indexed ``*.yaml`` and un-indexed ``_*_yaml``), named as the module it sits beside."""
    paths = sorted({*(ROOT / "tasks").rglob("*.yaml"), *(ROOT / "tasks").rglob("_*_yaml")} - _GENERATOR_SOURCES)
    return [(".".join([PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]), path) for path in paths]


def _yaml_imports(path: Path) -> set[str]:
    """The modules of a YAML file's ``!function`` targets (the target minus its last name)."""
    return {target.rpartition(".")[0] for target in _YAML_FUNCTION.findall(path.read_text(encoding="utf-8"))}


def _family(module: str) -> str | None:
    """``logic_consistency.tasks.gv.common`` -> ``gv``; neutral task modules and other layers -> None.

    A family is a sub-package (folder) of ``tasks`` other than ``data``; ``tasks.answers`` and
    ``tasks.reports`` (modules, and names inside them) are neutral.
    """
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] == "tasks" and parts[2] != "data" and (ROOT / "tasks" / parts[2]).is_dir():
        return parts[2]
    return None


def _room_rank(module: str) -> int:
    """The rank of a ``leaderboard`` module's room (:data:`LEADERBOARD_ROOMS`); above them all for
    ``leaderboard`` itself and :data:`LEADERBOARD_TOP`."""
    parts = module.split(".")
    room = parts[2] if len(parts) > 2 else ""
    return LEADERBOARD_ROOMS.index(room) if room in LEADERBOARD_ROOMS else len(LEADERBOARD_ROOMS)


def _harness_rank(module: str) -> int:
    """The rank of a ``harness_ext`` module's room (:data:`HARNESS_ROOMS`); above them all for the
    modules of :data:`HARNESS_TOP` (the package itself ranks lowest: it holds nothing but its docstring)."""
    parts = module.split(".")
    if len(parts) == 2:
        return -1
    room = parts[2]
    return HARNESS_ROOMS.index(room) if room in HARNESS_ROOMS else len(HARNESS_ROOMS)


def _allowed(importer: str, imported: str) -> bool:
    layer, target_layer = _layer(importer), _layer(imported)
    if target_layer == layer:
        if layer == "tasks":  # a family imports only itself and neutral task modules
            target_family = _family(imported)
            return target_family is None or target_family == _family(importer)
        if layer == "leaderboard":  # a room imports its own and lower rooms
            return _room_rank(imported) <= _room_rank(importer)
        if layer == "harness_ext":  # the same rule for harness_ext's rooms
            return _harness_rank(imported) <= _harness_rank(importer)
        return True
    if imported == PACKAGE or imported == f"{PACKAGE}.__version__":  # only the version lives there
        return "root" in ALLOWED[layer]
    relative = imported[len(PACKAGE) + 1 :]

    def under(prefixes: tuple[str, ...]) -> bool:
        return any(relative == prefix or relative.startswith(f"{prefix}.") for prefix in prefixes)

    return under(ALLOWED[layer]) and not under(FORBIDDEN.get(layer, ()))


MODULES = _modules()
YAML_FILES = _yaml_files()


def test_every_layer_is_scanned() -> None:
    layers = {_layer(module) for module, _ in MODULES}
    assert layers == set(ALLOWED), layers
    assert len(MODULES) > 40


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[module for module, _ in MODULES])
def test_imports_run_one_way(module: str, path: Path) -> None:
    bad = sorted(name for name in _suite_imports(module, path) if not _allowed(module, name))
    assert not bad, f"{path.relative_to(ROOT)} ({_layer(module)}) imports {bad}; see the README's layout rule"


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[module for module, _ in MODULES])
def test_a_main_block_keeps_to_its_layer(module: str, path: Path) -> None:
    """A module's ``if __name__ == "__main__":`` block (its ``python -m`` entry) keeps to its layer: no
    upward import, not even to ``cli`` (issue 31: the last import cycle was such a hand-over)."""
    imports = _suite_imports(module, path, main_block=True)
    bad = sorted(name for name in imports if not _allowed(module, name))
    assert not bad, f"{path.relative_to(ROOT)}: its __main__ block imports {bad}; see the README's layout rule"


def test_the_main_block_is_read_apart(tmp_path: Path) -> None:
    source = tmp_path / "bad.py"
    source.write_text(
        "from logic_consistency.metrics import transitivity\n"
        "if __name__ == '__main__':\n"
        "    from logic_consistency.cli.causal_confusion import main\n"
    )
    assert _suite_imports(f"{PACKAGE}.tasks.x", source) == {f"{PACKAGE}.metrics", f"{PACKAGE}.metrics.transitivity"}
    assert f"{PACKAGE}.cli.causal_confusion" in _suite_imports(f"{PACKAGE}.tasks.x", source, main_block=True)


def test_the_rule_catches_a_backward_import(tmp_path: Path) -> None:
    """The checker itself: a harness_ext module importing a task family is reported."""
    source = tmp_path / "bad.py"
    source.write_text("from logic_consistency.tasks.gv import common\nfrom ..leaderboard import ingest\n")
    imports = _suite_imports(f"{PACKAGE}.harness_ext.bad", source)
    assert {f"{PACKAGE}.tasks.gv.common", f"{PACKAGE}.leaderboard.ingest"} <= imports
    assert not any(_allowed(f"{PACKAGE}.harness_ext.bad", name) for name in imports)
    assert _allowed(f"{PACKAGE}.leaderboard.board.ingest", f"{PACKAGE}.tasks.reports")
    assert not _allowed(f"{PACKAGE}.leaderboard.board.ingest", f"{PACKAGE}.tasks.causal.report")


def test_the_rule_catches_imports_in_disguise(tmp_path: Path) -> None:
    """Module names in strings and ``-m`` targets count, and one family may not import another."""
    source = tmp_path / "bad.py"
    source.write_text(
        "import importlib, subprocess, sys\n"
        "importlib.import_module('logic_consistency.tasks.causal.report')\n"
        "name = 'x'\n"
        "importlib.import_module(f'logic_consistency.leaderboard.{name}')\n"
        "subprocess.run([sys.executable, '-m', 'logic_consistency.cli', 'model-path'])\n"
        "from logic_consistency.tasks.pairwise import task\n"
    )
    imports = _suite_imports(f"{PACKAGE}.tasks.reports", source)
    assert {f"{PACKAGE}.tasks.causal.report", f"{PACKAGE}.leaderboard", f"{PACKAGE}.cli"} <= imports
    assert not _allowed(f"{PACKAGE}.tasks.reports", f"{PACKAGE}.tasks.causal.report")
    assert not _allowed(f"{PACKAGE}.tasks.gv.parsing", f"{PACKAGE}.tasks.pairwise.task")
    assert not _allowed(f"{PACKAGE}.tasks.gv.parsing", f"{PACKAGE}.tasks.pairwise")
    assert _allowed(f"{PACKAGE}.tasks.gv.parsing", f"{PACKAGE}.tasks.answers")
    assert _allowed(f"{PACKAGE}.tasks.causal.hooks", f"{PACKAGE}.tasks.data.delta_causal")
    assert _allowed(f"{PACKAGE}.tasks.gv.common", f"{PACKAGE}.tasks.gv.parsing")
    assert not _allowed(f"{PACKAGE}.leaderboard.run.runner", f"{PACKAGE}.cli")


def test_every_leaderboard_module_lies_in_a_room() -> None:
    """``leaderboard`` holds its rooms and :data:`LEADERBOARD_TOP` only: a new module goes into a room."""
    loose = [
        module
        for module, _ in MODULES
        if _layer(module) == "leaderboard"
        and module.split(".")[2:3] != []
        and module.split(".")[2] not in (*LEADERBOARD_ROOMS, *LEADERBOARD_TOP)
    ]
    assert not loose, f"modules of leaderboard outside its rooms {LEADERBOARD_ROOMS}: {loose}"
    rooms = {
        module.split(".")[2] for module, _ in MODULES if len(module.split(".")) > 3 and _layer(module) == "leaderboard"
    }
    assert rooms == set(LEADERBOARD_ROOMS), rooms


def _harness_room(module: str) -> str:
    """``logic_consistency.harness_ext.chat.judge`` -> ``chat``; a top module -> its own name."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else ""


def test_every_harness_ext_module_lies_in_a_room() -> None:
    """``harness_ext`` holds its rooms and :data:`HARNESS_TOP` only: a new module goes into a room."""
    harness = [(module, path) for module, path in MODULES if _layer(module) == "harness_ext"]
    loose = [m for m, _ in harness if _harness_room(m) not in (*HARNESS_ROOMS, *HARNESS_TOP)]
    assert not loose, f"modules of harness_ext outside its rooms {HARNESS_ROOMS}: {loose}"
    rooms = {_harness_room(m) for m, path in harness if path.parent.name != "harness_ext"}
    assert rooms == set(HARNESS_ROOMS), rooms
    pth = (ROOT / "harness_ext" / "logic_consistency_autoload.pth").read_text(encoding="utf-8")
    assert f"import {PACKAGE}.harness_ext.autoload " in pth and (ROOT / "harness_ext" / "autoload.py").is_file()


@pytest.mark.parametrize("room", HARNESS_SELF_CONTAINED)
def test_a_self_contained_room_imports_no_other(room: str) -> None:
    """``jobs`` (child processes, the Ray session) imports no other room of ``harness_ext``, so the board
    and the improve study share it without pulling in each other's machinery."""
    bad = sorted(
        f"{module} imports {name}"
        for module, path in MODULES
        if _layer(module) == "harness_ext" and _harness_room(module) == room
        for name in _suite_imports(module, path)
        if _layer(name) == "harness_ext" and _harness_room(name) not in ("", room)
    )
    assert not bad, bad


def test_the_room_rule_sees_a_jobs_module_reaching_into_another_room(tmp_path: Path) -> None:
    """The checker itself: a ``jobs`` module importing a ``chat`` module is seen, relative or absolute."""
    source = tmp_path / "bad.py"
    source.write_text("from ..chat.judge import ChatJudgeLM\nfrom .processes import run_logged\n")
    imports = _suite_imports(f"{PACKAGE}.harness_ext.jobs.bad", source)
    rooms = {_harness_room(name) for name in imports if _layer(name) == "harness_ext"}
    assert rooms == {"chat", "jobs"}, imports


def test_the_rule_catches_a_harness_ext_room_importing_upward(tmp_path: Path) -> None:
    """The checker itself: each of the five arrows that once ran back up (issue 47) is refused again,
    and a top module (the autoload hook) may not be imported by a room."""
    he = f"{PACKAGE}.harness_ext"
    back = [
        ("models.args", "chat.choice_reading"),
        ("models.embedded", "prefix.scorer"),
        ("shards.count", "plan.counts"),
        ("task.current_run", "publish.allowlist"),
        ("publish.run", "training.driver"),
        ("plan.counts", "autoload"),
    ]
    for importer, imported in back:
        assert not _allowed(f"{he}.{importer}", f"{he}.{imported}"), (importer, imported)
        assert _allowed(f"{he}.{imported}", f"{he}.{importer}") or imported == "autoload", (imported, importer)
    source = tmp_path / "bad.py"
    source.write_text("from ..chat.judge import ChatJudgeLM\nfrom .args import check_declared\n")
    imports = _suite_imports(f"{he}.models.bad", source)
    assert [name for name in sorted(imports) if not _allowed(f"{he}.models.bad", name)] == [
        f"{he}.chat.judge",
        f"{he}.chat.judge.ChatJudgeLM",
    ]
    assert _allowed(f"{he}.autoload", f"{he}.publish.run") and _allowed(f"{he}.training.study", f"{he}.jobs.processes")


def test_the_harness_ext_rooms_form_no_loop() -> None:
    """Read from the imports themselves: the rooms' graph has no circle, and :data:`HARNESS_ROOMS` is
    one of its orders (so every arrow between rooms runs down)."""
    graph: dict[str, set[str]] = {room: set() for room in HARNESS_ROOMS}
    for module, path in MODULES:
        room = _harness_room(module) if _layer(module) == "harness_ext" else ""
        if room not in HARNESS_ROOMS:
            continue
        for name in _suite_imports(module, path):
            target = _harness_room(name) if _layer(name) == "harness_ext" else ""
            if target in HARNESS_ROOMS and target != room:
                graph[room].add(target)
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        pytest.fail(f"a loop between harness_ext's rooms: {' -> '.join(error.args[1])}")
    up = sorted(
        f"{room} -> {target}"
        for room, targets in graph.items()
        for target in targets
        if HARNESS_ROOMS.index(target) > HARNESS_ROOMS.index(room)
    )
    assert not up, f"arrows running back up {HARNESS_ROOMS}: {up}"
    assert set(order) == set(HARNESS_ROOMS)


def test_the_study_code_is_not_under_the_leaderboard() -> None:
    """The improve wing lives with the training code: nothing under ``leaderboard/`` names a study."""
    names = [module for module, _ in MODULES if _layer(module) == "leaderboard" and "study" in module]
    assert not names, names


def test_the_board_stands_apart_from_the_improve_wing() -> None:
    """The checker itself: ``leaderboard`` may import ``harness_ext``'s rooms (an adapter's provenance from
    ``models``), never ``harness_ext.training``; the improve wing may not import the board either."""
    he = f"{PACKAGE}.harness_ext"
    assert _allowed(f"{PACKAGE}.leaderboard.board.provenance", f"{he}.models.provenance")
    assert not _allowed(f"{PACKAGE}.leaderboard.board.provenance", f"{he}.training.study")
    assert not _allowed(f"{PACKAGE}.leaderboard.run.preflight", f"{he}.training")
    assert not _allowed(f"{he}.training.driver", f"{PACKAGE}.leaderboard.run.executor")


def test_the_rule_catches_a_room_importing_upward(tmp_path: Path) -> None:
    """The checker itself: ``board`` <- ``page`` <- ``run`` <- ``commands``, never the other way."""
    source = tmp_path / "bad.py"
    source.write_text(
        "from ..run.nightly import build\nfrom ..commands import run_build\nfrom .ingest import is_count\n"
    )
    imports = _suite_imports(f"{PACKAGE}.leaderboard.board.schema", source)
    lb = f"{PACKAGE}.leaderboard"
    assert {f"{lb}.run.nightly", f"{lb}.commands", f"{lb}.board.ingest"} <= imports
    assert [name for name in sorted(imports) if not _allowed(f"{lb}.board.schema", name)] == [
        f"{lb}.commands",
        f"{lb}.commands.run_build",
        f"{lb}.run.nightly",
        f"{lb}.run.nightly.build",
    ]
    assert not _allowed(f"{lb}.board.ingest", f"{lb}.page.render")
    assert not _allowed(f"{lb}.page.render", f"{lb}.run.units")
    assert _allowed(f"{lb}.page.render", f"{lb}.board.schema")
    assert _allowed(f"{lb}.run.nightly", f"{lb}.board.merge") and _allowed(f"{lb}.run.nightly", f"{lb}.page.render")
    assert _allowed(f"{lb}.commands", f"{lb}.run.nightly") and not _allowed(f"{lb}.run.nightly", f"{lb}.commands")


@pytest.mark.parametrize(("module", "path"), YAML_FILES, ids=[str(path.relative_to(ROOT)) for _, path in YAML_FILES])
def test_yaml_function_targets_run_one_way(module: str, path: Path) -> None:
    """A task YAML's ``!function`` hooks follow the same rule as the module beside it (a family names no other)."""
    bad = sorted(name for name in _yaml_imports(path) if not _allowed(module, name))
    assert not bad, f"{path.relative_to(ROOT)} names !function targets in {bad}; see the README's layout rule"


def test_yaml_files_are_read() -> None:
    assert len(YAML_FILES) > 50
    assert sum(len(_yaml_imports(path)) for _, path in YAML_FILES) > 20


def test_the_rule_reads_entry_point_strings_package_fstrings_and_yaml(tmp_path: Path) -> None:
    """``module:Class`` strings, ``f"{__package__}..."`` and YAML ``!function`` targets count as imports."""
    source = tmp_path / "bad.py"
    source.write_text(
        "targets = {'x': 'logic_consistency.tasks.gv.arithmetic:Task'}\n"
        "family = 'gv'\n"
        "name = f'{__package__}.{family}'\n"
    )
    imports = _suite_imports(f"{PACKAGE}.harness_ext.bad", source)
    assert {f"{PACKAGE}.tasks.gv.arithmetic", f"{PACKAGE}.harness_ext"} <= imports
    assert not _allowed(f"{PACKAGE}.harness_ext.bad", f"{PACKAGE}.tasks.gv.arithmetic")
    yaml_file = tmp_path / "bad.yaml"
    yaml_file.write_text("process_docs: !function logic_consistency.tasks.gv.arithmetic.load\n")
    assert _yaml_imports(yaml_file) == {f"{PACKAGE}.tasks.gv.arithmetic"}
    assert not _allowed(f"{PACKAGE}.tasks.pairwise.mydata", f"{PACKAGE}.tasks.gv.arithmetic")


def test_no_import_cycle() -> None:
    """The import statements (at module level and inside functions) between the suite's modules form no
    circle; names imported from a module (``from .merge import boards_of``) count as that module."""
    modules = {module for module, _ in MODULES}

    def owner(name: str) -> str | None:  # the longest known module that ``name`` is or lies in
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    # A module's own packages are importing it when it loads (``from . import _graph`` also names the
    # package): the parent relation, not a circle.
    graph = {
        module: {
            target
            for name in _suite_imports(module, path, with_strings=False)
            if (target := owner(name)) and not (module == target or module.startswith(f"{target}."))
        }
        for module, path in MODULES
    }
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        pytest.fail(f"import cycle: {' -> '.join(error.args[1])}")
