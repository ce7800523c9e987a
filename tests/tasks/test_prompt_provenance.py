"""Every prompt template in ``tasks/`` says where it comes from: verbatim from a paper (figure /
table named) or the suite's own. A template file without a ``Provenance:`` comment fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

TASKS = Path(__file__).resolve().parents[2] / "tasks"
#: YAML keys that define prompts (inline text or a ``!function`` hook).
PROMPT_KEY = re.compile(r"^\s*(?:prompts|answer_instructions|doc_to_text|doc_to_choice)\s*:", re.MULTILINE)
PROVENANCE_LINE = re.compile(r"^\s*#:?\s*Provenance:\s*\S", re.MULTILINE)
#: Module-level names that hold prompt text in tasks/*.py.
TEMPLATE_NAME = re.compile(r"TEMPLATE|EXAMPLE|^COT_|^FORMS")
#: A provenance statement has to say one of these.
SOURCE = re.compile(r"verbatim|suite's own|Table \d+|Figure \d+|Appendix [A-Z]", re.IGNORECASE)


def yaml_files() -> list[Path]:
    return sorted(p for p in TASKS.rglob("*") if p.is_file() and (p.suffix == ".yaml" or p.name.endswith("_yaml")))


def prompt_yaml_files() -> list[Path]:
    return [p for p in yaml_files() if PROMPT_KEY.search(p.read_text(encoding="utf-8"))]


def template_constants() -> list[tuple[Path, str, int]]:
    """(file, name, line) of every module-level assignment to a template-like name with text in it."""
    found = []
    for path in sorted(TASKS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            names = [t.id for t in targets if isinstance(t, ast.Name) and TEMPLATE_NAME.search(t.id)]
            texts = [n for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str) and " " in n.value]
            if names and texts:
                found.extend((path, name, node.lineno) for name in names)
    return found


def test_the_scan_finds_the_templates() -> None:
    """Guards the guard: the patterns above still see the suite's prompt files and constants."""
    names = {p.relative_to(TASKS).as_posix() for p in prompt_yaml_files()}
    assert {"pairwise/summeval/_summeval_yaml", "pairwise/_pairwise_yaml", "gv/arithmetic_cot.yaml"} <= names
    constants = {(p.name, name) for p, name, _ in template_constants()}
    assert {("arithmetic.py", "COT_VALIDATOR_TEMPLATE"), ("prompts.py", "RANKING_TEMPLATE"),
            ("triviaqa.py", "TRUE_FALSE_VALIDATOR_TEMPLATE"), ("harmful.py", "GENERATOR_TEMPLATES")} <= constants  # fmt: skip


@pytest.mark.parametrize("path", prompt_yaml_files(), ids=lambda p: p.relative_to(TASKS).as_posix())
def test_every_prompt_yaml_states_its_provenance(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    match = PROVENANCE_LINE.search(text)
    assert match, f"{path}: defines prompts but has no '# Provenance:' comment"
    statement = "\n".join(line for line in text[match.start():].splitlines()[:4] if line.lstrip().startswith("#"))
    assert SOURCE.search(statement) or "tasks/" in statement, f"{path}: provenance names no source: {statement!r}"


@pytest.mark.parametrize(
    ("path", "name", "line"), template_constants(), ids=lambda v: v if isinstance(v, str) else getattr(v, "name", str(v))
)
def test_every_template_constant_has_a_provenance_comment_above_it(path: Path, name: str, line: int) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    block = []
    index = line - 2  # the line above the assignment (0-based)
    while index >= 0 and lines[index].lstrip().startswith("#"):
        block.append(lines[index])
        index -= 1
    comment = "\n".join(reversed(block))
    assert "Provenance:" in comment, f"{path}:{line}: {name} has no '# Provenance:' comment directly above it"
    assert SOURCE.search(comment), f"{path}:{line}: {name}'s provenance names no source: {comment!r}"


def test_a_file_without_provenance_fails(tmp_path: Path) -> None:
    """The check itself: a prompt YAML without the comment is caught."""
    bad = tmp_path / "_bad_yaml"
    bad.write_text("# A task.\nprompts:\n  normal: 'Which is better?'\n", encoding="utf-8")
    assert PROMPT_KEY.search(bad.read_text()) and not PROVENANCE_LINE.search(bad.read_text())
