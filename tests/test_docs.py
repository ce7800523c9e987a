"""The docs cannot drift: every shell command, task and model name, flag, path and relative link in
the Markdown docs is checked against the code, without running a model (``tests/docs_check.py``)."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import children  # the tests' one starter of child processes (tests/children.py)
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_check import Checker, commands, doc_files, shell_blocks  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
README_LIMIT = 12 * 1024
#: A reference to the history of the work ("issue 18", "stop 20", "PR #4015", "the last pass"), which
#: a reader cannot follow: the docs say what is, not how it came to be.
HISTORY = re.compile(
    r"\b(?:issues?|stops?|PR|pull request)\s*#?\d+|\bthe last pass\b|\bwas fixed\b|\bbefore the change\b",
    re.IGNORECASE,
)
_NAMES = re.compile(r"^(?:group|task): (logic_consistency\w+)\s*$", re.MULTILINE)
_PARAPHRASE = re.compile(r"_para\d\d$")


#: Paths the docs name that are not this repository's files.
NOT_OURS = {
    "tasks/pairwise/mydata/": "the example folder a reader creates to add a task",
    "tasks/pairwise/mydata/mydata.yaml": "the example task file a reader writes there",
    "tests/test_tasks.py": "lm-eval's own test file",
}
#: Tasks the docs' examples create in a folder of the reader's (docs/adding-a-task.md).
EXAMPLE_TASKS = {"logic_consistency_mydata": "the task of the external-folder example"}


#: Install lines the docs quote as what fails (a troubleshooting row), not as what to run.
SYMPTOMS = {"pip install logic-consistency": "docs/troubleshooting.md: no release is on an index yet"}


@pytest.fixture(scope="module")
def checker() -> Checker:
    return Checker(
        ROOT, not_ours=frozenset(NOT_OURS), example_tasks=frozenset(EXAMPLE_TASKS), symptoms=frozenset(SYMPTOMS)
    )


def test_every_doc_command_name_flag_path_and_link_exists(checker: Checker) -> None:
    files = doc_files(ROOT)
    assert {ROOT / "README.md", ROOT / "leaderboard" / "README.md", ROOT / "docs" / "README.md"} <= set(files)
    problems = [problem for path in files for problem in checker.check_file(path)]
    assert not problems, "\n".join(problems)


def test_every_task_family_folder_has_a_readme_naming_its_groups_and_tasks() -> None:
    families = [p.parent for p in (ROOT / "tasks").glob("*/_metrics_yaml")]
    assert {f.name for f in families} == {"pairwise", "gv", "causal", "invariance"}
    index = (ROOT / "tasks" / "README.md").read_text(encoding="utf-8")
    for family in families:
        readme = (family / "README.md").read_text(encoding="utf-8")
        assert f"]({family.name}/README.md)" in index, family.name
        for heading in ("### Paper", "### Citation", "### Groups, Tags, and Tasks", "### Checklist"):
            assert heading in readme, (family.name, heading)
        # every group and every task of the folder (paraphrase templates as a range) is named
        names = {m.group(1) for y in family.rglob("*.yaml") for m in _NAMES.finditer(y.read_text(encoding="utf-8"))}
        missing = sorted(n for n in names if f"`{n}`" not in readme and not _PARAPHRASE.search(n))
        assert not missing, (family.name, missing)


BAD_DOC = """\
# A doc with mistakes

See [the guide](docs/nowhere.md) and [quick start](#quick-start) and [that](#no-such-heading).

## Quick start

```bash
# a comment, then a continuation line and an env prefix
FOO=bar lm_eval --model lc-embedded --batch_size 8 \\
  --tasks logic_consistency_pairwise,logic_consistency_no_such_task
lm_eval --model no-such-model --tasks logic_consistency
lm_eval --model hf --taks logic_consistency
lm_eval --model hf --output results --tasks logic_consistency
logic-consistency no-such-command
logic-consistency plan --tasks logic_consistency --no-such-flag
logic-consistency model-path <model>
bash scripts/no_such_script.sh
```

See README, "No such section", README's "Quick start" and lm-eval's task_guide.md, "Parameters".
"""


def test_a_wrong_task_flag_model_subcommand_path_or_link_names_file_and_line(checker: Checker, tmp_path: Path) -> None:
    doc = tmp_path / "bad.md"
    doc.write_text(BAD_DOC, encoding="utf-8")
    problems = checker.check_file(doc)
    expected = {
        3: "docs/nowhere.md",
        9: "logic_consistency_no_such_task",
        11: "no-such-model",
        12: "--taks",
        13: "--output is an abbreviation",
        14: "no-such-command",
        15: "--no-such-flag",
        17: "scripts/no_such_script.sh",
        20: 'README, "No such section": no such section in README.md',
    }
    for line, fragment in expected.items():
        assert any(p.startswith(f"{doc}:{line}: ") and fragment in p for p in problems), (line, problems)
    assert any(p.startswith(f"{doc}:3: ") and "#no-such-heading" in p for p in problems), problems
    # the rest is right (a placeholder is not checked): nothing else is reported
    assert len(problems) == len(expected) + 1, problems


def test_commands_join_continuations_and_drop_comments_prompts_and_env_prefixes() -> None:
    text = textwrap.dedent(
        """\
        ```console
        $ A=1 B=2 lm_eval --tasks x \\
            --model hf  # trailing comment
        output line, not a command
        $ lm_eval ls tasks | grep y && echo http://h/#z
        ```
        """
    )
    got = [(c.line, c.words) for c in commands(Path("d.md"), text)]
    assert got == [
        (2, ["lm_eval", "--tasks", "x", "--model", "hf"]),
        (5, ["lm_eval", "ls", "tasks"]),
        (5, ["grep", "y"]),
        (5, ["echo", "http://h/#z"]),
    ]


def history_references(text: str) -> list[str]:
    """``"<line>: <match>"`` for every reference to the history of the work in ``text``."""
    return [f"{n}: {m.group(0)}" for n, line in enumerate(text.split("\n"), 1) for m in HISTORY.finditer(line)]


def test_the_readme_is_a_front_page_of_at_most_12_kib() -> None:
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes (limit {README_LIMIT}); move the detail into docs/"


def test_no_doc_cites_the_history_of_the_work() -> None:
    found = [
        f"{p.relative_to(ROOT)}:{ref}"
        for p in doc_files(ROOT)
        for ref in history_references(p.read_text(encoding="utf-8"))
    ]
    assert not found, "\n".join(found)


def test_history_references_are_found_and_ordinary_numbers_are_not() -> None:
    text = "fixed in issue 18\nsee stop 20 and PR #4015\nafter the last pass\n5 issues, 3 stops, 100 runs\n"
    assert history_references(text) == ["1: issue 18", "2: stop 20", "2: PR #4015", "3: the last pass"]


def _option_rows() -> dict[str, str]:
    """docs/running.md's options table: each option name (a row may name several) -> its row."""
    rows: dict[str, str] = {}
    text = (ROOT / "docs" / "running.md").read_text(encoding="utf-8")
    table = text[text.index("| option | tasks | default | meaning |") :].split("\n\n", 1)[0]
    for line in table.splitlines()[2:]:
        first = line.split("|")[1]
        for name in re.findall(r"`(\w+)`", first):
            rows[name] = line
    return rows


def test_the_options_table_is_the_declared_options() -> None:
    """Every declared option (``_options_yaml``) has a row of docs/running.md's options table and no
    other does; a row states the option's upper bound and every choice."""
    from logic_consistency.options import declared_options

    rows = _option_rows()
    declared = declared_options()
    assert set(rows) == set(declared)
    for name, arg in declared.items():
        row = rows[name]
        if arg.maximum is not None:
            bound = f"{arg.maximum:,}" if isinstance(arg.maximum, int) else f"{arg.maximum:g}"
            assert bound in row, f"{name}: the row does not state the bound {bound}"
        for choice in arg.choices or ():
            assert f"`{choice}`" in row, f"{name}: the row does not name the choice {choice!r}"


def test_a_here_document_is_the_text_of_a_file_not_commands() -> None:
    text = "```bash\ncat > f.yaml <<'EOF'\nlm_eval --no-such-flag\nEOF\ncat > g <<EOF\nx: $(pwd)\nEOF\nlm_eval ls tasks\n```\n"
    got = [(c.line, c.words[0]) for c in commands(Path("d.md"), text)]
    assert got == [(2, "cat"), (5, "cat"), (8, "lm_eval")]


def test_the_papers_bibtex_in_docs_citing_is_each_family_readmes() -> None:
    """docs/citing.md gathers the citations: each family README's BibTeX entry appears there verbatim."""
    citing = (ROOT / "docs" / "citing.md").read_text(encoding="utf-8")
    for family in ("pairwise", "gv", "causal", "invariance"):
        readme = (ROOT / "tasks" / family / "README.md").read_text(encoding="utf-8")
        (entry,) = re.findall(r"```bibtex\n(.*?)```", readme, re.DOTALL)
        assert entry.strip() in citing, family


def test_the_cluster_page_scripts_are_valid_bash() -> None:
    """docs/cluster.md's fenced scripts (the local cluster, the Slurm batch script) parse as bash."""
    text = (ROOT / "docs" / "cluster.md").read_text(encoding="utf-8")
    scripts = ["\n".join(lines) for _, language, lines in shell_blocks(text) if language == "bash"]
    assert len(scripts) >= 2 and any("#SBATCH" in script for script in scripts)
    for script in scripts:
        done = children.run(["bash", "-n"], input=script, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr


BAD_INSTALLS = """\
# Install lines that would fail

```bash
pip install 'logic-consistency[train]'
bash scripts/setup.sh train,trian
pip install -e '.[api,trian]'
.venv/bin/python -m pip install -e '.[api]'
pip install torch==2.0.0 -e .
.venv/uv/bin/uv pip install --python .venv/bin/python -e '.[train]'
bash scripts/setup.sh api,ray
```

From a clone: `pip install -e '.[ray]'`; or `pip install "logic-consistency[ray]"`.
"""


def test_an_install_line_that_would_fail_from_a_clone_names_file_and_line(checker: Checker, tmp_path: Path) -> None:
    doc = tmp_path / "installs.md"
    doc.write_text(BAD_INSTALLS, encoding="utf-8")
    problems = checker.check_file(doc)
    expected = {
        4: "no package index has logic-consistency",
        5: "scripts/setup.sh trian: not an extra setup.sh takes",
        6: "trian is not an extra of setup.cfg",
        7: "has no pip",
        8: "setup.cfg pins torch==2.13.0",
        13: "logic-consistency[ray]: no package index",
    }
    for line, fragment in expected.items():
        assert any(p.startswith(f"{doc}:{line}: ") and fragment in p for p in problems), (line, problems)
    assert len(problems) == len(expected), problems  # uv into setup.sh's .venv, and known extras, pass
