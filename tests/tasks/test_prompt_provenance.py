"""Every prompt template in ``tasks/`` says where it comes from: verbatim from a paper (figure /
table named) or the suite's own. A template file without a ``Provenance:`` comment fails here.

Task YAML is parsed and every key is classified: a key that carries prompt text (or a hook that
returns it) is in :data:`PROMPT_KEYS`, every other key in :data:`OTHER_KEYS`; a key in neither fails
``test_every_yaml_key_is_classified``, so a new prompt-bearing key cannot slip past the scan.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

TASKS = Path(__file__).resolve().parents[2] / "tasks"
#: Keys whose value is prompt text or a ``!function`` that returns it: lm-eval's (``doc_to_text``,
#: ``doc_to_choice``, ``description``, ``gen_prefix``, ``fewshot_config``), the pairwise task's
#: (``prompts``, ``paraphrases``, ``answer_instructions`` incl. the CoT instruction, ``choices``)
#: and the multi-stage tasks' ``stages[].prompts``.
PROMPT_KEYS = frozenset(
    {
        "doc_to_text",
        "doc_to_choice",
        "description",
        "gen_prefix",
        "fewshot_config",
        "prompts",
        "paraphrases",
        "answer_instructions",
        "choices",
        "pairwise_paraphrases",
        "conjunctions",  # tasks/_variants_yaml: the source of the generated variant tasks
        "gv_stages",  # tasks/_variants_yaml: the GV task files' stages, naming their prompt hooks
    }
)
#: Keys that hold no prompt text. Values under the first group are options or lists of metrics and
#: are not walked; ``negation`` and ``prompt_style`` pick one of the prompts defined elsewhere.
OPAQUE_KEYS = frozenset(
    {
        "metadata",
        "options",  # _options_yaml: the declarations of run options (choices there are option values)
        "generation_kwargs",
        "dataset_kwargs",
        "aggregate_metric_list",
        "metrics",
        "metric_list",
        "filter_list",
        "copies",  # tasks/data/_hub_copies_yaml: where local copies of hub datasets lie, no prompt text
    }
)
OTHER_KEYS = OPAQUE_KEYS | {
    "task",
    "tag",
    "group",
    "include",
    "class",
    "output_type",
    "custom_dataset",
    "test_split",
    "target_delimiter",
    "template_id",
    "prompt_style",
    "negation",
    "stages",
    "name",
    "parse",
    "score",
    "version",
    "causal_ctp",  # tasks/_variants_yaml: the conjunctions the CTP tasks are generated for
    "base_task",  # tasks/invariance: the lm-eval task wrapped (its prompt is lm-eval's own)
}
PROVENANCE_LINE = re.compile(r"^\s*#:?\s*Provenance:\s*\S", re.MULTILINE)
#: Module-level names that hold prompt text in tasks/*.py.
TEMPLATE_NAME = re.compile(r"TEMPLATE|EXAMPLE|^COT_|^FORMS|QUESTION$|^RELATIONS$|^CONJUNCTIONS$")
#: A provenance statement has to say one of these.
SOURCE = re.compile(r"verbatim|suite's own|Table \d+|Figure \d+|Appendix [A-Z]", re.IGNORECASE)


class _Loader(yaml.SafeLoader):
    """Reads lm-eval task YAML: ``!function x`` becomes the string ``"!function x"``."""


_Loader.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")


def yaml_files() -> list[Path]:
    return sorted(p for p in TASKS.rglob("*") if p.is_file() and (p.suffix == ".yaml" or p.name.endswith("_yaml")))


def yaml_keys(node: Any) -> list[str]:
    """Every key in a parsed YAML document, without walking prompt values or option blocks."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            found.append(key)
            if key not in PROMPT_KEYS and key not in OPAQUE_KEYS:
                found += yaml_keys(value)
    elif isinstance(node, list):
        for item in node:
            found += yaml_keys(item)
    return found


def keys_of(path: Path) -> list[str]:
    return yaml_keys(yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader))


def prompt_yaml_files() -> list[Path]:
    return [p for p in yaml_files() if PROMPT_KEYS & set(keys_of(p))]


def template_constants() -> list[tuple[Path, str, int]]:
    """(file, name, line) of every module-level assignment to a template-like name with text in it."""
    found = []
    for path in sorted(TASKS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            names = [t.id for t in targets if isinstance(t, ast.Name) and TEMPLATE_NAME.search(t.id)]
            texts = [
                n for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str) and " " in n.value
            ]
            if names and texts:
                found.extend((path, name, node.lineno) for name in names)
    return found


def test_the_scan_finds_the_templates() -> None:
    """Guards the guard: the patterns above still see the suite's prompt files and constants."""
    names = {p.relative_to(TASKS).as_posix() for p in prompt_yaml_files()}
    assert {"pairwise/summeval/_summeval_yaml", "pairwise/_pairwise_yaml", "gv/arithmetic_cot.yaml",
            "pairwise/caters/_caters_paraphrases_yaml", "pairwise/summeval/_summeval_paraphrases_yaml",
            "pairwise/noveleval/_noveleval_paraphrases_yaml", "causal/_ctp_yaml"} <= names  # fmt: skip
    constants = {(p.name, name) for p, name, _ in template_constants()}
    assert {("arithmetic.py", "COT_VALIDATOR_TEMPLATE"), ("prompts.py", "RANKING_TEMPLATE"),
            ("triviaqa.py", "TRUE_FALSE_VALIDATOR_TEMPLATE"), ("harmful.py", "GENERATOR_TEMPLATES"),
            ("plan_arithmetic.py", "_QUESTION"), ("plan_arithmetic.py", "RELATIONS")} <= constants  # fmt: skip


@pytest.mark.parametrize("path", yaml_files(), ids=lambda p: p.relative_to(TASKS).as_posix())
def test_every_yaml_key_is_classified(path: Path) -> None:
    """A key that is neither prompt-bearing nor known to hold none must be classified here first."""
    unknown = sorted(set(keys_of(path)) - PROMPT_KEYS - OTHER_KEYS)
    assert not unknown, f"{path}: classify {unknown} as PROMPT_KEYS or OTHER_KEYS in this test"


@pytest.mark.parametrize("path", prompt_yaml_files(), ids=lambda p: p.relative_to(TASKS).as_posix())
def test_every_prompt_yaml_states_its_provenance(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    match = PROVENANCE_LINE.search(text)
    assert match, f"{path}: defines prompts but has no '# Provenance:' comment"
    statement = "\n".join(line for line in text[match.start() :].splitlines()[:4] if line.lstrip().startswith("#"))
    assert SOURCE.search(statement) or "tasks/" in statement, f"{path}: provenance names no source: {statement!r}"


@pytest.mark.parametrize(
    ("path", "name", "line"),
    template_constants(),
    ids=lambda v: v if isinstance(v, str) else getattr(v, "name", str(v)),
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


@pytest.mark.parametrize(
    "body",
    [
        "prompts:\n  normal: 'Which is better?'\n",
        "paraphrases:\n  - normal: 'Which is better?'\n",
        "stages:\n  - name: g\n    prompts: !function m.f\n",
        "answer_instructions:\n  cot: 'Think step by step.'\n",
        "doc_to_text: 'Q: {{q}}'\n",
    ],
)
def test_a_file_without_provenance_fails(tmp_path: Path, body: str) -> None:
    """The check itself: a prompt YAML without the comment is caught, whichever key holds the prompt."""
    bad = tmp_path / "_bad_yaml"
    bad.write_text("# A task.\n" + body, encoding="utf-8")
    assert PROMPT_KEYS & set(keys_of(bad)) and not PROVENANCE_LINE.search(bad.read_text())
